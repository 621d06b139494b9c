"""``postcompact-inject`` (SessionStart after a compaction): restore what compaction blurred.

Injects, inside ``<vault-postcompact>`` and within 1,200 tokens:

- the ``precompact-state.md`` that ``precompact-extract`` wrote (600 tokens);
- decisions of the last 7 days from the vault (400);
- antipatterns of the last 7 days (150);
- a BM25 search for the state's "Last User Request" (200).

Claude Code starts a session with ``source`` ``startup``, ``resume``, ``clear`` or
``compact``; the reference installs this hook for every start, which re-injects an old
state file into unrelated sessions, so here it answers only after a compaction (or when
the payload names no source at all). Every line of the state file, the state file as a
whole (an override split over two lines), and every vault title, path and snippet pass the
prompt-injection filter: a transcript can quote anything.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from memtrove.files import read_regular
from memtrove.hooks.events import HookEvent, HookResult, estimate_tokens
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.precompact import STATE_FILE
from memtrove.hooks.render import truncate
from memtrove.hooks.settings import HookSettings
from memtrove.hooks.transcript import memory_dirs
from memtrove.security.guard import sanitize, sanitize_lines
from memtrove.vault import Vault

__all__ = ["HOOK_NAME", "TOTAL_BUDGET", "frame", "read_state", "run"]

STATE_MAX_BYTES = 1 << 20  # precompact-extract writes a few KB

HOOK_NAME = "postcompact-inject"
EVENT_NAME = "SessionStart"
TOTAL_BUDGET, STATE_BUDGET, DECISIONS_BUDGET, ANTIPATTERN_BUDGET, VAULT_BUDGET = (
    1200,
    600,
    400,
    150,
    200,
)
RECENT_DAYS = 7
RECENT_SCAN = 200  # the most recently modified documents searched for recent decisions
HEADER = (
    "IMPORTANT: Context was just compacted. The following is authoritative\n"
    "and takes precedence over any paraphrased version in the compacted summary."
)
_REQUEST = re.compile(r"## Last User Request\n\n([\s\S]*?)(?:\n##|\Z)")


def frame(sections: Sequence[str]) -> str:
    """The injected block around ``sections``."""
    body = "\n\n---\n\n".join(sections)
    return f"<vault-postcompact>\n{HEADER}\n\n{body}\n</vault-postcompact>"


def read_state(event: HookEvent, settings: HookSettings) -> str:
    """The saved state without lines the injection filter rejects; "" when there is none,
    or when what is left still carries an injection read as one text (across lines)."""
    for folder in memory_dirs(event.transcript_path, event.cwd, settings.claude_dir):
        path = folder / STATE_FILE
        try:  # a FIFO or a device named like the state file is refused, never waited on
            text = read_regular(path, STATE_MAX_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        return "\n".join(sanitize_lines(text)).strip()
    return ""


def _lines(heading: str, lines: Sequence[str], budget: int) -> str | None:
    kept = [f"## {heading}", ""]
    used = 0
    for line in lines:
        cost = estimate_tokens(line)
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join(kept) if len(kept) > 2 else None


def _recent_sections(vault: Vault, now: datetime) -> list[str]:
    cutoff = (now - timedelta(days=RECENT_DAYS)).strftime("%Y-%m-%dT%H:%M:%S")
    recent = [d for d in vault.list(RECENT_SCAN) if d.modified_at >= cutoff]
    decisions, antipatterns = [], []
    for document in recent:
        title = sanitize(document.title)
        if title is None or "_PRIVATE/" in document.path:
            continue
        if document.content_type == "decision":
            decisions.append(f"- **{title}** ({document.modified_at[:10]})")
        elif document.content_type == "antipattern":
            antipatterns.append(f"- **Avoid:** {title} ({document.modified_at[:10]})")
    sections = [
        _lines("Recent Decisions (from vault)", decisions[:5], DECISIONS_BUDGET),
        _lines("Recent Antipatterns (avoid these)", antipatterns[:3], ANTIPATTERN_BUDGET),
    ]
    return [section for section in sections if section]


def _vault_section(vault: Vault, state: str) -> str | None:
    match = _REQUEST.search(state)
    query = match.group(1).strip()[:200] if match else ""
    if len(query) <= 10:
        return None
    lines = []
    for hit in vault.search(query, limit=3):
        key = f"{hit.collection}/{hit.path}"
        title, snippet = sanitize(hit.title), sanitize(truncate(hit.snippet, 150))
        if title is None or snippet is None or sanitize(key) is None or "_PRIVATE/" in key:
            continue
        lines.append(f"- **{title}** ({key}): {snippet}")
    return _lines("Relevant Vault Context", lines, VAULT_BUDGET)


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    """Answer one SessionStart payload; empty unless it follows a compaction."""
    if event.source and event.source != "compact":
        return HookResult()
    if event.source == "compact" and settings.queue_dir.is_dir():  # the nudge may come back
        from memtrove.memory.queue import ExtractionQueue

        with contextlib.suppress(OSError):
            ExtractionQueue(settings.queue_dir).end_compaction(event.session_id)
    sections: list[str] = []
    state = read_state(event, settings)
    if state:
        sections.append(truncate(state, STATE_BUDGET * 4))
    vault = open_vault()
    sections += _recent_sections(vault, datetime.now(UTC))
    if state:
        vault_section = _vault_section(vault, state)
        if vault_section:
            sections.append(vault_section)
    if not sections:
        return HookResult()
    while len(sections) > 1 and estimate_tokens(frame(sections)) > TOTAL_BUDGET:
        sections.pop()
    context = frame(sections)
    if estimate_tokens(context) > TOTAL_BUDGET:
        return HookResult()
    result = HookResult(context=context)
    result.after.append(
        lambda: vault.sessions.log_context_usage(
            event.session_id or "unknown", HOOK_NAME, estimated_tokens=estimate_tokens(context)
        )
    )
    return result
