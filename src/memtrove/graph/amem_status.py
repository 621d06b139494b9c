"""Reading A-MEM's work: a document's note changes (``memory_evolution_status``) and the
``doctor`` line on enrichment."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memtrove.db.connection import Connection
from memtrove.errors import DocumentNotFoundError, InvalidQueryError
from memtrove.graph.amem import LINK_THRESHOLD
from memtrove.graph.amem_notes import MAX_KEYWORDS, items
from memtrove.results import Check

__all__ = ["EvolutionEntry", "EvolutionStatus", "enrichment_check", "evolution_status"]


@dataclass(frozen=True)
class EvolutionEntry:
    """One change to a document's note."""

    version: int
    triggered_by: str | None  # the docid of the document that caused it
    triggered_by_title: str | None
    previous_keywords: list[str]
    new_keywords: list[str]
    previous_context: str | None
    new_context: str | None
    reasoning: str | None
    created_at: str


@dataclass(frozen=True)
class EvolutionStatus:
    """``memory_evolution_status``: a document's note changes, newest first."""

    docid: str
    title: str
    keywords: list[str]
    context: str | None
    count: int
    evolution: list[EvolutionEntry]

    def to_dict(self) -> dict[str, Any]:
        return {
            "docid": self.docid,
            "title": self.title,
            "keywords": self.keywords,
            "context": self.context,
            "count": self.count,
            "evolution": [entry.__dict__ for entry in self.evolution],
        }

    def text(self) -> str:
        lines = [f"{self.title} (#{self.docid}): {self.count} change(s)"]
        for entry in self.evolution:
            by = f"#{entry.triggered_by}" if entry.triggered_by else "a removed document"
            lines.append(f"v{entry.version} {entry.created_at} by {by}: {entry.reasoning or ''}")
            if entry.previous_keywords != entry.new_keywords:
                lines.append(
                    f"  keywords: {', '.join(entry.previous_keywords)} -> "
                    f"{', '.join(entry.new_keywords)}"
                )
            if entry.previous_context != entry.new_context:
                lines.append(f"  context: {entry.previous_context} -> {entry.new_context}")
        return "\n".join(lines)


def _keyword_list(value: Any) -> list[str]:
    if value is None:
        return []
    try:
        return list(items(json.loads(value), MAX_KEYWORDS) or ())
    except (ValueError, RecursionError):
        return []


def evolution_status(connection: Connection, doc_id: int, limit: int = 10) -> EvolutionStatus:
    """The newest ``limit`` (1-100) changes to document ``doc_id``'s note."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise InvalidQueryError(f"limit must be between 1 and 100, got {limit!r}")
    row = connection.execute(
        "SELECT docid, title, amem_keywords, amem_context FROM documents WHERE id = ?", (doc_id,)
    ).fetchone()
    if row is None:
        raise DocumentNotFoundError(f"no document with id {doc_id}")
    count = connection.execute(
        "SELECT COUNT(*) FROM memory_evolution WHERE memory_id = ?", (doc_id,)
    ).fetchone()[0]
    entries = [
        EvolutionEntry(
            int(version),
            by_docid,
            by_title,
            _keyword_list(old_k),
            _keyword_list(new_k),
            old_c,
            new_c,
            reasoning,
            str(created),
        )
        for version, by_docid, by_title, old_k, new_k, old_c, new_c, reasoning, created in (
            connection.execute(
                "SELECT e.version, t.docid, t.title, e.previous_keywords, e.new_keywords, "
                "e.previous_context, e.new_context, e.reasoning, e.created_at "
                "FROM memory_evolution e LEFT JOIN documents t ON t.id = e.triggered_by "
                "WHERE e.memory_id = ? ORDER BY e.version DESC LIMIT ?",
                (doc_id, limit),
            )
        )
    ]
    return EvolutionStatus(
        str(row[0]), str(row[1]), _keyword_list(row[2]), row[3], int(count), entries
    )


def enrichment_check(connection: Connection, has_llm: bool) -> Check:
    """The ``doctor`` line on enrichment: with or without an LLM, and how far it got."""
    active, enriched = connection.execute(
        "SELECT COUNT(*), COUNT(s.doc_id) FROM documents d "
        "LEFT JOIN entity_enrichment_state s ON s.doc_id = d.id WHERE d.active = 1"
    ).fetchone()
    done = f"{enriched} of {active} active documents enriched"
    fix = (
        "`memtrove reindex --enrich` enriches new and changed documents"
        if enriched < active
        else ""
    )
    if has_llm:
        return Check("enrichment", "ok", f"LLM notes and classified links; {done}", fix)
    detail = (
        "runs without an LLM: keywords from each document's salient terms, tags and context "
        f"from frontmatter only, cosine-only semantic links (>= {LINK_THRESHOLD}); {done}"
    )
    return Check("enrichment", "ok", detail, fix or "set MEMTROVE_LLM_URL for LLM notes")
