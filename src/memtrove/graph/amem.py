"""A-MEM enrichment: each new or changed document gets a note (keywords, tags, a one-line
context) and typed links to its vector neighbours; a newer document may change a
neighbour's note, recorded in ``memory_evolution``.

- **Note.** With an LLM: ``{"keywords": [...], "tags": [...], "context": "..."}`` from the
  title and the first :data:`LLM_BODY_CHARS` characters. Without one (or when its answer is
  unreadable, fail-open): keywords are the document's most salient terms (TF-IDF of its own
  words against the text index's vocabulary, title words counting twice), tags
  are its frontmatter ``tags`` and the context its frontmatter ``description``/``summary``.
- **Links** (only when the vault has vectors): the :data:`NEIGHBOURS` documents whose
  centroid (the normalised mean of their fragment vectors) is nearest. With an LLM, those
  with cosine >= :data:`CANDIDATE_THRESHOLD` are classified ``semantic`` / ``supporting`` /
  ``contradicts`` (or none) with a confidence (the edge weight, kept when >=
  :data:`MIN_CONFIDENCE`) and a reason (edge metadata). Without one, neighbours with cosine
  >= :data:`LINK_THRESHOLD` become ``semantic`` edges weighted by the cosine.
- **Evolution.** The LLM may answer new keywords or a new context for an already enriched
  neighbour; when they differ from its note, the note changes and a ``memory_evolution`` row
  (numbered per document) keeps the old and new values and the reason.
- **State.** ``entity_enrichment_state`` holds, per document, the hash of its title and body
  (the body's content hash) it was enriched from: an unchanged document is never enriched
  again unless forced. A document whose LLM call failed is written with the fallback note but
  not marked, so the next run asks again.

Every model call for a document happens before anything of it is written; its note, semantic
links, evolutions and state are then written in one transaction (classified edges just
before, weight-monotonic, so a retry after a crash changes nothing twice).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memtrove.db.connection import Connection, write_step, write_transaction
from memtrove.errors import ModelError
from memtrove.graph.amem_notes import (
    LINK_TYPES,
    MAX_KEYWORDS,
    Note,
    Vocabulary,
    heuristic_note,
    items,
    links_prompt,
    note_prompt,
    parse_links_answer,
    parse_note_answer,
)
from memtrove.graph.amem_vectors import Centroids
from memtrove.graph.relations import insert_semantic_edges, upsert_relation
from memtrove.text import to_iso

if TYPE_CHECKING:
    from memtrove.index.workers import Helper
    from memtrove.models.protocols import LLM

__all__ = [
    "CANDIDATE_THRESHOLD",
    "LINK_THRESHOLD",
    "NEIGHBOURS",
    "EnrichmentReport",
    "enrich_documents",
    "input_hash",
    "pending_documents",
]

LINK_THRESHOLD = 0.7  # cosine for a semantic link without an LLM (as build_graphs)
CANDIDATE_THRESHOLD = 0.5  # least cosine of a neighbour offered to the LLM
MIN_CONFIDENCE = 0.5
NEIGHBOURS = 5
_BATCH = 256


@dataclass(frozen=True)
class _Link:
    target_id: int
    relation_type: str
    weight: float
    reasoning: str | None = None


@dataclass(frozen=True)
class _Evolution:
    memory_id: int
    keywords: tuple[str, ...] | None
    context: str | None
    reasoning: str | None


@dataclass
class EnrichmentReport:
    """What one enrichment run did."""

    documents: int = 0
    unchanged: int = 0
    llm_notes: int = 0
    heuristic_notes: int = 0
    llm_failures: int = 0
    links: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LINK_TYPES, 0))
    evolutions: int = 0
    entities: int | None = None  # None: entity extraction is not available
    vectors: bool = False
    seconds: float = 0.0

    def text(self) -> str:
        links = ", ".join(f"{kind} {count}" for kind, count in self.links.items())
        line = (
            f"enriched {self.documents} document(s) (llm {self.llm_notes}, heuristic "
            f"{self.heuristic_notes}, llm failures {self.llm_failures}), {self.unchanged} "
            f"unchanged; links: {links}; evolutions {self.evolutions}"
        )
        if self.entities is not None:
            line += f"; entities {self.entities}"
        if not self.vectors:
            line += "\nno vectors yet: no links (`memtrove embed`, then `reindex --enrich`)"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "unchanged": self.unchanged,
            "llm_notes": self.llm_notes,
            "heuristic_notes": self.heuristic_notes,
            "llm_failures": self.llm_failures,
            "links": dict(self.links),
            "evolutions": self.evolutions,
            "entities": self.entities,
            "vectors": self.vectors,
            "seconds": round(self.seconds, 3),
        }


# -- state ------------------------------------------------------------------------------------


def input_hash(title: str, content_hash: str) -> str:
    """The hash a document is enriched from: its title and its body (by content hash)."""
    return hashlib.sha256(f"{title}\x00{content_hash}".encode("utf-8", "surrogatepass")).hexdigest()


def pending_documents(
    connection: Connection, *, force: bool = False, limit: int | None = None
) -> tuple[list[int], int]:
    """(active documents to enrich, newest first; how many are unchanged since their last
    enrichment). ``force`` takes every active document."""
    rows = connection.execute(
        "SELECT d.id, d.title, d.hash, s.input_hash FROM documents d "
        "LEFT JOIN entity_enrichment_state s ON s.doc_id = d.id WHERE d.active = 1 "
        "ORDER BY COALESCE(d.authored_at, d.modified_at) DESC, d.id DESC"
    ).fetchall()
    pending: list[int] = []
    unchanged = 0
    for doc_id, title, body_hash, stored in rows:
        if force or stored != input_hash(str(title), str(body_hash)):
            pending.append(int(doc_id))
        else:
            unchanged += 1
    if limit is not None:
        pending = pending[:limit]
    return pending, unchanged


# -- the run ----------------------------------------------------------------------------------


@dataclass
class _Plan:
    doc_id: int
    title: str
    body_hash: str
    note: Note
    links: list[_Link] = field(default_factory=list)
    evolutions: list[_Evolution] = field(default_factory=list)
    mark: bool = True  # record the enrichment state (not after a failed LLM call)


def _texts(connection: Connection, doc_ids: Sequence[int]) -> dict[int, tuple[str, str, str, Any]]:
    """id -> (title, text, content hash, frontmatter tags JSON) of active documents."""
    found: dict[int, tuple[str, str, str, Any]] = {}
    ids = list(doc_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for doc_id, title, text, body_hash, tags in connection.execute(
            "SELECT d.id, d.title, c.doc, d.hash, d.tags FROM documents d "
            f"JOIN content c ON c.hash = d.hash WHERE d.active = 1 "
            f"AND d.id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            found[int(doc_id)] = (str(title), str(text), str(body_hash), tags)
    return found


def _stored_note(keywords: Any, context: Any) -> Note | None:
    if keywords is None:
        return None
    try:
        parsed = json.loads(keywords)
    except (ValueError, RecursionError):
        return None
    return Note(items(parsed, MAX_KEYWORDS) or (), (), context, "stored")


def _notes(connection: Connection, doc_ids: Sequence[int]) -> dict[int, Note]:
    """The stored notes of the documents that have one."""
    ids = list(doc_ids)
    notes: dict[int, Note] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for doc_id, keywords, context in connection.execute(
            "SELECT id, amem_keywords, amem_context FROM documents "
            f"WHERE id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            note = _stored_note(keywords, context)
            if note is not None:
                notes[int(doc_id)] = note
    return notes


def _llm_plan(
    plan: _Plan,
    text: str,
    llm: LLM,
    candidates: list[tuple[int, float]],
    others: dict[int, tuple[str, str, str, Any]],
    notes: dict[int, Note],
    redact: Callable[[str], str],
) -> bool:
    """Ask the LLM for the note and the links; False when it failed (the heuristic note and
    cosine links stand, fail-open)."""
    try:
        note = parse_note_answer(llm.complete(note_prompt(plan.title, text), max_tokens=300))
    except ModelError:
        note = None
    if note is None:
        return False
    plan.note = Note(
        tuple(redact(word) for word in note.keywords),
        tuple(redact(tag) for tag in note.tags),
        redact(note.context) if note.context else None,
        "llm",
    )
    offered = [(target, cosine) for target, cosine in candidates if target in others]
    if not offered:
        plan.links = []
        return True
    shown = [(others[t][0], others[t][1], notes.get(t)) for t, _ in offered]
    try:
        answer = llm.complete(links_prompt(plan.title, text, plan.note, shown), max_tokens=800)
        items = parse_links_answer(answer, len(offered))
    except ModelError:
        items = None
    if items is None:
        return False  # the cosine links of the plan stand
    plan.links = []
    for item in items:
        target = offered[item["index"]][0]
        reasoning = redact(item["reasoning"]) if item["reasoning"] else None
        if item["relation"] and item["confidence"] >= MIN_CONFIDENCE:
            plan.links.append(_Link(target, item["relation"], item["confidence"], reasoning))
        keywords, context = item["keywords"], item["context"]
        if target in notes and (keywords or context):
            plan.evolutions.append(
                _Evolution(
                    target,
                    tuple(redact(word) for word in keywords) if keywords else None,
                    redact(context) if context else None,
                    reasoning,
                )
            )
    return True


def _record_evolution(connection: Connection, plan: _Plan, evolution: _Evolution, now: str) -> bool:
    row = connection.execute(
        "SELECT amem_keywords, amem_context FROM documents WHERE id = ?", (evolution.memory_id,)
    ).fetchone()
    if row is None or row[0] is None:
        return False
    old_keywords, old_context = row[0], row[1]
    new_keywords = (
        json.dumps(list(evolution.keywords), ensure_ascii=False)
        if evolution.keywords
        else old_keywords
    )
    new_context = evolution.context or old_context
    if new_keywords == old_keywords and new_context == old_context:
        return False
    version = connection.execute(
        "SELECT COALESCE(MAX(version), 0) + 1 FROM memory_evolution WHERE memory_id = ?",
        (evolution.memory_id,),
    ).fetchone()[0]
    connection.execute(
        "INSERT INTO memory_evolution (memory_id, triggered_by, version, previous_keywords, "
        "new_keywords, previous_context, new_context, reasoning, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            evolution.memory_id,
            plan.doc_id,
            int(version),
            old_keywords,
            new_keywords,
            old_context,
            new_context,
            evolution.reasoning,
            now,
        ),
    )
    connection.execute(
        "UPDATE documents SET amem_keywords = ?, amem_context = ? WHERE id = ?",
        (new_keywords, new_context, evolution.memory_id),
    )
    return True


def _write(connection: Connection, plans: Sequence[_Plan], report: EnrichmentReport) -> None:
    for plan in plans:  # weight-monotonic upserts, each its own transaction: safe to repeat
        for link in plan.links:
            if link.relation_type != "semantic":
                metadata = {"by": "amem", "reasoning": link.reasoning}
                upsert_relation(
                    connection,
                    plan.doc_id,
                    link.target_id,
                    link.relation_type,
                    link.weight,
                    metadata,
                )
                report.links[link.relation_type] += 1
    now = to_iso(datetime.now(UTC))
    with write_step(connection):
        # Cosine links without reasoning share their metadata: written together, in the
        # order they come (first writer wins), one statement for the run of them.
        plain: list[tuple[int, int, float]] = []
        for plan in plans:
            note = plan.note
            connection.execute(
                "UPDATE documents SET amem_keywords = ?, amem_tags = ?, amem_context = ? "
                "WHERE id = ?",
                (
                    json.dumps(list(note.keywords), ensure_ascii=False),
                    json.dumps(list(note.tags), ensure_ascii=False),
                    note.context,
                    plan.doc_id,
                ),
            )
            for link in plan.links:
                if link.relation_type != "semantic":
                    continue
                if not link.reasoning:
                    plain.append((plan.doc_id, link.target_id, link.weight))
                    continue
                report.links["semantic"] += _semantic(connection, plain)
                report.links["semantic"] += insert_semantic_edges(
                    connection,
                    [(plan.doc_id, link.target_id, link.weight)],
                    metadata={"by": "amem", "reasoning": link.reasoning},
                )
            for evolution in plan.evolutions:
                report.evolutions += _record_evolution(connection, plan, evolution, now)
            if plan.mark:
                connection.execute(
                    "INSERT INTO entity_enrichment_state (doc_id, input_hash, enriched_at) "
                    "VALUES (?, ?, ?) ON CONFLICT (doc_id) DO UPDATE SET "
                    "input_hash = excluded.input_hash, enriched_at = excluded.enriched_at",
                    (plan.doc_id, input_hash(plan.title, plan.body_hash), now),
                )
            report.documents += 1
            if note.source == "llm":
                report.llm_notes += 1
            else:
                report.heuristic_notes += 1
        report.links["semantic"] += _semantic(connection, plain)


def _semantic(connection: Connection, edges: list[tuple[int, int, float]]) -> int:
    """Write (and empty) a run of cosine links; how many were new."""
    if not edges:
        return 0
    added = insert_semantic_edges(connection, edges, metadata={"by": "amem"})
    edges.clear()
    return added


def _entity_pass(connection: Connection, guard: AbstractContextManager[Any], documents: int) -> Any:
    try:  # entity extraction lives in its own modules; enrichment skips it when absent
        from memtrove.graph.amem_entities import EntityPass
    except ImportError:
        return None
    return EntityPass(connection, guard, documents)


def enrich_documents(
    connection: Connection,
    doc_ids: Sequence[int],
    *,
    llm: LLM | None = None,
    redact: Callable[[str], str] | None = None,
    lock: AbstractContextManager[Any] | None = None,
    entities: bool = True,
    unchanged: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> EnrichmentReport:
    """Enrich ``doc_ids`` (see the module doc). ``lock`` is held for database work, never
    across a model call; ``redact`` is applied to what the LLM writes; ``entities``
    extracts each document's entities too (when that module is installed)."""
    import time

    started = time.perf_counter()
    guard: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
    report = EnrichmentReport(unchanged=unchanged)
    bulk = len(doc_ids) if llm is None else 0
    entity_pass = _entity_pass(connection, guard, bulk) if entities else None
    report.entities = 0 if entity_pass is not None else None
    page_cache: AbstractContextManager[Any] = nullcontext()
    if entity_pass is not None and llm is None:
        page_cache = entity_pass.page_cache(len(doc_ids))
    from memtrove.graph.amem_ahead import start_helper

    helper = start_helper(len(doc_ids)) if llm is None else None
    try:
        with page_cache:
            _enrich(connection, doc_ids, llm, redact, guard, entity_pass, report, progress, helper)
            if entity_pass is not None:  # linked once every mention is in
                entity_pass.link(helper)
                report.entities = entity_pass.mentions
    finally:
        if helper is not None:
            helper.stop()
        if entity_pass is not None:
            entity_pass.close()
    report.seconds = time.perf_counter() - started
    return report


