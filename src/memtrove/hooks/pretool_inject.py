"""``pretool-inject`` (PreToolUse, off by default): notes about the file a tool is about to use.

Off unless ``MEMTROVE_PRETOOL_INJECT=true``: a PreToolUse hook runs before every tool
call, so it costs a process start each time (the reference product ships it disabled too).
Off, it answers at once with empty context and opens nothing.

On, for a payload whose ``tool_input.file_path`` is a non-empty string (Read, Edit, Write,
MultiEdit), it searches the vault's keyword index (BM25, paths weighing 10x) for the
path's last :data:`PATH_PARTS` parts (``/home/me/app/src/auth/refresh.py`` ->
``src/auth/refresh.py``), keeps the top :data:`LIMIT` that context-surfacing could inject
(:mod:`memtrove.hooks.admission`: nothing private, snoozed, of a ``surface: false``
collection, or failing the injection filter) but the file itself when a collection holds
it, and injects them as ``<vault-context>`` within :data:`BUDGET` estimated tokens
(:mod:`memtrove.hooks.render`, passages escaped). The same file in the same session is
searched once per ``MEMTROVE_HOOK_DEDUP_WINDOW_SEC`` (600 s). What was injected is logged
in ``context_usage`` like context-surfacing's injections, so ``feedback-loop`` judges it.

Not installed by ``setup hooks``: add ``memtrove hook pretool-inject`` to the PreToolUse
hooks by hand (matcher ``Read|Edit|MultiEdit|Write``, timeout 5) and set the variable.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path, PurePath

from memtrove.errors import MemtroveError
from memtrove.hooks.admission import FILTERED_PATHS, SURFACED_INTERNAL, admit
from memtrove.hooks.events import HookEvent, HookResult
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.render import Entry, render_context
from memtrove.hooks.settings import HookSettings
from memtrove.results import Document
from memtrove.retrieval.fts import parse_query
from memtrove.retrieval.snippets import Highlighter
from memtrove.security.guard import sanitize
from memtrove.vault import Vault

__all__ = ["BUDGET", "HOOK_NAME", "LIMIT", "PATH_PARTS", "path_query", "run"]

HOOK_NAME = "pretool-inject"
LIMIT = 3
BUDGET = 200
PATH_PARTS = 3
_MAX_PATH = 4096


def path_query(file_path: str) -> str:
    """What is searched for ``file_path``: its last :data:`PATH_PARTS` parts, "" for none."""
    parts = [part for part in PurePath(file_path[:_MAX_PATH]).parts if part not in ("/", "\\")]
    return "/".join(parts[-PATH_PARTS:]).strip()


def _own_key(vault: Vault, file_path: str) -> str | None:
    """``collection/path`` of the file itself when a collection's folder holds it."""
    if not os.path.isabs(file_path):
        return None
    target = Path(os.path.normpath(file_path))
    try:
        collections = vault.collections()
    except MemtroveError:
        return None
    for collection in collections:
        try:
            relative = target.relative_to(Path(os.path.normpath(collection.path)))
        except ValueError:
            continue
        return f"{collection.name}/{relative.as_posix()}"
    return None


def _found(vault: Vault, query: str, own: str | None, log: HookLog) -> list[tuple[Document, float]]:
    """The top documents for ``query`` that may be injected, with their scores."""
    try:
        unsurfaced = vault.unsurfaced_collections()
    except MemtroveError:  # a broken config.yaml costs the setting, never the answer
        unsurfaced = frozenset()
    try:
        results = vault.search(
            query,
            limit=LIMIT + 2,  # room for the file itself and one refusal
            include_internal=False,
            kept_internal=SURFACED_INTERNAL,
            hidden_parts=tuple(part for part in FILTERED_PATHS if part != "_memtrove/"),
            hidden_collections=tuple(sorted(unsurfaced)),
        )
    except MemtroveError as error:  # a path the search refuses: nothing to say about it
        log.info(f"nothing searched for {query[:80]!r}: {error}")
        return []
    now = datetime.now(UTC)
    kept: list[tuple[Document, float]] = []
    for result in results:
        key = f"{result.collection}/{result.path}"
        if key == own:
            continue
        document = admit(vault, key, now, unsurfaced)
        if not isinstance(document, str):
            kept.append((document, result.score))
        if len(kept) == LIMIT:
            break
    return kept


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    """Answer one PreToolUse payload: notes about its file, or nothing."""
    if not settings.pretool_inject:
        return HookResult()
    file_path = event.tool_input.get("file_path")
    if not isinstance(file_path, str) or not file_path.strip() or "\x00" in file_path:
        return HookResult()
    query = path_query(file_path.strip())
    if not query:
        return HookResult()
    vault = open_vault()
    session = event.session_id
    window = settings.dedupe_window_seconds
    if window > 0 and vault.sessions.hook_seen(HOOK_NAME, query, window, session):
        log.info("skipped: this file was searched in this session a moment ago")
        return HookResult()
    found = _found(vault, query, _own_key(vault, file_path.strip()), log)
    rendered = render_context(
        [
            Entry(f"{d.collection}/{d.path}", sanitize(d.title) or "", d.content_type, s, d.body)
            for d, s in found
        ],
        Highlighter(parse_query(query).highlight),
        BUDGET,
    )
    result = HookResult(context=rendered.text, tokens=rendered.tokens)
    result.surfaced = [entry.key for entry in rendered.shown]
    if rendered.shown:
        scores = {f"{d.collection}/{d.path}": (d.doc_id, score) for d, score in found}
        injected = [scores[entry.key] for entry in rendered.shown]
        result.after.append(
            lambda: vault.sessions.log_context_usage(
                session or "unknown",
                HOOK_NAME,
                injected=injected,
                estimated_tokens=rendered.tokens,
                query_text=query,
            )
        )
    return result
