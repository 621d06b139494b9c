"""``session-bootstrap`` (SessionStart, opt-in): where the last session left off.

Registers the session in ``session_log``, then injects ``<vault-session>`` with, within the
inventory's budgets (estimated tokens, ``ceil(characters / 4)``; 2000 in all):

- the user profile (800): ``_memtrove/profile.md``, rebuilt first when it is stale
  (missing, or 5 sessions old; see :mod:`memtrove.capture.profile`);
- the latest handoff of another session (600): its document, frontmatter left out;
- decisions of the last 7 days (400): titles and dates;
- stale notes to review (200): titles and paths, oldest first.

Every line passes the prompt-injection filter (a line that fails is dropped, and
a handoff whose lines still carry one read together is left out whole) and is escaped;
secrets are redacted. Not installed by ``setup hooks``: add it to the
SessionStart hooks by hand (``memtrove hook session-bootstrap``, timeout 5). Unlike the
reference product, whose bootstrap reaches the model only through ``surface --bootstrap``,
the context goes out as SessionStart's ``additionalContext``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memtrove.hooks.events import HookEvent, HookResult, estimate_tokens
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.render import truncate
from memtrove.hooks.settings import HookSettings
from memtrove.security.guard import escape, sanitize, sanitize_lines
from memtrove.vault import Vault

__all__ = ["HOOK_NAME", "TOTAL_BUDGET", "build_context", "run"]

HOOK_NAME = "session-bootstrap"
TOTAL_BUDGET, HANDOFF_BUDGET, DECISIONS_BUDGET, STALE_BUDGET = 2000, 600, 400, 200
PROFILE_BUDGET = 800
RECENT_DAYS = 7


def _within(heading: str, lines: Sequence[str], budget: int) -> str | None:
    kept = [f"## {heading}"]
    used = estimate_tokens(kept[0])
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join(kept) if len(kept) > 1 else None


def _handoff(vault: Vault, session_id: str) -> str | None:
    from memtrove.hooks.session_start import readable_handoffs

    for handoff, body in readable_handoffs(vault, session_id):
        lines = [line for line in sanitize_lines(body.strip()) if line.strip()]
        heading = f"Last session ({handoff.ended_at[:10]}, {handoff.handoff_path})"
        section = _within(escape(heading), lines, HANDOFF_BUDGET)
        if section:
            return truncate(section, HANDOFF_BUDGET * 4)
    return None


def build_context(vault: Vault, session_id: str) -> str:
    """The ``<vault-session>`` block, or "" when there is nothing to say."""
    from memtrove.hooks.user_profile import profile_lines

    sections = []
    profile = profile_lines(vault, "## User profile", PROFILE_BUDGET, refresh=True)
    if profile:
        sections.append("\n".join(profile))
    handoff = _handoff(vault, session_id)
    if handoff:
        sections.append(handoff)
    decisions = []
    for document in vault.capture.recent_decisions(RECENT_DAYS, 10):
        title = sanitize(document.title)
        if title is not None and "_PRIVATE/" not in document.path:
            decisions.append(f"- **{title}** ({document.modified_at[:10]})")
    section = _within(f"Decisions of the last {RECENT_DAYS} days", decisions, DECISIONS_BUDGET)
    if section:
        sections.append(section)
    stale = []
    for document in vault.stale_documents(5):
        title, key = sanitize(document.title), sanitize(f"{document.collection}/{document.path}")
        if title is not None and key is not None and "_PRIVATE/" not in key:
            stale.append(f"- {title} ({key}, {document.modified_at[:10]})")
    section = _within("Stale notes (review, then pin or snooze)", stale, STALE_BUDGET)
    if section:
        sections.append(section)
    if not sections:
        return ""
    context = "<vault-session>\n" + "\n\n".join(sections) + "\n</vault-session>"
    while estimate_tokens(context) > TOTAL_BUDGET and len(sections) > 1:
        sections.pop()
        context = "<vault-session>\n" + "\n\n".join(sections) + "\n</vault-session>"
    return context if estimate_tokens(context) <= TOTAL_BUDGET else ""


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    vault = open_vault()
    if event.session_id:
        try:
            import socket

            vault.capture.register_session(event.session_id, machine=socket.gethostname())
        except Exception as error:  # best-effort: the context still goes out
            log.warning(f"session not registered: {type(error).__name__}: {error}")
    context = build_context(vault, event.session_id)
    result = HookResult(context=context)
    if context:
        result.after.append(
            lambda: vault.sessions.log_context_usage(
                event.session_id or "unknown", HOOK_NAME, estimated_tokens=estimate_tokens(context)
            )
        )
    return result