def _enrich(
    connection: Connection,
    doc_ids: Sequence[int],
    llm: LLM | None,
    redact: Callable[[str], str] | None,
    guard: AbstractContextManager[Any],
    entity_pass: Any,
    report: EnrichmentReport,
    progress: Callable[[int, int], None] | None,
    helper: Helper | None = None,
) -> None:
    with guard:
        vocabulary = Vocabulary(connection)
        if len(doc_ids) > 100:  # one scan beats thousands of lookups
            vocabulary.preload()
        centroids = Centroids(connection)
    report.vectors = len(centroids.ids) > 0
    if llm is not None:
        loaded = (vocabulary, centroids)
        _enrich_with(llm, connection, doc_ids, redact, guard, entity_pass, report, progress, loaded)
        return
    from memtrove.graph.amem_ahead import findings

    def fetch(batch: Sequence[int]) -> dict[int, tuple[str, str, str, Any]]:
        with guard:
            return _texts(connection, batch)

    batches = [list(doc_ids[start : start + _BATCH]) for start in range(0, len(doc_ids), _BATCH)]
    done = 0
    for batch, texts, found in findings(
        batches, fetch, vocabulary, guard, entities=entity_pass is not None, helper=helper
    ):
        with guard:
            near = centroids.neighbours(list(texts), NEIGHBOURS, LINK_THRESHOLD)
        plans: list[_Plan] = []
        for doc_id in batch:
            done += 1
            if doc_id in texts:
                plan = _Plan(doc_id, texts[doc_id][0], texts[doc_id][2], found[doc_id][0])
                plan.links = _cosine_links(near.get(doc_id, []))
                plans.append(plan)
            if progress is not None:
                progress(done, len(doc_ids))
        if not plans and entity_pass is None:
            continue
        ahead = {doc_id: entities for doc_id, (_, entities) in found.items() if entities}
        with guard, write_transaction(connection):  # the batch's notes and entities
            if entity_pass is not None:
                entity_pass.extract_batch(batch, texts, ahead)
            if plans:
                _write(connection, plans, report)


