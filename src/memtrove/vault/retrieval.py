"""The retrieval area (``vault.retrieval``): ranked searches over the vault's documents.

Contract: given the vault's database, its retriever (the BM25, vector, hybrid and full
pipelines of :mod:`memtrove.retrieval.pipeline`, and its vectors) and the sessions area
(:mod:`.sessions`), whose co-activation counts composite scoring reads. Its statements are
those of :mod:`memtrove.retrieval` (candidates, presentation, similarity) and the look-ups of
:mod:`memtrove.index.documents` (``documents``, ``content``): it only reads. The intent area
(:mod:`.intent`) ranks through its :meth:`~RetrievalArea.check`, :meth:`~RetrievalArea.bodies`,
:meth:`~RetrievalArea.co_activation`, :meth:`~RetrievalArea.collapsed` and
:meth:`~RetrievalArea.present`.

Every result list (search, vsearch, hybrid, query, find_similar) shows a body once: of
documents with identical content (one content hash: a translated tree that kept some files
as they were, a vendored copy) only the best-ranked stays, and its ``also_at`` names the
other active copies. Each method asks its retrieval channel for a few more hits than
``limit`` (``COLLAPSE_MARGIN``) and, when copies still leave the list short while the
channel had more, asks again twice as deep (at most ``COLLAPSE_ROUNDS`` times).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memtrove.errors import InvalidQueryError
from memtrove.index.documents import document_rows, get_document, identical_copies
from memtrove.results import SearchResults
from memtrove.retrieval.arguments import check_content_types, check_date, check_limit
from memtrove.retrieval.candidates import recent_documents, scoring_inputs
from memtrove.retrieval.filters import Filters, internal_filters
from memtrove.retrieval.fts import MAX_QUERY_CHARS
from memtrove.retrieval.pipeline import CANDIDATE_LIMIT, Ranking
from memtrove.retrieval.presentation import present_results, strip_frontmatter
from memtrove.retrieval.recency import recency_plan
from memtrove.retrieval.scoring import RECENCY_FIRST_TYPES, ScoringInput
from memtrove.text import scrub

if TYPE_CHECKING:
    from memtrove.db.database import Database
    from memtrove.retrieval.pipeline import Retriever
    from memtrove.vault.sessions import SessionsArea

__all__ = ["COLLAPSE_MARGIN", "COLLAPSE_ROUNDS", "Copies", "RetrievalArea"]

COLLAPSE_MARGIN = 10  # hits fetched past ``limit`` so that collapsing copies still fills it
COLLAPSE_ROUNDS = 3  # fetches, each twice as deep, before settling for fewer results

Copies = dict[int, list[str]]  # doc id -> the other active paths with its exact body


class RetrievalArea:
    """Searching documents: keyword, vector, hybrid, the full pipeline, recent, similar."""

    def __init__(
        self,
        database: Database,
        *,
        retriever: Retriever,
        sessions: SessionsArea,
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self._retriever, self._sessions = retriever, sessions

    # -- searches ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 10,
        collections: Sequence[str] | None = None,
        content_types: Sequence[str] | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        min_score: float = 0.0,
        include_internal: bool = True,
        kept_internal: Sequence[str] = (),
        hidden_parts: Sequence[str] = (),
        hidden_collections: Sequence[str] = (),
    ) -> SearchResults:
        """BM25 keyword search; results ranked by ``|bm25| / (1 + |bm25|)``.

        A question about time ("latest", "yesterday", "where were we", "what do we use now")
        is ranked by composite score instead (``stages`` then ends in ``composite``; see
        :mod:`memtrove.retrieval.recency`); the same holds for :meth:`vsearch` and
        :meth:`hybrid`. ``include_internal=False`` leaves internal collections out (unless one
        is named in ``collections``) but for the ``collection/path`` prefixes in
        ``kept_internal``; the same holds for every search method. ``hidden_parts`` (text
        anywhere in ``collection/path``) and ``hidden_collections`` are left out too (here, in
        :meth:`hybrid` and :meth:`recent`: what the hooks never inject).
        """
        query, limit, filters = self.check(
            query, limit, collections, content_types, since, until, include_internal
        )
        filters = _narrowed(filters, kept_internal, hidden_parts, hidden_collections)
        plan = recency_plan(query)

        def fetch(depth: int) -> Ranking:
            if plan is not None:
                hits = self._retriever.bm25(query, max(depth, CANDIDATE_LIMIT), filters)
                return self._retriever.recency_ranking(hits, depth, Ranking(stages=["bm25"]), plan)
            return Ranking(hits=self._retriever.bm25(query, depth, filters), stages=["bm25"])

        with self._lock:
            ranking, copies = self.collapsed(fetch, limit, filters=filters)
            return self.present(query, ranking, min_score, copies=copies, limit=limit)

    def vsearch(
        self,
        query: str,
        limit: int = 10,
        collections: Sequence[str] | None = None,
        content_types: Sequence[str] | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        min_score: float = 0.0,
        include_internal: bool = True,
    ) -> SearchResults:
        """Vector search: documents ranked by the cosine similarity of their best fragment."""
        query, limit, filters = self.check(
            query, limit, collections, content_types, since, until, include_internal
        )
        if not query.strip():
            return SearchResults(stages=[])
        plan = recency_plan(query)

        def fetch(depth: int) -> Ranking:
            hits = self._retriever.vectors(
                query, max(depth, CANDIDATE_LIMIT) if plan else depth, filters
            )
            ranking = Ranking(
                hits=[(doc, score) for doc, score, _ in hits],
                stages=["vector"],
                best_seq={doc: seq for doc, _, seq in hits},
            )
            if plan is not None:
                ranking = self._retriever.recency_ranking(ranking.hits, depth, ranking, plan)
            return ranking

        with self._lock:
            ranking, copies = self.collapsed(fetch, limit, filters=filters)
            return self.present(query, ranking, min_score, copies=copies, limit=limit)

    def hybrid(
        self,
        query: str,
        limit: int = 10,
        collections: Sequence[str] | None = None,
        content_types: Sequence[str] | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        min_score: float = 0.0,
        vectors: bool = True,
        snippets: bool = True,
        passages: bool = False,
        include_internal: bool = True,
        kept_internal: Sequence[str] = (),
        hidden_parts: Sequence[str] = (),
        hidden_collections: Sequence[str] = (),
    ) -> SearchResults:
        """BM25 and vector search fused, with no model server involved.

        ``vectors=False`` keeps to BM25 (with conversation context), loading no model: the
        hooks' keyword leg. ``SearchResults.scale`` says how strong the best hit is;
        ``snippets=False`` leaves snippets empty (the hooks render their own passages);
        ``passages=True`` scores keywords by each document's best passage as well (the
        hooks' discovery: a long record is found by the section that answers);
        ``kept_internal``: ``collection/path`` prefixes of internal documents kept when
        ``include_internal`` is False."""
        query, limit, filters = self.check(
            query, limit, collections, content_types, since, until, include_internal
        )
        filters = _narrowed(filters, kept_internal, hidden_parts, hidden_collections)
        plan = recency_plan(query)

        def fetch(depth: int) -> Ranking:
            ranking = self._retriever.hybrid(
                query,
                max(depth, CANDIDATE_LIMIT) if plan else depth,
                filters,
                vectors=vectors,
                passages=passages,
            )
            if plan is not None:
                ranking = self._retriever.recency_ranking(ranking.hits, depth, ranking, plan)
            return ranking

        with self._lock:
            ranking, copies = self.collapsed(fetch, limit, filters=filters)
            return self.present(
                query, ranking, min_score, copies=copies, snippets=snippets, limit=limit
            )

    def query(
        self,
        query: str,
        limit: int = 10,
        intent: str | None = None,
        collections: Sequence[str] | None = None,
        compact: bool = True,
        *,
        content_types: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        min_score: float = 0.0,
        diverse: bool = True,
        candidate_limit: int = CANDIDATE_LIMIT,
        include_internal: bool = True,
    ) -> SearchResults:
        """The full hybrid pipeline (see :mod:`memtrove.retrieval.pipeline`).

        ``intent`` is a hint about what the query is for; it steers expansion, chunk
        selection, reranking and snippets, and turns off the BM25 bypass. ``compact=False``
        adds each document's full text as ``content``. The result's ``stages`` and
        ``skipped`` say which stages ran.
        """
        query, limit, filters = self.check(
            query, limit, collections, content_types, since, until, include_internal
        )
        candidate_limit = check_limit(candidate_limit)
        intent = intent.strip() or None if isinstance(intent, str) else None

        def fetch(depth: int) -> Ranking:
            return self._retriever.query(
                query,
                depth,
                filters,
                intent=intent,
                candidate_limit=candidate_limit,
                diverse=diverse,
                co_activation=self.co_activation,
                diverse_limit=limit,
                texts=self.bodies,
            )

        with self._lock:
            # The pipeline ranks max(candidate_limit, limit) candidates whatever it returns:
            # asking for all of them first costs nothing, and widens no stage.
            ranking, copies = self.collapsed(
                fetch, limit, max(limit, candidate_limit), filters=filters
            )
            return self.present(
                query,
                ranking,
                min_score,
                intent=intent,
                full=not compact,
                copies=copies,
                limit=limit,
            )

    def recent(
        self,
        limit: int = 5,
        content_types: Sequence[str] = RECENCY_FIRST_TYPES,
        collections: Sequence[str] | None = None,
        *,
        include_internal: bool = True,
        kept_internal: Sequence[str] = (),
        hidden_parts: Sequence[str] = (),
        hidden_collections: Sequence[str] = (),
    ) -> SearchResults:
        """The newest active documents of ``content_types`` (handoffs, decisions, progress
        notes by default) by effective time, newest first; scores fall from 1.0 by rank.
        What "where were we?" is about, when no word of it matches anything."""
        limit = check_limit(limit)
        filters = internal_filters(collections, include_internal)
        filters = _narrowed(filters, kept_internal, hidden_parts, hidden_collections)
        with self._lock:
            ids = recent_documents(self._connection, content_types, limit, filters)
            hits = [(doc, 1.0 / (rank + 1)) for rank, doc in enumerate(ids)]
            return self.present("", Ranking(hits=hits, stages=["recent"]), 0.0)

    def find_similar(
        self, ref: str, limit: int = 5, *, include_internal: bool = True
    ) -> SearchResults:
        """Documents nearest to ``ref`` by its own vectors (the mean of its fragments'), the
        document itself excluded; see :mod:`memtrove.retrieval.similar`.

        Raises EmbeddingSpaceError (with the fix) when there are no vectors to compare.
        """
        from memtrove.retrieval.similar import similar_documents

        limit = check_limit(limit)
        with self._lock:
            document = get_document(self._connection, ref)
            # a note of an internal collection asks for its like: internal ones stay in
            filters = internal_filters([document.collection], include_internal)
            filters = filters._replace(collections=None)

            def fetch(depth: int) -> Ranking:
                hits = similar_documents(
                    self._connection, document, depth, self._retriever.matrix, filters
                )
                return Ranking(
                    hits=[(hit.doc_id, hit.score) for hit in hits],
                    stages=["vector"],
                    best_seq={hit.doc_id: hit.seq for hit in hits},
                )

            ranking, copies = self.collapsed(fetch, limit, filters=filters)
            return self.present("", ranking, 0.0, copies=copies, limit=limit)

    def scoring_inputs(self, candidates: Sequence[tuple[int, float]]) -> list[ScoringInput[int]]:
        """What composite scoring reads of each ``(doc id, relevance)`` candidate: type,
        dates, quality, confidence, pin, snooze, access, length, revisions, supersession."""
        with self._lock:
            return scoring_inputs(self._connection, candidates)

    # -- ranking helpers (the intent area ranks through them too) ----------------------------

    def check(
        self,
        query: str,
        limit: int,
        collections: Sequence[str] | None,
        content_types: Sequence[str] | None,
        since: str | None,
        until: str | None,
        include_internal: bool = True,
    ) -> tuple[str, int, Filters]:
        """``query`` cleaned and cut, ``limit`` checked, and the filters the arguments make."""
        if not isinstance(query, str):
            raise InvalidQueryError("the query must be text")
        query = scrub(query).strip()  # "\n" alone is not a question (its vector is noise)
        if len(query) > MAX_QUERY_CHARS:
            query = query[:MAX_QUERY_CHARS]
        return (
            query,
            check_limit(limit),
            internal_filters(collections, include_internal)._replace(
                content_types=check_content_types(content_types),
                since=check_date("since", since),
                until=check_date("until", until, end_of_day=True),
            ),
        )

    def bodies(self, ids: Sequence[int]) -> dict[int, str]:
        """The bodies of documents ``ids`` (front matter left out), by doc id."""
        rows = document_rows(self._connection, list(ids))
        return {doc: strip_frontmatter(str(row["text"])) for doc, row in rows.items()}

    def co_activation(self, doc_id: int) -> int:
        """How often ``doc_id`` was injected together with others (composite scoring)."""
        return self._sessions.co_activation_count(doc_id)

    def collapsed(
        self,
        fetch: Callable[[int], Ranking],
        limit: int,
        depth: int | None = None,
        *,
        filters: Filters | None = None,
    ) -> tuple[Ranking, Copies]:
        """``fetch(depth)``'s ranking with identical copies collapsed and cut to ``limit``,
        and each kept document's other copies (see the module docstring).

        Every channel leaves excluded internal documents out in its query; a document a
        channel adds by other means (a graph edge) is dropped here, and the fetch goes
        deeper while that leaves the list short."""
        depth = depth or limit + COLLAPSE_MARGIN
        warnings: list[str] = []
        excluded = 0
        for _ in range(COLLAPSE_ROUNDS):
            ranking = fetch(depth)
            warnings.extend(ranking.warnings)  # a rerun may rate-limit a warning away
            copies = identical_copies(self._connection, [doc for doc, _ in ranking.hits])
            hits = _first_of_each_body(ranking.hits, copies)
            if filters is not None and filters.narrows:
                kept = self._admitted(hits, filters)
                excluded, hits = len(hits) - len(kept), kept
            if len(hits) >= limit or len(ranking.hits) < depth:
                break
            depth *= 2
        else:
            if len(hits) < limit:  # the channel had more, but the rounds ran out
                ranking.dropped["excluded-dominant" if excluded else "cap-truncation"] = len(
                    ranking.hits
                ) - len(hits)
        ranking.hits = hits[:limit]
        ranking.warnings = list(dict.fromkeys(warnings))
        others = {doc: copies[doc][1] for doc, _ in ranking.hits if copies.get(doc, ("", []))[1]}
        return ranking, others

    def _admitted(self, hits: list[tuple[int, float]], filters: Filters) -> list[tuple[int, float]]:
        """``hits`` whose documents pass the internal exclusion and hidden parts of ``filters``."""
        ids = [doc for doc, _ in hits]
        where: dict[int, tuple[str, str]] = {}
        for start in range(0, len(ids), 900):
            chunk = ids[start : start + 900]
            rows = self._connection.execute(
                "SELECT id, collection, path FROM documents "
                f"WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            where.update({int(row[0]): (str(row[1]), str(row[2])) for row in rows})
        return [
            (doc, score) for doc, score in hits if doc not in where or filters.admits(*where[doc])
        ]

    def present(
        self,
        query: str,
        ranking: Ranking,
        min_score: float,
        *,
        intent: str | None = None,
        full: bool = False,
        copies: Copies | None = None,
        snippets: bool = True,
        limit: int | None = None,
    ) -> SearchResults:
        """``ranking`` as results (copies in ``also_at``), with why it fell short, if it did."""
        results = present_results(
            self._connection, query, ranking, min_score, intent=intent, full=full, snippets=snippets
        )
        for index, result in enumerate(results):
            if copies and copies.get(result.doc_id):
                results[index] = result._replace(also_at=tuple(copies[result.doc_id]))
        reasons = ["leg-failed"] if ranking.failed else []
        below = sum(1 for _, score in ranking.hits if score < min_score)
        if below and limit is not None and len(results) < limit:
            reasons.append("min-score")
        reasons += [reason for reason, count in ranking.dropped.items() if count]
        results.degraded_reason = ",".join(reasons) or None
        results.degraded_legs = list(ranking.failed)
        return results


def _narrowed(
    filters: Filters,
    kept_internal: Sequence[str],
    hidden_parts: Sequence[str],
    hidden_collections: Sequence[str],
) -> Filters:
    return filters._replace(
        kept_internal=tuple(kept_internal),
        hidden_parts=tuple(part for part in hidden_parts if part),
        hidden_collections=tuple(hidden_collections),
    )


def _first_of_each_body(
    hits: Sequence[tuple[int, float]], copies: dict[int, tuple[str, list[str]]]
) -> list[tuple[int, float]]:
    """``hits`` (best first) keeping only the first document of each content hash."""
    seen: set[str] = set()
    kept: list[tuple[int, float]] = []
    for doc, score in hits:
        body_hash = copies[doc][0] if doc in copies else f"#{doc}"  # unknown: keep it
        if body_hash not in seen:
            seen.add(body_hash)
            kept.append((doc, score))
    return kept
