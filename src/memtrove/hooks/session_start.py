"""``session-start`` (SessionStart): a reminder of the memory store, plus its hygiene.

The reminder names the project store (from the session's working directory: its git
repository, else the folder) and the tools to use. The hygiene report of the project and
global stores follows only when something needs tending; a healthy store adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memtrove.hooks.events import HookEvent, HookResult
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.memory.git import project_store_for
from memtrove.memory.slugs import GLOBAL_STORE, store_name
from memtrove.vault import Vault

__all__ = ["reminder", "run"]


def reminder(project_store: str) -> str:
    return (
        "<memtrove-memory>Your memory store is memtrove: this project's entries are in store "
        f"{project_store!r}, shared ones in {GLOBAL_STORE!r}. Before relying on past decisions, "
        "preferences or conventions, call memory_recall; when you learn something durable "
        "(a decision, a preference, a gotcha), save it with memory_remember(label, content)."
        "</memtrove-memory>"
    )


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    folder = Path(event.cwd) if event.cwd and Path(event.cwd).is_dir() else None
    project = store_name(project_store_for(folder)) if folder else GLOBAL_STORE
    parts = [reminder(project)]
    lines: list[str] = []
    try:
        vault = open_vault()
        for store in dict.fromkeys((project, GLOBAL_STORE)):
            lines.extend(vault.hygiene(store=store, worktree=folder).lines())
    except Exception as error:  # the reminder still goes out
        log.warning(f"hygiene skipped: {type(error).__name__}: {error}")
    if lines:
        parts.append(
            "<memory-hygiene>When convenient, tend the memory store:\n"
            + "\n".join(lines)
            + "\n</memory-hygiene>"
        )
    return HookResult(context="\n".join(parts))
