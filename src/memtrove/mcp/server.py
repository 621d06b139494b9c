"""The MCP server: the only module that imports the MCP SDK.

:func:`build_server` registers the tools of :mod:`memtrove.mcp.tools` and the
``memtrove://collection/path`` resource on an SDK ``MCPServer``; :func:`run` serves it over
stdio or streamable HTTP on 127.0.0.1. The vault is opened once, on the first tool call or
resource read, so ``initialize`` and ``tools/list`` never open the file or load a model.

Errors: a :class:`~memtrove.MemtroveError` becomes a tool result with ``isError`` and its
one-line message; arguments that fail the input schema become one too (one line naming the
argument); anything unexpected is logged on stderr with its traceback and reported to the
client as a tool error. Logging goes to stderr only: stdout is the stdio transport.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import Field, StrictBool, ValidationError

from memtrove import __version__
from memtrove.errors import DocumentNotFoundError, MemtroveError
from memtrove.mcp import DEFAULT_HTTP_PORT, tools
from memtrove.mcp.beads_server import register_beads_tools
from memtrove.mcp.diary_server import register_diary_tools
from memtrove.mcp.enrichment_server import register_enrichment_tools
from memtrove.mcp.graph_build_server import register_graph_build_tools
from memtrove.mcp.intent_server import register_intent_tools
from memtrove.mcp.kg_server import register_kg_tools
from memtrove.mcp.lifecycle_server import register_lifecycle_tools
from memtrove.mcp.memory_server import register_memory_tools
from memtrove.mcp.mine_server import register_mine_tools
from memtrove.mcp.profile_server import register_profile_tools
from memtrove.mcp.vaults_server import register_vault_tools
from memtrove.memory.queue import ExtractionQueue
from memtrove.paths import queue_location
from memtrove.results.marking import frame, mark
from memtrove.text import error_line

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["DEFAULT_HTTP_PORT", "build_server", "http_security", "run"]

logger = logging.getLogger("memtrove.mcp")

Query = Annotated[str, Field(description="What to look for.")]
Limit = Annotated[int, Field(description="Most results to return (1-1000).")]
MinScore = Annotated[float, Field(description="Leave out results scoring below this (0-1).")]
CollectionNames = Annotated[
    str | None, Field(description="Only these collections (comma-separated names).")
]
Compact = Annotated[
    StrictBool,
    Field(description="Summary lines only; false adds snippets. structuredContent has all."),
]
IncludeInternal = Annotated[
    StrictBool,
    Field(
        description="Include the agent's own memories (decisions, handoffs, observations, "
        "memory-store entries in _memtrove); false leaves them out."
    ),
]
File = Annotated[str, Field(description="#docid, docid, or collection/path.")]
VaultName = Annotated[
    str | None,
    Field(description="A named vault. Not supported yet: the configured vault is used."),
]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


class _LazyVault:
    """Opens the vault on first use, once (a failed open is retried on the next call)."""

    def __init__(self, open_vault: Callable[[], Vault]) -> None:
        self._open_vault = open_vault
        self._vault: Vault | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Vault:
        with self._lock:
            if self._vault is None:
                self._vault = self._open_vault()
            return self._vault


class _Server(MCPServer[Any]):
    """``MCPServer`` whose argument errors read as one line naming the argument, which
    refuses an argument it does not know (naming those it does) instead of ignoring it, and
    takes every argument in both spellings: camelCase as the tools name them, snake_case as
    an alias (``minScore`` or ``min_score``, ``force_intent`` or ``forceIntent``)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is not None and arguments:
            arguments = _spelled(name, arguments, tuple(tool.parameters.get("properties", {})))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if not isinstance(cause, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
                for item in cause.errors()
            )
            raise ToolError(f"invalid arguments for {name}: {problems}") from cause


