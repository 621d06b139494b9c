"""``memtrove flush-tools`` and ``memtrove reminder``: the memory store's nudges for hosts that
run one command per event and read what it prints as context. Cursor runs them with
``--json`` (``beforeSubmitPrompt`` and ``sessionStart``); Claude Code's ``UserPromptSubmit``
and ``SessionStart`` take the plain text.

``flush-tools`` answers a prompt; the first tier that has something wins:

1. **The extraction nudge**, when the session's queue holds tool calls (see
   :mod:`memtrove.memory.queue`: counted as shown, more insistent each time it is let pass).
2. **Related memories**: entries of the project and ``global`` stores that recall's search
   finds for the prompt (no recall is counted: the agent has not read them yet) scoring at
   least :data:`RECALL_NUDGE_SCORE`, and the predictions and behaviors whose situations
   match it. Prompts under :data:`MIN_PROMPT_CHARS` characters skip this tier.
3. **The write nudge**: a line asking to save what was learned.

While the session compacts nothing at all is printed: tools are blocked while the summary
is written. ``reminder`` prints what the ``session-start`` hook injects: the last handoff of
the project, the reminder of the memory store, and its hygiene when something needs tending.

Both read the host's JSON on stdin within :data:`READ_SECONDS` (a terminal gives none), and
always exit 0 with valid output: with ``--json`` one object ``{"additional_context": text}``
(an empty string when there is nothing to say), otherwise the text itself (nothing when
empty). Failures go to stderr and ``hooks.log``; ``flush-tools`` then falls back to tier 3.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from memtrove.hooks.events import HookEvent, read_payload
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HOOK_BUSY_TIMEOUT_MS, HookSettings
from memtrove.vault import Vault

__all__ = [
    "MIN_PROMPT_CHARS",
    "READ_SECONDS",
    "RECALL_NUDGE_SCORE",
    "WRITE_NUDGE",
    "flush_text",
    "main",
    "reminder_text",
]

READ_SECONDS = 2.0
MIN_PROMPT_CHARS = 10  # "yes", "ok", "go on" relate to everything and to nothing
MAX_RELATED = 5
# recall's score is 0.6 x keywords + 0.4 x cosine: an entry found by meaning alone, as close
# as a write's "similar" warning asks (0.55), scores 0.22; keywords count on top.
RECALL_NUDGE_SCORE = 0.4 * 0.55
WRITE_NUDGE = (
    "<memory-write>After answering, check whether you learned something durable: a decision, "
    "a convention, a user preference or correction, a gotcha that cost time. If so, save it "
    "with memory_remember(label, content).</memory-write>"
)
LOG_FILE = "hooks.log"
_SESSION_FIELDS = ("session_id", "conversation_id", "sessionId", "conversationId")
_PROMPT_FIELDS = ("prompt", "message", "text", "user_input", "input")


def _payload(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8", errors="replace").strip().lstrip("\ufeff") or "{}")
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _field(data: Mapping[str, Any], names: tuple[str, ...]) -> str:
    from memtrove.text import scrub

    for name in names:
        value = data.get(name)
        if isinstance(value, str) and value.strip():
            return scrub(value)
    return ""


def _folder(data: Mapping[str, Any], env: Mapping[str, str]) -> Path | None:
    """The project's folder: the payload's ``cwd`` or first workspace root, then Cursor's
    and Claude Code's project variables, then the working directory."""
    roots = data.get("workspace_roots")
    candidates = [
        data.get("cwd"),
        roots[0] if isinstance(roots, list) and roots else None,
        env.get("CURSOR_PROJECT_DIR"),
        env.get("CLAUDE_PROJECT_DIR"),
    ]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            try:
                if Path(candidate).is_dir():
                    return Path(candidate)
            except (OSError, ValueError):  # a NUL byte, a name too long
                continue
    try:
        return Path.cwd()
    except OSError:  # the working directory was deleted
        return None


def _project(folder: Path | None) -> str:
    from memtrove.memory.git import project_store_for
    from memtrove.memory.slugs import GLOBAL_STORE, store_name

    return store_name(project_store_for(folder)) if folder else GLOBAL_STORE


