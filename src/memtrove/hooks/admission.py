"""Which discovered documents context-surfacing may inject at all, and why the others may
not (step 6 of :mod:`memtrove.hooks.context_surfacing`; the injection audit shows the
reason):

    private             under ``_PRIVATE/``, ``experiments/`` or ``_memtrove/`` (but for what
                        the session capture distilled: decisions, antipatterns, deductions)
    surface: false      its collection is configured not to surface
    gone                removed since it was found
    snoozed             snoozed until a later moment
    noise               too short to help, or an agent's "I don't recall"
    injection guard     its title, path or text reads as instructions to the model
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memtrove.errors import DocumentNotFoundError
from memtrove.patterns import LazyPattern
from memtrove.results import Document
from memtrove.security.guard import find_injection, sanitize
from memtrove.vault import Vault

__all__ = ["FILTERED_PATHS", "SURFACED_INTERNAL", "admit", "is_noise", "is_snoozed"]

FILTERED_PATHS = ("_PRIVATE/", "experiments/", "_memtrove/")
# What the session capture distilled is surfaced like any note; the rest of ``_memtrove``
# (raw observations, handoffs, memory-store entries) is not
SURFACED_INTERNAL = (
    "_memtrove/agent/decisions/",
    "_memtrove/agent/antipatterns/",
    "_memtrove/agent/deductions/",
)
_DENIALS = LazyPattern(
    r"i don'?t have (?:any )?(?:information|data|memory|record)|i'?m not sure about"
    r"|i don'?t recall|i don'?t remember|no (?:relevant )?memories found"
    r"|i don'?t have access to",
    re.I,
)


def is_noise(body: str) -> bool:
    """A body too short to help (under 10 characters) or an agent's "I don't recall"."""
    text = body.strip()
    return len(text) < 10 or _DENIALS.search(text[:2000]) is not None


def is_snoozed(document: Document, now: datetime) -> bool:
    """Whether ``document`` is snoozed past ``now`` (an unreadable date is not)."""
    if not document.snoozed_until:
        return False
    try:
        until = datetime.fromisoformat(document.snoozed_until.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (until if until.tzinfo else until.replace(tzinfo=UTC)) > now


def admit(
    vault: Vault, key: str, now: datetime, unsurfaced: frozenset[str] = frozenset()
) -> Document | str:
    """The candidate's document when it may be injected, else why not (the reasons of the
    module docstring); ``unsurfaced`` names the collections set ``surface: false``."""
    distilled = key.startswith(SURFACED_INTERNAL)
    if any(
        marker in key for marker in FILTERED_PATHS if not (distilled and marker == "_memtrove/")
    ):
        return "private"
    if key.partition("/")[0] in unsurfaced:
        return "surface: false"
    try:
        document = vault.get(key)
    except DocumentNotFoundError:
        return "gone"
    if is_snoozed(document, now):
        return "snoozed"
    if is_noise(document.body):
        return "noise"
    if sanitize(document.title) is None or sanitize(key) is None:
        return "injection guard"
    if find_injection(document.body) is not None:
        return "injection guard"
    return document
