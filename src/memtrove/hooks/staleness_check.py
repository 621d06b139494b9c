"""``staleness-check`` (SessionStart, opt-in): the notes due for review.

Injects ``<vault-staleness>`` naming up to :data:`LIMIT` stale documents (250 estimated
tokens in all, ``ceil(characters / 4)``), those whose frontmatter ``review_by`` date has
come first, then the others oldest first::

    <vault-staleness>
    Notes due for review (check each: update it, pin it if it still holds, or snooze it):
    - **Token refresh runbook** (docs/runbooks/refresh.md): review by 2026-03-01
    - **Handoff 2026-01-02** (_memtrove/handoffs/2026-01-02-ab12cd34.md): unchanged since 2026-01-02
    </vault-staleness>

Which documents are stale is :mod:`memtrove.index.staleness`'s rule, the one ``curate``,
``status`` and ``session-bootstrap`` use: a document past its own ``review_by`` date, or
older than its collection's ``stale_after_days`` (by default only what agents write:
handoffs, progress logs and the internal collection, after 90 days). The reference
product flags every document unmodified for 30 days; here a folder of reference notes is
never nagged about unless its collection asks (``stale_after_days: 30``). Pinned, snoozed
and invalidated documents are never listed.

Nothing under ``_PRIVATE/`` and nothing of a ``surface: false`` collection is named; every
title and path passes the prompt-injection filter (an entry that fails is dropped) and is
escaped, secrets redacted. With ``dry_run: false`` in the ``lifecycle:`` policy of
``config.yaml``, the hook then applies the policy, after its answer, as ``memtrove
lifecycle sweep --apply`` does (archiving, and purging when ``purge_after_days`` is set).

Not installed by ``setup hooks`` (the reference product does not install it either): add
``memtrove hook staleness-check`` to the SessionStart hooks by hand (timeout 5). Unlike the
reference product, whose hook answers without context, the block goes out as SessionStart's
``additionalContext``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from memtrove.errors import MemtroveError
from memtrove.hooks.events import HookEvent, HookResult, estimate_tokens
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.results import DocumentSummary
from memtrove.security.guard import sanitize
from memtrove.vault import Vault

__all__ = ["BUDGET", "HEADING", "HOOK_NAME", "LIMIT", "build_context", "run"]

HOOK_NAME = "staleness-check"
BUDGET = 250
LIMIT = 5
HEADING = "Notes due for review (check each: update it, pin it if it still holds, or snooze it):"
_OPEN, _CLOSE = "<vault-staleness>", "</vault-staleness>"


def _reason(vault: Vault, summary: DocumentSummary, today: str) -> str:
    """Why the document is listed: its passed ``review_by``, else the date it dates from."""
    try:
        document = vault.get(f"{summary.collection}/{summary.path}")
    except MemtroveError:  # gone since it was listed
        return f"unchanged since {summary.modified_at[:10]}"
    if document.review_by and document.review_by <= today:
        return f"review by {document.review_by}"
    return f"unchanged since {(document.authored_at or document.modified_at)[:10]}"


def stale_lines(vault: Vault, now: datetime) -> list[str]:
    """One line per stale document that may be named (module doc), in the listing's order."""
    try:
        unsurfaced = vault.unsurfaced_collections()
    except MemtroveError:  # a broken config.yaml costs the setting, never the answer
        unsurfaced = frozenset()
    today = now.astimezone(UTC).date().isoformat()
    lines = []
    for summary in vault.stale_documents(LIMIT):
        key = f"{summary.collection}/{summary.path}"
        if "_PRIVATE/" in key or summary.collection in unsurfaced:
            continue
        title, shown = sanitize(" ".join(summary.title.split())), sanitize(key)
        if title is None or shown is None:
            continue
        reason = sanitize(_reason(vault, summary, today))
        if reason is not None:
            lines.append(f"- **{title}** ({shown}): {reason}")
    return lines


def build_context(lines: Sequence[str]) -> str:
    """The ``<vault-staleness>`` block with as many of ``lines`` as fit the budget, or ""."""
    kept: list[str] = []
    used = estimate_tokens(f"{_OPEN}\n{HEADING}\n{_CLOSE}")
    for line in lines:
        cost = estimate_tokens(line + "\n")
        if used + cost > BUDGET:
            break
        kept.append(line)
        used += cost
    if not kept:
        return ""
    return "\n".join([_OPEN, HEADING, *kept, _CLOSE])


def _apply_policy(vault: Vault, log: HookLog) -> None:
    """Apply the lifecycle policy when it says ``dry_run: false``."""
    try:
        policy = vault.lifecycle.policy()
    except MemtroveError as error:
        log.warning(f"lifecycle policy not applied: {error}")
        return
    if policy.dry_run:
        return
    report = vault.lifecycle.sweep(apply=True)
    if report.archived or report.purged:
        log.info(f"lifecycle policy applied: {report.archived} archived, {report.purged} purged")


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    """Answer one SessionStart payload with the notes due for review."""
    vault = open_vault()
    context = build_context(stale_lines(vault, datetime.now(UTC)))
    result = HookResult(context=context)
    if context:
        result.after.append(
            lambda: vault.sessions.log_context_usage(
                event.session_id or "unknown", HOOK_NAME, estimated_tokens=estimate_tokens(context)
            )
        )
    result.after.append(lambda: _apply_policy(vault, log))
    return result
