"""The intent-aware MCP tools as plain functions: ``intent_search``, ``find_causal_links``,
``query_plan`` (no SDK in here; :mod:`memtrove.mcp.intent_server` registers them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memtrove.errors import InvalidQueryError
from memtrove.mcp.format import degraded_lines, result_lines

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["find_causal_links", "intent_search", "query_plan"]

ToolResult = tuple[str, dict[str, Any]]  # as in memtrove.mcp.tools, which re-exports these


def intent_search(
    vault: Vault,
    query: str,
    limit: int = 10,
    force_intent: str | None = None,
    enable_graph_traversal: bool = True,
) -> ToolResult:
    """Classify the question (WHY/WHEN/ENTITY/WHAT) and search for it, with graph
    traversal for WHY and ENTITY."""
    results = vault.intent.intent_search(
        query, limit, force_intent=force_intent, enable_graph_traversal=enable_graph_traversal
    )
    found = results.classification
    header = f"[intent: {found.intent} {found.confidence:.2f} ({found.source})]"
    if found.temporal_start:
        header += f" dates {found.temporal_start}..{found.temporal_end}"
    lines = [header]
    if results:
        lines.append(f'Found {len(results)} for "{query}":')
        lines.extend(result_lines(results, snippets=False))
    else:
        lines.append(f'No results for "{query}"')
    lines.append("stages: " + (" > ".join(results.stages) or "none"))
    lines += [f"skipped {stage}: {why}" for stage, why in results.skipped.items()]
    lines += [f"warning: {warning}" for warning in results.warnings]
    lines += degraded_lines(results)
    return "\n".join(lines), {"query": query, **results.to_dict()}


def find_causal_links(
    vault: Vault, docid: str, direction: str = "both", depth: int = 5
) -> ToolResult:
    """The causal chain through a document: what it caused, what caused it, or both."""
    if not isinstance(docid, str) or not docid.strip():
        raise InvalidQueryError("docid is required")
    links = vault.intent.find_causal_links(docid.strip(), direction, depth)
    lines = [f"Causal links of #{links.docid} {links.title} ({links.direction}, depth {depth}):"]
    for link in links:
        lines.append(
            f"  {'  ' * (link.hop - 1)}#{link.source_docid} {link.source_title} "
            f"--[causal {link.weight:.2f}]--> #{link.target_docid} {link.target_title}"
        )
    if not links:
        lines.append("  none")
    return "\n".join(lines), links.to_dict()


def query_plan(vault: Vault, query: str, limit: int = 10, compact: bool = True) -> ToolResult:
    """Split a multi-topic question into sub-queries, run each, merge with provenance."""
    results = vault.intent.query_plan(query, limit)
    lines = ["Plan:"]
    lines += [
        f"  [{index}] {clause.type} p{clause.priority}: {clause.query}"
        for index, clause in enumerate(results.clauses)
    ]
    if results:
        lines.append(f'Found {len(results)} for "{query}":')
        for result in results:
            first, *rest = result_lines([result], snippets=not compact)
            found = ",".join(str(index) for index in results.provenance.get(result.docid, []))
            lines += [f"{first}  (clauses {found})", *rest]
    else:
        lines.append(f'No results for "{query}"')
    lines += [f"skipped {stage}: {why}" for stage, why in results.skipped.items()]
    lines += [f"warning: {warning}" for warning in results.warnings]
    lines += degraded_lines(results)
    return "\n".join(lines), {"query": query, **results.to_dict()}
