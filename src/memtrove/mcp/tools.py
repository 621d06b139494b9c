"""The MCP tools as plain functions over a :class:`~memtrove.Vault` (no SDK in here).

Each tool returns ``(text, structured)``: ``text`` is the compact summary a model reads
(``#docid 87% collection/path - title [type]`` lines), ``structured`` the JSON-ready data
for ``structuredContent``. User errors are raised as :class:`~memtrove.MemtroveError` with a
one-line message; :mod:`memtrove.mcp.server` turns them into tool errors.

The agent's own memories (the internal collection ``_memtrove``: decisions, handoffs,
observations, memory-store entries) are searched like any note, as the CLI and REST search
them: what memtrove captured for the agent is visible to its tools. ``include_internal=False``
leaves them out, inside each retrieval channel's query (:mod:`memtrove.retrieval.filters`),
so an answer is never cut short by internal documents ranking above the ones it shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memtrove.errors import InvalidQueryError
from memtrove.locations import is_server_url
from memtrove.mcp.curation import memory_forget, memory_pin, memory_snooze
from memtrove.mcp.format import (
    degraded_lines,
    document_header,
    numbered,
    result_lines,
    select_lines,
    summary_line,
)
from memtrove.mcp.intent_tools import find_causal_links, intent_search, query_plan
from memtrove.results import SearchResults, SessionRecord
from memtrove.retrieval.filters import is_internal

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = [
    "IMPORTANT",
    "ToolResult",
    "find_causal_links",
    "find_similar",
    "get",
    "important",
    "index_stats",
    "intent_search",
    "lifecycle_status",
    "memory_forget",
    "memory_pin",
    "memory_retrieve",
    "memory_snooze",
    "multi_get",
    "query",
    "query_plan",
    "read_document",
    "reindex",
    "search",
    "session_log",
    "status",
    "timeline",
    "vsearch",
]

ToolResult = tuple[str, dict[str, Any]]

IMPORTANT = """\
## memtrove: how to search memory
1. Start with memory_retrieve(query): it routes by wording to keyword (BM25), semantic
   (vectors), hybrid, causal, timeline, discovery or complex retrieval and says which ran
   ([routed: mode]). "why" questions -> intent_search(query); then
   find_causal_links(docid) for the whole chain; multi-topic -> query_plan(query).
2. Best quality, slower: query(query, intent="what it is for") runs expansion, rank fusion,
   reranking, composite scoring and diversity (model stages only when configured).
3. Spot checks: search(query) for exact words and names, vsearch(query) for meaning.
4. Read what you found: get("#docid"), multi_get("#a,#b" or "collection/**/*.md"),
   or the resource memtrove://collection/path.
5. "similar to this note" -> find_similar(file); "what came before/after" -> timeline(docid);
   "last session" -> session_log.
6. Curate: memory_pin (always surface), memory_snooze (hide until a date),
   memory_forget (confirm=false previews; it acts only on a confident match).
Context the hooks already injected (<vault-context>) does not need searching again."""

MAX_RANGE = 20


def important() -> ToolResult:
    return IMPORTANT, {"instructions": IMPORTANT}


# -- searching ------------------------------------------------------------------------------------


def search(
    vault: Vault,
    query: str,
    limit: int = 10,
    min_score: float = 0.0,
    collection: str | None = None,
    compact: bool = False,
    include_internal: bool = True,
) -> ToolResult:
    """BM25 keyword search."""
    collections = _collections(vault, collection)
    results = vault.search(
        query,
        limit,
        collections,
        min_score=_min_score(min_score),
        include_internal=include_internal,
    )
    return _results(query, results, compact)


def vsearch(
    vault: Vault,
    query: str,
    limit: int = 10,
    min_score: float = 0.0,
    collection: str | None = None,
    compact: bool = False,
    include_internal: bool = True,
) -> ToolResult:
    """Vector search: documents ranked by their best fragment's cosine similarity."""
    collections = _collections(vault, collection)
    results = vault.vsearch(
        query,
        limit,
        collections,
        min_score=_min_score(min_score),
        include_internal=include_internal,
    )
    return _results(query, results, compact)


def query(
    vault: Vault,
    query: str,
    limit: int = 10,
    min_score: float = 0.0,
    collection: str | None = None,
    compact: bool = False,
    diverse: bool = True,
    intent: str | None = None,
    candidate_limit: int = 30,
    include_internal: bool = True,
) -> ToolResult:
    """The full retrieval pipeline; ``stages`` and ``skipped`` say what ran."""
    collections = _collections(vault, collection)
    results = vault.query(
        query,
        limit,
        intent=intent,
        collections=collections,
        min_score=_min_score(min_score),
        diverse=diverse,
        candidate_limit=candidate_limit,
        include_internal=include_internal,
    )
    return _results(query, results, compact, stages=True)