def _cosine_links(candidates: list[tuple[int, float]]) -> list[_Link]:
    return [
        _Link(target, "semantic", min(1.0, cosine))
        for target, cosine in candidates
        if cosine >= LINK_THRESHOLD
    ]


def _enrich_with(
    llm: LLM,
    connection: Connection,
    doc_ids: Sequence[int],
    redact: Callable[[str], str] | None,
    guard: AbstractContextManager[Any],
    entity_pass: Any,
    report: EnrichmentReport,
    progress: Callable[[int, int], None] | None,
    loaded: tuple[Vocabulary, Centroids],
) -> None:
    """Enrichment by ``llm``: each document asked and written on its own (no lock is held
    across a model call)."""
    scrub = redact or (lambda text: text)
    vocabulary, centroids = loaded
    done = 0
    for start in range(0, len(doc_ids), _BATCH):
        batch = list(doc_ids[start : start + _BATCH])
        with guard:
            texts = _texts(connection, batch)
            near = centroids.neighbours(list(texts), NEIGHBOURS, CANDIDATE_THRESHOLD)
            wanted = {target for pairs in near.values() for target, _ in pairs}
            others = _texts(connection, sorted(wanted))
            notes = _notes(connection, sorted(wanted))
        for doc_id in batch:
            done += 1
            if doc_id not in texts:
                continue
            title, text, body_hash, tags = texts[doc_id]
            with guard:
                note = heuristic_note(title, text, tags, vocabulary)
            plan = _Plan(doc_id, title, body_hash, note)
            candidates = near.get(doc_id, [])
            plan.links = _cosine_links(candidates)
            plan.mark = _llm_plan(plan, text, llm, candidates, others, notes, scrub)
            report.llm_failures += not plan.mark
            if entity_pass is not None:
                entity_pass.extract_one(doc_id, title, text, llm)
            with guard:  # one by one: no lock is held across a model call
                _write(connection, [plan], report)
            if progress is not None:
                progress(done, len(doc_ids))
