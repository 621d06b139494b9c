"""The user profile as the SessionStart hooks inject it (see :mod:`memtrove.capture.profile`).

``session-start`` shows the profile as written (``<vault-profile>``, within
:data:`SESSION_START_BUDGET` tokens); ``session-bootstrap`` first rebuilds it when it is
stale (missing, or 5 sessions old), then puts it first in ``<vault-session>`` within the
reference's 800 tokens. Every line passes the prompt-injection filter and is escaped; the
lines of a part that read as an override together are left out whole.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from memtrove.hooks.events import estimate_tokens

if TYPE_CHECKING:
    from memtrove.capture.profile import UserProfile
    from memtrove.vault import Vault

__all__ = ["SESSION_START_BUDGET", "profile_lines", "session_start_block"]

SESSION_START_BUDGET = 300  # tokens


def _lines(profile: UserProfile) -> list[str]:
    from memtrove.security.guard import sanitize_lines

    lines: list[str] = []
    for heading, items in (("Known context:", profile.known), ("Current focus:", profile.current)):
        kept = sanitize_lines("\n".join(f"- {item}" for item in items))
        if kept:
            lines += [heading, *kept]
    return lines


def profile_lines(vault: Vault, heading: str, budget: int, *, refresh: bool = False) -> list[str]:
    """``heading`` and the profile's lines within ``budget`` tokens (a part that does not
    fit whole is cut line by line), or [] when there is no profile; with ``refresh`` a
    stale profile is rebuilt first (best-effort: a busy vault keeps the old one)."""
    from memtrove.vault.profile import profile_area

    area = profile_area(vault)
    if refresh:  # a busy or read-only vault keeps the old profile
        with contextlib.suppress(Exception):
            area.refresh(embed=False, retry_seconds=0)
    profile = area.current()
    if profile is None:
        return []
    kept = [heading]
    used = estimate_tokens(heading)
    for line in _lines(profile):
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    if len(kept) > 1 and kept[-1].endswith(":"):
        kept.pop()  # a part's heading without a line of it
    return kept if len(kept) > 1 else []


def session_start_block(vault: Vault) -> str:
    """``<vault-profile>`` with the profile as written, or "" when there is none."""
    tags = ("<vault-profile>\n", "\n</vault-profile>")
    budget = SESSION_START_BUDGET - estimate_tokens("".join(tags))
    lines = profile_lines(vault, "## User profile", budget)
    return tags[0] + "\n".join(lines) + tags[1] if lines else ""