def memory_retrieve(
    vault: Vault,
    query: str,
    mode: str = "auto",
    limit: int = 10,
    compact: bool = True,
    include_internal: bool = True,
) -> ToolResult:
    """Route by wording (:mod:`memtrove.retrieval.router`), then search that way
    (:meth:`IntentArea.retrieve <memtrove.vault.intent.IntentArea.retrieve>`)."""
    chosen, results = vault.intent.retrieve(query, mode, limit, include_internal=include_internal)
    text, data = _results(query, results, compact, stages=True)
    sessions = _session_lines(getattr(results, "sessions", ()))
    if sessions:
        text = "\n".join([text, "Sessions in this window:", *sessions])
    header = [f"[routed: {chosen.mode}]"] + ([f"note: {chosen.note}"] if chosen.note else [])
    route_data = {
        "mode": chosen.mode,
        "requested": chosen.requested,
        "classified": chosen.classified,
        "note": chosen.note,
    }
    return "\n".join([*header, text]), route_data | data


def _session_lines(sessions: Any) -> list[str]:
    """A timeline's sessions, newest first, each with its summary and handoff."""
    lines = []
    for session in sorted(sessions, key=lambda s: s.ended_at or s.last_seen_at, reverse=True):
        when = (session.ended_at or session.last_seen_at or "")[:16].replace("T", " ")
        line = f"- {when} {session.session_id[:8]}"
        if session.summary:
            line += f": {session.summary[:200]}"
        if session.handoff_path:
            line += f" (handoff: {session.handoff_path})"
        lines.append(line)
    return lines


def find_similar(
    vault: Vault, file: str, limit: int = 5, include_internal: bool = True
) -> ToolResult:
    """Documents nearest to ``file`` by their fragment vectors (the document itself left out)."""
    reference = _check_ref(file)
    # a note of an internal collection brings its like along (RetrievalArea.find_similar)
    results = vault.retrieval.find_similar(reference, limit, include_internal=include_internal)
    text, data = _results(f"similar to {reference}", results, compact=True)
    return text, {"file": reference, **data}


# -- reading --------------------------------------------------------------------------------------


def get(
    vault: Vault,
    file: str,
    from_line: int | None = None,
    max_lines: int | None = None,
    line_numbers: bool = False,
) -> ToolResult:
    """One document's text (the selected lines), with its metadata."""
    document = vault.get(_check_ref(file))
    lines = document.body.splitlines()
    start = 1 if from_line is None else from_line
    selected = select_lines(lines, start, max_lines)
    body = numbered(selected, start) if line_numbers else "\n".join(selected)
    data = document.to_dict() | {
        "body": "\n".join(selected),
        "from_line": start,
        "total_lines": len(lines),
    }
    return f"{document_header(document)}\n\n{body}", data


def multi_get(
    vault: Vault,
    pattern: str,
    max_lines: int | None = None,
    max_bytes: int = 10240,
    line_numbers: bool = False,
) -> ToolResult:
    """Several documents by a glob over ``collection/path`` or a comma-separated list of refs."""
    if not isinstance(max_bytes, int) or max_bytes < 1:
        raise InvalidQueryError(f"maxBytes must be a positive integer, got {max_bytes!r}")
    found = vault.multi_get(_check_ref(pattern), max_bytes=max_bytes)
    sections: list[str] = []
    documents: list[dict[str, Any]] = []
    for document in found.documents:
        selected = select_lines(document.body.splitlines(), 1, max_lines, strict=False)
        body = numbered(selected, 1) if line_numbers else "\n".join(selected)
        sections.append(f"{document_header(document)}\n\n{body}")
        documents.append(document.to_dict() | {"body": "\n".join(selected)})
    sections += [f"error: {error}" for error in found.errors]
    if found.truncated:
        sections.append(f"cut at {max_bytes} bytes: {', '.join(found.truncated)}")
    text = "\n\n---\n\n".join(sections) if sections else f'No documents match "{pattern}"'
    data = {
        "pattern": pattern,
        "count": len(documents),
        "documents": documents,
        "errors": list(found.errors),
        "truncated": list(found.truncated),
    }
    return text, data


def read_document(vault: Vault, path: str) -> str:
    """The ``memtrove://collection/path`` resource: the document's text, lines numbered."""
    document = vault.get(_check_ref(path))
    return numbered(document.body.splitlines(), 1)


