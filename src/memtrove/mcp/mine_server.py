"""Registers ``mine`` (import conversations; a dry run unless told otherwise) and
``import_status`` (the latest mine runs and the mined collections) on the server
:mod:`memtrove.mcp.server` builds; the server, the ``call`` helper and the annotations are
handed in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool

from memtrove.errors import InvalidQueryError

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["import_status", "mine", "register_mine_tools"]


def mine(
    vault: Vault,
    path: str,
    collection: str,
    format: str,
    dry_run: bool,
    since: str | None,
    synthesize: bool = False,
    synthesis_max_docs: int = 20,
) -> tuple[str, dict[str, Any]]:
    if not isinstance(path, str) or not path.strip():
        raise InvalidQueryError("path must name a folder or file the server can read")
    if synthesize and dry_run:
        raise InvalidQueryError("synthesize writes documents: call with dry_run=false")
    report = vault.mining.mine(path, collection, format=format, dry_run=dry_run, since=since)
    text, data = report.text(), report.to_dict()
    if synthesize:  # the import is committed: a failure here never undoes it
        synthesis = vault.synthesis.synthesize_conversations(
            report.document_ids or None, collection=collection, max_docs=synthesis_max_docs
        )
        text, data["synthesis"] = f"{text}\n{synthesis.text()}", synthesis.to_dict()
    return text, data


def import_status(vault: Vault, limit: int, collection: str | None) -> tuple[str, dict[str, Any]]:
    runs = vault.mining.import_status(limit, collection or None)
    imports = [] if collection else vault.mining.import_runs(limit)
    mined = vault.mining.mined_collections()
    lines = [f"mined collections: {', '.join(name for name, _ in mined) or 'none'}"]
    for run in runs:
        lines.append(
            f"#{run.id} {run.collection} {run.status} {run.started_at}: {run.files} files, "
            f"{run.exchanges} exchanges, wrote {run.written}, unchanged {run.unchanged}"
        )
    if imports:
        lines.append("imports:")
        lines.extend(f"  {run.line()}" for run in imports)
    return "\n".join(lines), {
        "collections": [{"name": name, "source": source} for name, source in mined],
        "runs": [run.to_dict() for run in runs],
        "imports": [run.to_dict() for run in imports],
    }


def register_mine_tools(
    server: MCPServer[Any],
    call: Callable[..., CallToolResult],
    read_only: ToolAnnotations,
    writes: ToolAnnotations,
) -> None:
    """Add ``mine`` and ``import_status`` to ``server``."""

    @server.tool("mine", annotations=writes)
    def mine_tool(
        path: Annotated[str, Field(description="Folder or file of exported conversations.")],
        collection: Annotated[
            str, Field(description="Mined collection to write to.")
        ] = "conversations",
        format: Annotated[
            str,
            Field(
                description="auto, claude-code, codex, chatgpt, claude-ai, slack or text "
                "(codex-cli and plain-text: ClawMem's names for codex and text)."
            ),
        ] = "auto",
        dry_run: Annotated[
            StrictBool, Field(description="true (the default) only counts; false writes.")
        ] = True,
        since: Annotated[
            str | None, Field(description="Only exchanges from this ISO date or time.")
        ] = None,
        synthesize: Annotated[
            StrictBool,
            Field(
                description="With dry_run=false: then the LLM extracts decisions, "
                "preferences, milestones and problems as linked documents."
            ),
        ] = False,
        synthesis_max_docs: Annotated[
            int, Field(description="With synthesize: at most this many conversations.")
        ] = 20,
    ) -> CallToolResult:
        """Import conversation exports (Claude Code, Codex, ChatGPT, Claude.ai, Slack,
        plain-text transcripts) as one document per exchange. A dry run by default: call
        again with dry_run=false to write (and synthesize=true to extract facts)."""
        return call(mine, path, collection, format, dry_run, since, synthesize, synthesis_max_docs)

    @server.tool("import_status", annotations=read_only)
    def import_status_tool(
        limit: Annotated[int, Field(description="Most runs to return (1-100).")] = 10,
        collection: Annotated[
            str | None, Field(description="Only the runs of this mined collection.")
        ] = None,
    ) -> CallToolResult:
        """The latest conversation imports (mine runs), newest first, the mined
        collections, and the latest `import` runs (export files, ClawMem vaults; left out
        when a collection is given)."""
        return call(import_status, limit, collection)