def _spelled(tool: str, arguments: dict[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    """``arguments`` under the names the tool declares (each key as given, else its
    camelCase or snake_case spelling); ToolError for a name it does not know or one given
    in both spellings."""
    spelled: dict[str, Any] = {}
    for key, value in arguments.items():
        name = next((form for form in (key, _camel(key), _snake(key)) if form in known), None)
        if name is None:
            listed = ", ".join(known) or "none"
            raise ToolError(f"{tool} has no argument {key[:60]!r}; its arguments: {listed}")
        if name in spelled:
            raise ToolError(f"{tool}: {name} is given twice (as {name} and another spelling)")
        spelled[name] = value
    return spelled


def _camel(key: str) -> str:
    return re.sub(r"_([a-z0-9])", lambda match: match.group(1).upper(), key)


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda match: "_" + match.group(1).lower(), key)


def build_server(
    open_vault: Callable[[], Vault], queue_folder: Path | None = None
) -> MCPServer[Any]:
    """An MCP server over the vault ``open_vault`` returns (called once, on first use);
    ``queue_folder`` holds the extraction queues (default ``$XDG_CACHE_HOME/memtrove/queue``)."""
    shared_vault = _LazyVault(open_vault)
    server = _Server(
        "memtrove",
        version=__version__,
        instructions=tools.IMPORTANT,
        log_level="WARNING",
        warn_on_duplicate_tools=True,
    )

    def call(
        tool: Callable[..., tools.ToolResult], *args: Any, notes: tuple[str, ...] = ()
    ) -> CallToolResult:
        try:
            text, structured = tool(shared_vault(), *args)
        except MemtroveError as error:
            return _error(str(error))
        except Exception as error:  # a bug: keep serving, say so on stderr and to the client
            logger.exception("tool %s failed", getattr(tool, "__name__", tool))
            return _error(f"unexpected {type(error).__name__}: {error}")
        # stored text is data: framed in the text, marked in the structured content
        text, structured = frame(text), mark(structured)
        if notes:
            text = "\n".join([*notes, text])
            structured = {**structured, "notes": list(notes)}
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured
        )

    @server.tool("__IMPORTANT", title="Read first: how to search memory", annotations=READ_ONLY)
    def important() -> CallToolResult:
        """How to search memtrove's memory well: which tool to use when."""
        text, data = tools.important()
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=data
        )

    @server.tool(annotations=READ_ONLY)
    def memory_retrieve(
        query: Query,
        mode: Annotated[
            str,
            Field(
                description="auto (route by wording), keyword, semantic, hybrid, causal "
                "(intent_search WHY), timeline (WHEN), discovery (graph traversal) or "
                "complex (query_plan)."
            ),
        ] = "auto",
        limit: Limit = 10,
        compact: Compact = True,
        includeInternal: IncludeInternal = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Start here: routes the query by its wording to keyword, semantic, hybrid, causal,
        timeline, discovery or complex retrieval."""
        return call(
            tools.memory_retrieve,
            query,
            mode,
            limit,
            compact,
            includeInternal,
            notes=_vault_notes(vault),
        )

    @server.tool(annotations=READ_ONLY)
    def query(
        query: Query,
        limit: Limit = 10,
        minScore: MinScore = 0.0,
        collection: CollectionNames = None,
        compact: Compact = False,
        diverse: Annotated[StrictBool, Field(description="Demote near-duplicates (MMR).")] = True,
        intent: Annotated[
            str | None, Field(description="What the results are for; steers ranking.")
        ] = None,
        candidateLimit: Annotated[int, Field(description="Candidates to rerank.")] = 30,
        includeInternal: IncludeInternal = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Best quality: BM25 + vectors, expansion, fusion, reranking, composite scoring, MMR."""
        return call(
            tools.query,
            query,
            limit,
            minScore,
            collection,
            compact,
            diverse,
            intent,
            candidateLimit,
            includeInternal,
            notes=_vault_notes(vault),
        )

    @server.tool(annotations=READ_ONLY)
    def search(
        query: Query,
        limit: Limit = 10,
        minScore: MinScore = 0.0,
        collection: CollectionNames = None,
        compact: Compact = False,
        includeInternal: IncludeInternal = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Keyword search (BM25 over paths, titles and bodies): exact words, names, identifiers."""
        return call(
            tools.search,
            query,
            limit,
            minScore,
            collection,
            compact,
            includeInternal,
            notes=_vault_notes(vault),
        )

    @server.tool(annotations=READ_ONLY)
    def vsearch(
        query: Query,
        limit: Limit = 10,
        minScore: MinScore = 0.0,
        collection: CollectionNames = None,
        compact: Compact = False,
        includeInternal: IncludeInternal = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Vector search: documents whose meaning is closest to the query."""
        return call(
            tools.vsearch,
            query,
            limit,
            minScore,
            collection,
            compact,
            includeInternal,
            notes=_vault_notes(vault),
        )

    @server.tool(annotations=READ_ONLY)
    def get(
        file: File,
        fromLine: Annotated[int | None, Field(description="First line (1-based).")] = None,
        maxLines: Annotated[int | None, Field(description="At most this many lines.")] = None,
        lineNumbers: Annotated[StrictBool, Field(description="Prefix lines with N: .")] = False,
        vault: VaultName = None,
    ) -> CallToolResult:
        """One document's text and metadata."""
        return call(tools.get, file, fromLine, maxLines, lineNumbers, notes=_vault_notes(vault))

    @server.tool(annotations=READ_ONLY)
    def multi_get(
        pattern: Annotated[
            str,
            Field(description='A glob over collection/path ("notes/**/*.md") or "#id1,#id2".'),
        ],
        maxLines: Annotated[int | None, Field(description="At most this many lines each.")] = None,
        maxBytes: Annotated[int, Field(description="Cut each body at this many bytes.")] = 10240,
        lineNumbers: Annotated[StrictBool, Field(description="Prefix lines with N: .")] = False,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Several documents at once (progressive disclosure after a search)."""
        return call(
            tools.multi_get, pattern, maxLines, maxBytes, lineNumbers, notes=_vault_notes(vault)
        )

    @server.tool(annotations=READ_ONLY)
    def find_similar(
        file: File,
        limit: Limit = 5,
        includeInternal: IncludeInternal = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Documents most similar to this one (nearest fragment vectors)."""
        return call(tools.find_similar, file, limit, includeInternal, notes=_vault_notes(vault))

    @server.tool(annotations=READ_ONLY)
    def timeline(
        docid: File,
        before: Annotated[int, Field(description="Documents before it (1-20).")] = 5,
        after: Annotated[int, Field(description="Documents after it (1-20).")] = 5,
        same_collection: Annotated[StrictBool, Field(description="Only its collection.")] = False,
        vault: VaultName = None,
    ) -> CallToolResult:
        """What came before and after a document in time."""
        return call(
            tools.timeline, docid, before, after, same_collection, notes=_vault_notes(vault)
        )

    @server.tool(annotations=READ_ONLY)
    def session_log(limit: Limit = 10, vault: VaultName = None) -> CallToolResult:
        """Recent agent sessions (turns, injected documents, tokens), newest first."""
        return call(tools.session_log, limit, notes=_vault_notes(vault))

    @server.tool(annotations=READ_ONLY)
    def status(vault: VaultName = None) -> CallToolResult:
        """Quick index health: documents, fragments, types, collections."""
        return call(tools.status, notes=_vault_notes(vault))

    @server.tool(annotations=READ_ONLY)
    def index_stats(vault: VaultName = None) -> CallToolResult:
        """Content types, staleness and embedding coverage."""
        return call(tools.index_stats, notes=_vault_notes(vault))

    @server.tool(annotations=WRITES)
    def reindex(vault: VaultName = None) -> CallToolResult:
        """Re-scan every collection and index what changed."""
        return call(tools.reindex, notes=_vault_notes(vault))

    @server.tool(annotations=WRITES)
    def memory_pin(
        query: Annotated[str, Field(description="The document: words, #docid or path.")],
        unpin: Annotated[StrictBool, Field(description="Unpin instead.")] = False,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Pin a document so it always ranks up (or unpin it)."""
        return call(tools.memory_pin, query, unpin, notes=_vault_notes(vault))

    @server.tool(annotations=WRITES)
    def memory_snooze(
        query: Annotated[str, Field(description="The document: words, #docid or path.")],
        until: Annotated[
            str | None, Field(description="ISO date or datetime; omit to unsnooze.")
        ] = None,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Hide a document from automatic context until a date (or unsnooze it)."""
        return call(tools.memory_snooze, query, until, notes=_vault_notes(vault))

    @server.tool(
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, open_world_hint=False
        )
    )
    def memory_forget(
        query: Annotated[str, Field(description="The document: words, #docid or path.")],
        confirm: Annotated[
            StrictBool, Field(description="false previews without changing.")
        ] = True,
        vault: VaultName = None,
    ) -> CallToolResult:
        """Take a document out of search (its text stays); only on a confident match."""
        return call(tools.memory_forget, query, confirm, notes=_vault_notes(vault))

    @server.tool(annotations=READ_ONLY)
    def lifecycle_status(vault: VaultName = None) -> CallToolResult:
        """Lifecycle counts (active, archived, forgotten, pinned, snoozed, ...), the documents
        recall telemetry suggests pinning or snoozing, and the archive policy."""
        return call(tools.lifecycle_status, notes=_vault_notes(vault))

    @server.resource(
        "memtrove://{+path}",
        name="document",
        title="memtrove document",
        description="A document of the vault by collection/path, lines numbered.",
        mime_type="text/markdown",
    )
    def document(path: str) -> str:
        try:
            return tools.read_document(shared_vault(), path)
        except DocumentNotFoundError as error:
            raise ResourceNotFoundError(str(error)) from None
        except MemtroveError as error:
            raise ResourceError(str(error)) from None

    folder = queue_folder if queue_folder is not None else Path(queue_location())
    register_memory_tools(server, call, ExtractionQueue(folder), READ_ONLY, WRITES)
    register_kg_tools(server, call, READ_ONLY)
    register_intent_tools(server, call, READ_ONLY, _vault_notes)
    register_graph_build_tools(server, call, WRITES)
    register_enrichment_tools(server, call, READ_ONLY)
    register_lifecycle_tools(server, call, WRITES)
    register_mine_tools(server, call, READ_ONLY, WRITES)
    register_profile_tools(server, call, WRITES)
    register_diary_tools(server, call)
    register_beads_tools(server, call, WRITES)
    register_vault_tools(server, call, READ_ONLY, WRITES)
    return server


def run(
    open_vault: Callable[[], Vault], *, http: bool = False, port: int = DEFAULT_HTTP_PORT
) -> None:
    """Serve until the client hangs up (stdio) or the process is stopped (HTTP)."""
    opened: list[Vault] = []

    def opener() -> Vault:
        vault = open_vault()
        opened.append(vault)
        return vault

    server = build_server(opener)
    try:
        if http:
            server.run(
                "streamable-http",
                host="127.0.0.1",
                port=port,
                transport_security=http_security(port),
            )
        else:
            server.run("stdio")
    finally:
        for vault in opened:
            vault.close()


def http_security(port: int) -> TransportSecuritySettings:
    """What ``mcp --http`` on ``port`` accepts: a Host header naming the loopback
    (``localhost``, ``127.0.0.1``, ``[::1]``) with this port, and no Origin or this server's
    own (``http://`` one of those names, this port). The SDK's default takes any
    ``localhost:*``: a page served by another local program could then drive the tools."""
    names = ("localhost", "127.0.0.1", "[::1]")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in names],
        allowed_origins=[f"http://{name}:{port}" for name in names],
    )


def _error(message: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=error_line(message))], is_error=True
    )


def _vault_notes(name: str | None) -> tuple[str, ...]:
    if not name:
        return ()
    return (f"note: named vaults are not supported yet; used the configured vault, not {name!r}",)
