"""``session-start`` (SessionStart): where the last session of this project left off, a
reminder of the memory store, and its hygiene.

- **The last handoff** of this project (the same git repository, else the same folder; see
  :func:`project_of`), another session's, when one was written: what was asked, its next
  steps and open questions first, then what was done and decided, within
  :data:`HANDOFF_BUDGET` tokens, inside ``<vault-session>``. Every line passes the
  prompt-injection guard (a handoff whose lines read as an override together is left out
  whole). A project with no handoff yet adds nothing.
- **The user profile** (``_memtrove/profile.md``, as ``memtrove profile rebuild`` or
  ``update`` last wrote it) within 300 tokens, inside ``<vault-profile>`` (see
  :mod:`~memtrove.hooks.user_profile`); a vault without one adds nothing.
- **The reminder** names the project store and the tools to use.
- **The hygiene report** of the project and global stores follows only when something needs
  tending; a healthy store adds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memtrove.hooks.events import HookEvent, HookResult, estimate_tokens
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.memory.git import project_store_for
from memtrove.memory.slugs import GLOBAL_STORE, store_name
from memtrove.vault import Vault

if TYPE_CHECKING:
    from memtrove.lifecycle.sessions import Handoff

__all__ = ["HANDOFF_BUDGET", "last_handoff", "project_of", "readable_handoffs", "reminder", "run"]

HANDOFF_BUDGET = 300  # tokens
# The handoff's sections, most useful to a session starting first.
_ORDER = ("Next steps", "Open questions", "Asked", "Done", "Decided", "Files changed")
_SECTION = re.compile(r"^## (.+)$", re.M)


def project_of(event: HookEvent) -> str:
    """The project store's name of the session's folder (its repository), else global."""
    folder = Path(event.cwd) if event.cwd and Path(event.cwd).is_dir() else None
    return store_name(project_store_for(folder)) if folder else GLOBAL_STORE


def reminder(project_store: str) -> str:
    return (
        "<memtrove-memory>Your memory store is memtrove: this project's entries are in store "
        f"{project_store!r}, shared ones in {GLOBAL_STORE!r}. Before relying on past decisions, "
        "preferences or conventions, call memory_recall; when you learn something durable "
        "(a decision, a preference, a gotcha), save it with memory_remember(label, content)."
        "</memtrove-memory>"
    )


def _sections(body: str) -> tuple[str, dict[str, list[str]]]:
    """The handoff's title and its sections' lines (empty lines dropped)."""
    parts = _SECTION.split(body.strip())
    title = next((line[2:] for line in parts[0].splitlines() if line.startswith("# ")), "")
    sections = {
        heading.strip(): [line for line in content.splitlines() if line.strip()]
        for heading, content in zip(parts[1::2], parts[2::2], strict=False)
    }
    return title.strip(), sections


def readable_handoffs(
    vault: Vault, session_id: str, project: str | None = None
) -> Iterator[tuple[Handoff, str]]:
    """The newest handoffs of other sessions (of ``project``, when given) with their text,
    frontmatter left out; one that was forgotten or archived since is passed over."""
    from memtrove.retrieval.presentation import strip_frontmatter

    for handoff in vault.capture.latest_handoffs(3, exclude_session=session_id, project=project):
        try:
            body = vault.get(handoff.handoff_path).body
        except Exception:  # deleted, forgotten or archived since: try the one before
            continue
        yield handoff, strip_frontmatter(body)


def last_handoff(vault: Vault, session_id: str, project: str) -> str:
    """The ``<vault-session>`` block of the project's last handoff, or ""."""
    from memtrove.security.guard import escape, sanitize, sanitize_lines

    for handoff, body in readable_handoffs(vault, session_id, project):
        title, sections = _sections(body)
        lines = [f"## Last session in this project ({handoff.ended_at[:10]}): {title}"]
        if sanitize(lines[0]) is None:
            continue
        lines[0] = escape(lines[0])
        used = estimate_tokens(lines[0])
        for heading in _ORDER:
            kept = sanitize_lines("\n".join(sections.get(heading, ())))
            block = [f"{heading}:", *kept] if kept else []
            cost = estimate_tokens("\n".join(block)) + 1
            if not block or used + cost > HANDOFF_BUDGET:
                continue
            lines += block
            used += cost
        lines.append(f"(the whole handoff: {escape(handoff.handoff_path)})")
        return "<vault-session>\n" + "\n".join(lines) + "\n</vault-session>"
    return ""


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    folder = Path(event.cwd) if event.cwd and Path(event.cwd).is_dir() else None
    project = project_of(event)
    parts: list[str] = []
    lines: list[str] = []
    try:
        vault = open_vault()
        if event.session_id:
            try:  # session_log, with the host the session runs on
                import socket

                vault.capture.register_session(event.session_id, machine=socket.gethostname())
            except Exception as error:  # best-effort: the context still goes out
                log.warning(f"session not registered: {type(error).__name__}: {error}")
        try:
            handoff = last_handoff(vault, event.session_id, project)
        except Exception as error:  # the rest still goes out
            log.warning(f"last handoff skipped: {type(error).__name__}: {error}")
            handoff = ""
        if handoff:
            parts.append(handoff)
        try:
            from memtrove.hooks.user_profile import session_start_block

            profile = session_start_block(vault)
        except Exception as error:  # the rest still goes out
            log.warning(f"user profile skipped: {type(error).__name__}: {error}")
            profile = ""
        if profile:
            parts.append(profile)
        for store in dict.fromkeys((project, GLOBAL_STORE)):
            lines.extend(vault.memory.hygiene(store=store, worktree=folder).lines())
    except Exception as error:  # the reminder still goes out
        log.warning(f"hygiene skipped: {type(error).__name__}: {error}")
    parts.append(reminder(project))
    if lines:
        parts.append(
            "<memory-hygiene>When convenient, tend the memory store:\n"
            + "\n".join(lines)
            + "\n</memory-hygiene>"
        )
    return HookResult(context="\n".join(parts))