def timeline(
    vault: Vault, docid: str, before: int = 5, after: int = 5, same_collection: bool = False
) -> ToolResult:
    """Documents on either side of ``docid`` in time order (authored, else modified)."""
    for name, value in (("before", before), ("after", after)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_RANGE:
            raise InvalidQueryError(f"{name} must be between 1 and {MAX_RANGE}, got {value!r}")
    found = vault.documents.timeline(_check_ref(docid), before, after, same_collection)
    lines = [f"  {summary_line(d)}" for d in reversed(found.before)]
    lines.append(f"> {summary_line(found.anchor)}")
    lines += [f"  {summary_line(d)}" for d in found.after]
    return "\n".join(lines), found.to_dict()


def _session_line(session: SessionRecord) -> str:
    line = (
        f"{session.session_id}  {session.started_at} -> {session.last_seen_at}  "
        f"{session.turns} turns, {session.injected_documents} documents injected, "
        f"~{session.estimated_tokens} tokens"
    )
    if session.ended_at:
        line += f"; ended {session.ended_at}"
    if session.handoff_path:
        line += f"\n  handoff: {session.handoff_path}"
    if session.summary:
        line += f"\n  summary: {session.summary}"
    if session.files_changed:
        line += f"\n  files changed: {', '.join(session.files_changed)}"
    return line


def session_log(vault: Vault, limit: int = 10) -> ToolResult:
    """Recent sessions the hooks recorded, newest first."""
    sessions = vault.sessions.session_log(limit)
    if not sessions:
        text = "No sessions recorded yet (the Claude Code hooks record them: memtrove setup hooks)"
    else:
        text = "\n".join(_session_line(s) for s in sessions)
    return text, {"count": len(sessions), "sessions": [s.to_dict() for s in sessions]}


# -- the vault ------------------------------------------------------------------------------------


def status(vault: Vault) -> ToolResult:
    info = vault.status()
    size = "on the server" if is_server_url(info.path) else f"{info.size_bytes / 1_048_576:.1f} MiB"
    lines = [
        f"vault {info.path} ({size})",
        f"documents {info.documents} active, {info.inactive_documents} inactive, "
        f"{info.fragments} fragments",
    ]
    if info.content_types:
        lines.append("types " + ", ".join(f"{k} {v}" for k, v in info.content_types.items()))
    lines += [f"collection {c.name}: {c.documents} documents" for c in info.collections]
    return "\n".join(lines), info.to_dict()


def index_stats(vault: Vault) -> ToolResult:
    stats = vault.documents.index_stats()
    types = ", ".join(f"{k} {v}" for k, v in stats.content_types.items()) or "none"
    text = "\n".join(
        [
            f"documents {stats.documents} active, {stats.inactive_documents} inactive",
            f"types {types}",
            f"embedded {stats.embedded_documents}, pending {stats.pending_embeds}, "
            f"failed {stats.failed_embeds} ({stats.vectors} vectors, "
            f"space {stats.embedding_space or 'none yet'})",
            f"stale {stats.stale_documents} (per collection: stale_after_days); "
            f"oldest {stats.oldest or '-'}, newest {stats.newest or '-'}",
        ]
    )
    return text, stats.to_dict()


def lifecycle_status(vault: Vault) -> ToolResult:
    status = vault.lifecycle.status()
    return status.text(), status.to_dict()


def reindex(vault: Vault) -> ToolResult:
    """Re-scan every collection and index what changed (vectors: ``memtrove embed``)."""
    report = vault.update()
    lines = [f"reindexed {report.summary} in {report.elapsed_seconds:.2f}s"]
    lines += [f"skipped {issue}" for issue in report.skipped]
    lines += [f"warning: {warning}" for warning in report.warnings]
    if report.added or report.updated:
        lines.append("new and changed documents get vectors with `memtrove embed`")
    return "\n".join(lines), report.to_dict()


# -- helpers --------------------------------------------------------------------------------------


def _results(
    query: str, results: SearchResults, compact: bool, *, stages: bool = False
) -> ToolResult:
    if results:
        count = f"{len(results)} result" + ("" if len(results) == 1 else "s")
        lines = [f'Found {count} for "{query}":', *result_lines(results, snippets=not compact)]
    else:
        lines = [f'No results for "{query}"']
    if stages:
        lines.append("stages: " + (" > ".join(results.stages) or "none"))
        lines += [f"skipped {stage}: {why}" for stage, why in results.skipped.items()]
    lines += [f"warning: {warning}" for warning in results.warnings]
    lines += degraded_lines(results)
    return "\n".join(lines), {"query": query, **results.to_dict()}


def _collections(vault: Vault, collection: str | None) -> list[str] | None:
    """A comma-separated list of collection names, each one known (or internal)."""
    names = [name.strip() for name in (collection or "").split(",") if name.strip()]
    if not names:
        return None
    known = {c.name for c in vault.collections()}
    known.update(name for name, _ in vault.mining.mined_collections())
    for name in names:
        if name not in known and not is_internal(name):
            listed = ", ".join(sorted(known)) or "none configured"
            raise InvalidQueryError(f"no collection named {name!r}; known: {listed}")
    return names


def _min_score(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise InvalidQueryError(f"minScore must be between 0 and 1, got {value!r}")
    return value


def _check_ref(reference: str) -> str:
    """Refuse a reference that tries to leave the vault (``..``, absolute paths, NUL)."""
    text = reference.strip()
    if not text:
        raise InvalidQueryError("a document reference (#docid or collection/path) is required")
    bare = text.removeprefix("memtrove://")
    segments = bare.replace("\\", "/").split("/")
    if "\0" in text or bare.startswith(("/", "\\", "~")) or ".." in segments:
        raise InvalidQueryError(
            f"{reference!r} is not a document in the vault: use #docid or collection/path"
        )
    return text