def related_lines(vault: Vault, prompt: str, folder: Path | None) -> str:
    """Tier 2: ``<memory-recall>`` with the related entries, then ``<vault-rules>``."""
    from memtrove.hooks.context_surfacing import rule_lines
    from memtrove.security.guard import escape, sanitize

    vault.memory.project_store = _project(folder)
    found = vault.memory.search_entries(prompt, limit=MAX_RELATED)
    lines = [
        escape(line)
        for item in found
        if item.score >= RECALL_NUDGE_SCORE
        and (line := sanitize(f"- {item.entry.store} :: {item.entry.label}")) is not None
    ]
    parts = []
    if lines:
        parts.append(
            "<memory-recall>Entries of the memory store may bear on this prompt; read them "
            "with memory_recall before relying on what you remember:\n"
            + "\n".join(lines)
            + "\n</memory-recall>"
        )
    rules = rule_lines(vault, prompt, str(folder) if folder else "")
    if rules:
        parts.append(rules)
    return "\n".join(parts)


def flush_text(
    data: Mapping[str, Any],
    settings: HookSettings,
    open_vault: Callable[[], Vault],
    log: HookLog,
    env: Mapping[str, str],
) -> str:
    """What ``flush-tools`` says for one prompt payload (see the module docstring)."""
    from memtrove.memory.queue import ExtractionQueue, is_compaction_prompt

    session, prompt = _field(data, _SESSION_FIELDS), _field(data, _PROMPT_FIELDS)
    queue = ExtractionQueue(settings.queue_dir)
    if is_compaction_prompt(prompt) or queue.compacting(session):
        return ""
    nudge = queue.nudge(session, prompt)
    if nudge:
        return nudge
    if len(prompt.strip()) >= MIN_PROMPT_CHARS:
        try:
            related = related_lines(open_vault(), prompt, _folder(data, env))
        except Exception as error:  # the write nudge still goes out
            log.warning(f"related memories skipped: {type(error).__name__}: {error}")
            related = ""
        if related:
            return related
    return WRITE_NUDGE


def reminder_text(
    data: Mapping[str, Any],
    settings: HookSettings,
    open_vault: Callable[[], Vault],
    log: HookLog,
    env: Mapping[str, str],
) -> str:
    """What ``reminder`` says: the ``session-start`` hook's context for this project. A
    start after a compaction also ends the session's compaction (the nudge comes back)."""
    from memtrove.hooks import session_start
    from memtrove.memory.queue import ExtractionQueue

    session = _field(data, _SESSION_FIELDS)
    if _field(data, ("source",)) == "compact":
        ExtractionQueue(settings.queue_dir).end_compaction(session)
    folder = _folder(data, env)
    event = HookEvent(session_id=session, cwd=str(folder) if folder else "")
    return session_start.run(event, settings, open_vault, log).context


def main(
    command: str,
    *,
    as_json: bool,
    vault: str | Path | None = None,
    config_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Run ``flush-tools`` or ``reminder`` on the payload on stdin; always 0."""
    env = os.environ if env is None else env
    out = stdout if stdout is not None else sys.stdout
    text = WRITE_NUDGE if command == "flush-tools" else ""
    opened: list[Vault] = []
    try:
        settings = HookSettings.from_env(env, vault=vault, config_dir=config_dir)
        log = HookLog(settings.cache_dir / LOG_FILE, command)
    except Exception as error:  # an unusable environment: only stderr is left
        HookLog(None, command).error(f"cannot read the settings: {type(error).__name__}: {error}")
    else:

        def open_vault() -> Vault:
            if not opened:
                from memtrove.models.registry import ModelSettings

                opened.append(
                    Vault.open(
                        settings.vault_path,
                        config_dir=settings.config_dir,
                        busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS,
                        models=ModelSettings.from_env(env),
                    )
                )
            return opened[0]

        try:
            source = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
            raw = read_payload(source, READ_SECONDS) if source is not None else b""
        except Exception as error:  # too large, too slow, closed: answer without it
            log.warning(f"payload not read: {type(error).__name__}: {error}")
            raw = b""
        run = flush_text if command == "flush-tools" else reminder_text
        try:
            text = run(_payload(raw), settings, open_vault, log, env)
        except Exception as error:
            log.error(f"{type(error).__name__}: {error}")
        finally:
            for opened_vault in opened:
                opened_vault.close()
    if as_json:
        answer: dict[str, object] = {"additional_context": text}
        if command == "flush-tools":  # Cursor's beforeSubmitPrompt reads only this: go on
            answer["continue"] = True
        out.write(json.dumps(answer, ensure_ascii=True) + "\n")
    elif text:
        out.write(text + "\n")
    out.flush()
    return 0
