"""The curator report and ``curator-nudge`` (SessionStart).

``memtrove curate`` checks the vault's upkeep and writes
``$XDG_CACHE_HOME/memtrove/curator-report.json``::

    {"timestamp": "2026-01-31T12:00:00Z", "vault": "/home/me/.cache/memtrove/vault.sqlite",
     "health": {"documents": 812, "pending_embeds": 3, "failed_embeds": 0,
                "stale_documents": 4, "snoozed": 2, "pinned": 5, "invalidated": 0},
     "stale": ["_memtrove/handoffs/2026-01-02.md", ...],
     "actions": ["3 documents wait for embedding: run `memtrove embed`", ...]}

Staleness follows each collection's rule (:mod:`memtrove.index.staleness`: agent-written
documents only by default, reference collections never, checkout mtimes are no date). The
curator never proposes forgetting anything in bulk: stale documents are to be reviewed one
at a time, and pinned or snoozed (which also takes them off the count).

At session start ``curator-nudge`` shows the actions inside ``<vault-curator>`` (200
tokens), or a nudge to run ``memtrove curate`` when the report is missing, belongs to
another vault, or is more than 7 days old. A fresh report without actions injects nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from memtrove.files import write_atomic
from memtrove.hooks.events import HookEvent, HookResult, estimate_tokens
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.locations import shown_location
from memtrove.security.guard import sanitize
from memtrove.vault import Vault

__all__ = [
    "BUDGET",
    "HOOK_NAME",
    "REPORT_FILE",
    "STALE_DAYS",
    "build_report",
    "nudge_text",
    "read_report",
    "report_path",
    "run",
    "write_report",
]

HOOK_NAME = "curator-nudge"
EVENT_NAME = "SessionStart"
REPORT_FILE = "curator-report.json"
STALE_DAYS = 7
BUDGET = 200


class IndexCounts(Protocol):
    """The fields of ``vault.documents.index_stats()`` the report reads."""

    @property
    def documents(self) -> int: ...
    @property
    def pending_embeds(self) -> int: ...
    @property
    def failed_embeds(self) -> int: ...
    @property
    def stale_documents(self) -> int: ...


class LifecycleCounts(Protocol):
    """The fields of ``vault.lifecycle.status()`` the report reads."""

    @property
    def snoozed(self) -> int: ...
    @property
    def pinned(self) -> int: ...
    @property
    def invalidated(self) -> int: ...


def report_path(cache_dir: Path) -> Path:
    """Where the report lives: ``<cache dir>/curator-report.json``."""
    return cache_dir / REPORT_FILE


def build_report(
    vault_path: Path | str,
    stats: IndexCounts,
    lifecycle: LifecycleCounts,
    now: datetime,
    stale: Sequence[str] = (),
) -> dict[str, Any]:
    """The report for one vault: its counts and the actions they suggest; ``stale`` names
    (``collection/path``) the oldest stale documents, to review one at a time. The vault is
    named as it is shown (a URL without its password)."""
    health = {
        "documents": stats.documents,
        "pending_embeds": stats.pending_embeds,
        "failed_embeds": stats.failed_embeds,
        "stale_documents": stats.stale_documents,
        "snoozed": lifecycle.snoozed,
        "pinned": lifecycle.pinned,
        "invalidated": lifecycle.invalidated,
    }
    actions: list[str] = []
    if stats.failed_embeds:
        actions.append(
            f"{stats.failed_embeds} documents failed to embed: check `memtrove doctor`, "
            "then run `memtrove embed`"
        )
    if stats.pending_embeds:
        actions.append(f"{stats.pending_embeds} documents wait for embedding: run `memtrove embed`")
    if stats.stale_documents:
        count = stats.stale_documents
        example = f" (oldest: {stale[0]})" if stale else ""
        actions.append(
            f"{count} document{'s look' if count != 1 else ' looks'} "
            f"stale{example}: review one at a time when it comes up; pin it if it still "
            "holds, or snooze it"
        )
    if lifecycle.snoozed:
        actions.append(f"{lifecycle.snoozed} documents are snoozed: unsnooze any that matter again")
    return {
        "timestamp": now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "vault": shown_location(vault_path),
        "health": health,
        "stale": list(stale),
        "actions": actions,
    }


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Write the report atomically (a hook may be reading it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, ensure_ascii=False, indent=2) + "\n"
    write_atomic(path, text, prefix=".curator-")


def read_report(path: Path) -> dict[str, Any] | None:
    """The report, or None when it is missing; ValueError when it is not a report."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("timestamp"), str):
        raise ValueError(f"{path} is not a curator report")
    return data


def nudge_text(report: dict[str, Any] | None, vault_path: Path | str, now: datetime) -> str:
    """The ``<vault-curator>`` block for a report (None: missing), or "" for none."""
    if report is None or report.get("vault") not in (None, shown_location(vault_path)):
        return (
            "<vault-curator>\nCurator has never run. Consider: `memtrove curate`.\n</vault-curator>"
        )
    try:
        made = datetime.fromisoformat(str(report["timestamp"]).replace("Z", "+00:00"))
    except ValueError:
        return ""
    days = int((now - (made if made.tzinfo else made.replace(tzinfo=UTC))).total_seconds() // 86400)
    if days > STALE_DAYS:
        return (
            f"<vault-curator>\nCurator report is {days}d old. Consider: `memtrove curate`.\n"
            "</vault-curator>"
        )
    actions = report.get("actions")
    if not isinstance(actions, list):
        return ""
    head = f"**Curator ({str(report['timestamp'])[:10]}):**"
    frame_tokens = estimate_tokens(f"<vault-curator>\n{head}\n</vault-curator>")
    lines = [head]
    used = frame_tokens
    for action in actions:
        line = sanitize(f"- {action}") if isinstance(action, str) else None
        if line is None:
            continue
        if used + estimate_tokens(line + "\n") > BUDGET:
            break
        lines.append(line)
        used += estimate_tokens(line + "\n")
    if len(lines) == 1:
        return ""
    return "<vault-curator>\n" + "\n".join(lines) + "\n</vault-curator>"


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    """Answer one SessionStart payload with the curator's actions or a nudge."""
    try:
        report = read_report(report_path(settings.cache_dir))
    except ValueError as error:
        log.warning(str(error))
        return HookResult()
    context = nudge_text(report, settings.vault_path, datetime.now(UTC))
    result = HookResult(context=context)
    if context and event.session_id:
        result.after.append(
            lambda: open_vault().sessions.log_context_usage(
                event.session_id, HOOK_NAME, estimated_tokens=estimate_tokens(context)
            )
        )
    return result
