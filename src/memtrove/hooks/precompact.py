"""``precompact-extract`` (PreCompact): save the session's working state before compaction.

Compaction paraphrases the conversation; what was asked, decided and changed can blur.
Before it runs, this hook reads the transcript's last 200 messages and writes, by regular
expressions only (no model), ``precompact-state.md`` into Claude Code's auto-memory
folder of the project::

    # Pre-Compaction State
    ## Last User Request
    ## Key Decisions This Session      (ranked by overlap with the last request)
    ## Open Questions / Unresolved
    ## Files Modified This Session

``postcompact-inject`` reads it back after compaction. When a collection covers that
folder it is re-indexed, so the state is searchable at once; a ``context_usage`` row
records the run. PreCompact takes no context, so the answer is the plain one.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from memtrove.files import write_atomic
from memtrove.hooks.events import HookEvent, HookResult, estimate_tokens
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.hooks.transcript import Message, memory_dirs, read_transcript
from memtrove.security.redaction import redact_text
from memtrove.vault import Vault

__all__ = [
    "HOOK_NAME",
    "STATE_FILE",
    "build_state",
    "extract_decisions",
    "extract_files",
    "extract_questions",
    "last_user_request",
    "run",
]

HOOK_NAME = "precompact-extract"
STATE_FILE = "precompact-state.md"
MAX_DECISIONS, MAX_QUESTIONS, MAX_FILES = 15, 10, 30
REQUEST_CHARS = 500

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION = re.compile(
    r"\b(?:decided|decision|we(?:'ll| will) (?:use|go with|keep|switch)|going with|settled on"
    r"|chose|opted (?:for|to)|agreed (?:to|on)|switch(?:ed|ing)? to|instead of|the plan is"
    r"|let'?s go with|we should use)\b",
    re.I,
)
_QUESTIONS = (
    re.compile(
        r"\b(?:should we|do you want|which (?:approach|option)|how should|what about)\b[^.!?\n]*\?",
        re.I,
    ),
    re.compile(
        r"\b(?:TODO|FIXME|HACK|open question|unresolved|needs?\s+(?:investigation|decision))\b"
        r"[^.!?\n]*",
        re.I,
    ),
)
_FILE_PATTERNS = (
    re.compile(
        r'\[tool_use name="(?:Edit|Write|MultiEdit|NotebookEdit)"[^\]]*\] \{[^\n]*?'
        r'"(?:file_path|notebook_path)": "([^"]+)"'
    ),
    re.compile(r"(?:Created|Modified|Wrote|Updated|Edited)\s+['\"`]?([/~][^\s'\"`,;]+)"),
)
_TOOL_OUTPUT = re.compile(
    r"Result of (?:calling )?(?:the )?(?:Read|Grep|Glob|Bash|Write|Edit|NotebookEdit) tool[^\n]*\n"
    r"(?:[ \t]+[^\n]*\n)*",
    re.I,
)
_NUMBERED_DUMP = re.compile(r"(?:^ *\d+→[^\n]*\n){5,}", re.M)
_NOT_A_REQUEST = ("[tool_result", "<command-", "<local-command", "Caveat:", "<system-reminder")


def _prune(content: str) -> str:
    """An assistant message without the bulk of tool output and file dumps."""
    return _NUMBERED_DUMP.sub("[file content pruned]\n", _TOOL_OUTPUT.sub("", content))


def last_user_request(messages: Sequence[Message]) -> str:
    """The last thing the user typed (not a tool result or command echo), 500 characters."""
    for message in reversed(messages):
        text = message.content.strip()
        if message.role == "user" and len(text) > 10 and not text.startswith(_NOT_A_REQUEST):
            return text[:REQUEST_CHARS]
    return ""


def extract_decisions(messages: Sequence[Message], request: str = "") -> list[str]:
    """Decision sentences of the assistant, most related to ``request`` first."""
    seen: set[str] = set()
    found: list[str] = []
    for message in messages:
        if message.role != "assistant":
            continue
        for sentence in _SENTENCE.split(_prune(message.content)):
            text = " ".join(sentence.split()).lstrip("-*• ")
            key = text[:60].lower()
            if 20 <= len(text) <= 300 and _DECISION.search(text) and key not in seen:
                seen.add(key)
                found.append(text)
    terms = {word for word in request.lower().split() if len(word) > 3}
    if terms:
        found.sort(key=lambda text: -sum(term in text.lower() for term in terms))
    return found[:MAX_DECISIONS]


def extract_questions(messages: Sequence[Message]) -> list[str]:
    """Open questions and TODOs of the last 20 messages."""
    seen: set[str] = set()
    found: list[str] = []
    for message in messages[-20:]:
        content = _prune(message.content) if message.role == "assistant" else message.content
        for pattern in _QUESTIONS:
            for match in pattern.finditer(content):
                text = " ".join(match.group(0).split())
                key = text[:60].lower()
                if 15 < len(text) < 300 and key not in seen:
                    seen.add(key)
                    found.append(text)
    return found[:MAX_QUESTIONS]


def extract_files(messages: Sequence[Message]) -> list[str]:
    """Files the assistant created or edited (absolute or ``~`` paths), first seen first."""
    found: dict[str, None] = {}
    for message in messages:
        if message.role != "assistant":
            continue
        for pattern in _FILE_PATTERNS:
            for match in pattern.finditer(message.content):
                path = match.group(1)
                if 10 < len(path) < 300 and "*" not in path:
                    found.setdefault(path)
    return list(found)[:MAX_FILES]


def build_state(messages: Sequence[Message], now: datetime) -> str:
    """The state document, or "" when the transcript holds nothing worth keeping."""
    request = last_user_request(messages)
    decisions = extract_decisions(messages, request)
    questions = extract_questions(messages)
    files = extract_files(messages)
    if not (request or decisions or files):
        return ""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S")
    lines = [
        "# Pre-Compaction State",
        "",
        f"_Extracted {stamp} before compaction. This is authoritative._",
        "",
    ]
    sections = (
        ("Last User Request", [request] if request else []),
        ("Key Decisions This Session", [f"- {text}" for text in decisions]),
        ("Open Questions / Unresolved", [f"- {text}" for text in questions]),
        ("Files Modified This Session", [f"- {path}" for path in files]),
    )
    for heading, body in sections:
        if body:
            lines += [f"## {heading}", "", *body, ""]
    return "\n".join(lines)


def _state_folder(event: HookEvent, settings: HookSettings) -> Path | None:
    """The first existing memory folder, else one created next to the transcript."""
    candidates = memory_dirs(event.transcript_path, event.cwd, settings.claude_dir)
    for folder in candidates:
        if folder.is_dir():
            return folder
    for folder in candidates:
        if folder.parent.is_dir():
            with contextlib.suppress(OSError):
                folder.mkdir()
                return folder
    return None


def _reindex(vault: Vault, folder: Path, log: HookLog) -> None:
    """Re-index the collection that covers ``folder``, if one does."""
    for collection in vault.collections():
        root = collection.path.expanduser()
        if folder.is_relative_to(root) or root.is_relative_to(folder):
            report = vault.update([collection.name])
            log.info(f"re-indexed {collection.name}: {report.summary}")
            return


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    """Write the state file for one PreCompact payload; nothing is injected. The session's
    extraction nudge is held back until the compaction ends (``postcompact-inject``)."""
    if event.session_id:
        from memtrove.memory.queue import ExtractionQueue

        with contextlib.suppress(OSError):
            ExtractionQueue(settings.queue_dir).begin_compaction(event.session_id)
    messages = read_transcript(event.transcript_path, 200)
    state = build_state(messages, datetime.now(UTC)) if messages else ""
    if not state:
        return HookResult()
    folder = _state_folder(event, settings)
    if folder is None:
        log.warning("no auto-memory folder for this project; state not saved")
        return HookResult()
    try:
        state = open_vault().redact(state)  # with the vault's own patterns too
    except Exception:  # a vault that cannot open must not cost the state: built-in shapes
        state = redact_text(state)
    write_atomic(folder / STATE_FILE, state, prefix=".precompact-")
    result = HookResult()
    result.after.append(lambda: _reindex(open_vault(), folder, log))
    result.after.append(
        lambda: open_vault().sessions.log_context_usage(
            event.session_id or "unknown", HOOK_NAME, estimated_tokens=estimate_tokens(state)
        )
    )
    return result
