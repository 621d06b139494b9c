"""The Vault's reading methods: search, vector search, hybrid and query, get, list."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from memtrove.errors import InvalidQueryError
from memtrove.index.documents import document_rows, documents_after, get_document, list_documents
from memtrove.index.embedding import EmbedProgress, EmbedReport, embed_pending
from memtrove.index.stats import index_stats, lifecycle_status, vault_status
from memtrove.index.timeline import document_timeline, multi_get
from memtrove.lifecycle import sessions
from memtrove.results import (
    Document,
    DocumentSummary,
    IndexStats,
    LifecycleStatus,
    MultiGet,
    SearchResults,
    Timeline,
    VaultStatus,
)
from memtrove.retrieval.arguments import (
    MAX_LIMIT,
    check_content_types,
    check_count,
    check_date,
    check_limit,
)
from memtrove.retrieval.fts import MAX_QUERY_CHARS
from memtrove.retrieval.pipeline import CANDIDATE_LIMIT, Filters, Ranking
from memtrove.retrieval.presentation import present_results, strip_frontmatter
from memtrove.retrieval.scoring import has_recency_intent
from memtrove.retrieval.similar import similar_documents
from memtrove.vault.state import VaultState

__all__ = ["EXPORT_BATCH", "Reading"]

EXPORT_BATCH = 200  # documents read per page by Vault.export


class Reading(VaultState):
    """Searching and reading documents."""

    # -- reading -----------------------------------------------------------------------------

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
    ) -> SearchResults:
        """BM25 keyword search; results ranked by ``|bm25| / (1 + |bm25|)``.

        A query asking for recent work ("latest", "yesterday", "where were we") is ranked by
        composite score with the recency weights instead (``stages`` then ends in
        ``composite``); the same holds for :meth:`vsearch` and :meth:`hybrid`.
        """
        query, limit, filters = self._check(query, limit, collections, content_types, since, until)
        with self._lock:
            if has_recency_intent(query):
                hits = self._retriever.bm25(query, max(limit, CANDIDATE_LIMIT), filters)
                ranking = self._retriever.recency_ranking(hits, limit, Ranking(stages=["bm25"]))
            else:
                hits = self._retriever.bm25(query, limit, filters)
                ranking = Ranking(hits=hits, stages=["bm25"])
            return self._present(query, ranking, min_score)

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
    ) -> SearchResults:
        """Vector search: documents ranked by the cosine similarity of their best fragment."""
        query, limit, filters = self._check(query, limit, collections, content_types, since, until)
        if not query.strip():
            return SearchResults(stages=[])
        recent = has_recency_intent(query)
        with self._lock:
            hits = self._retriever.vectors(
                query, max(limit, CANDIDATE_LIMIT) if recent else limit, filters
            )
            ranking = Ranking(
                hits=[(doc, score) for doc, score, _ in hits],
                stages=["vector"],
                best_seq={doc: seq for doc, _, seq in hits},
            )
            if recent:
                ranking = self._retriever.recency_ranking(ranking.hits, limit, ranking)
            return self._present(query, ranking, min_score)

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
    ) -> SearchResults:
        """BM25 and vector search fused, with no model server involved."""
        query, limit, filters = self._check(query, limit, collections, content_types, since, until)
        recent = has_recency_intent(query)
        with self._lock:
            ranking = self._retriever.hybrid(
                query, max(limit, CANDIDATE_LIMIT) if recent else limit, filters
            )
            if recent:
                ranking = self._retriever.recency_ranking(ranking.hits, limit, ranking)
            return self._present(query, ranking, min_score)

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
    ) -> SearchResults:
        """The full hybrid pipeline (see :mod:`memtrove.retrieval.pipeline`).

        ``intent`` is a hint about what the query is for; it steers expansion, chunk
        selection, reranking and snippets, and turns off the BM25 bypass. ``compact=False``
        adds each document's full text as ``content``. The result's ``stages`` and
        ``skipped`` say which stages ran.
        """
        query, limit, filters = self._check(query, limit, collections, content_types, since, until)
        candidate_limit = check_limit(candidate_limit)
        intent = intent.strip() or None if isinstance(intent, str) else None
        with self._lock:
            ranking = self._retriever.query(
                query,
                limit,
                filters,
                intent=intent,
                candidate_limit=candidate_limit,
                diverse=diverse,
                co_activation=self._co_activation,
                texts=self._bodies,
            )
            return self._present(query, ranking, min_score, intent=intent, full=not compact)

    def embed(self, *, force: bool = False, progress: EmbedProgress | None = None) -> EmbedReport:
        """Give every fragment of every active document a vector (only what is pending).

        Refuses, with the fix in the message, when the stored vectors come from another model
        or dimension; ``force`` re-embeds everything with the configured embedder.
        """
        with self._lock:
            return embed_pending(
                self._connection, self.models.embedder, force=force, progress=progress
            )

    def export(
        self, collections: Sequence[str] | None = None, batch: int = EXPORT_BATCH
    ) -> Iterator[Document]:
        """Every active document (of ``collections``, default all), whole, in id order.

        Read in pages of ``batch`` under the vault's lock, released between pages, so an
        export of any size streams in constant memory without holding up other callers.
        """
        after = 0
        while True:
            with self._lock:
                page = documents_after(self._connection, after, batch, collections)
            yield from page
            if len(page) < batch:
                return
            after = page[-1].doc_id

    def _check(
        self,
        query: str,
        limit: int,
        collections: Sequence[str] | None,
        content_types: Sequence[str] | None,
        since: str | None,
        until: str | None,
    ) -> tuple[str, int, Filters]:
        if not isinstance(query, str):
            raise InvalidQueryError("the query must be text")
        if len(query) > MAX_QUERY_CHARS:
            query = query[:MAX_QUERY_CHARS]
        return (
            query,
            check_limit(limit),
            Filters(
                collections=list(collections) if collections else None,
                content_types=check_content_types(content_types),
                since=check_date("since", since),
                until=check_date("until", until, end_of_day=True),
            ),
        )

    def _bodies(self, ids: Sequence[int]) -> dict[int, str]:
        rows = document_rows(self._connection, list(ids))
        return {doc: strip_frontmatter(str(row["text"])) for doc, row in rows.items()}

    def _co_activation(self, doc_id: int) -> int:
        return sessions.co_activation_count(self._connection, doc_id)

    def _present(
        self,
        query: str,
        ranking: Ranking,
        min_score: float,
        *,
        intent: str | None = None,
        full: bool = False,
    ) -> SearchResults:
        return present_results(
            self._connection, query, ranking, min_score, intent=intent, full=full
        )

    def get(self, ref: str) -> Document:
        """A document by ``#docid``, bare docid, or ``collection/path``."""
        with self._lock:
            return get_document(self._connection, ref)

    def list(self, limit: int = 10, collection: str | None = None) -> list[DocumentSummary]:
        """The most recently modified active documents."""
        with self._lock:
            return list_documents(self._connection, check_limit(limit), collection)

    def status(self) -> VaultStatus:
        with self._lock:
            return vault_status(self._connection, self.path, self.collections())

    def find_similar(self, ref: str, limit: int = 5) -> SearchResults:
        """Documents nearest to ``ref`` by its own vectors (the mean of its fragments'), the
        document itself excluded; see :mod:`memtrove.retrieval.similar`.

        Raises EmbeddingSpaceError (with the fix) when there are no vectors to compare.
        """
        limit = check_limit(limit)
        with self._lock:
            document = get_document(self._connection, ref)
            hits = similar_documents(self._connection, document, limit, self._retriever.matrix)
            ranking = Ranking(
                hits=[(hit.doc_id, hit.score) for hit in hits],
                stages=["vector"],
                best_seq={hit.doc_id: hit.seq for hit in hits},
            )
            return self._present("", ranking, 0.0)

    def timeline(
        self, ref: str, before: int = 5, after: int = 5, same_collection: bool = False
    ) -> Timeline:
        """The documents just before and after ``ref`` in effective-time order (authored_at,
        else modified_at; ties by collection, path), nearest first."""
        before = min(check_count("before", before), MAX_LIMIT)
        after = min(check_count("after", after), MAX_LIMIT)
        with self._lock:
            return document_timeline(
                self._connection, ref, before, after, same_collection=same_collection
            )

    def multi_get(
        self, pattern: str, *, max_bytes: int = 10240, max_documents: int = 50
    ) -> MultiGet:
        """Documents named by a glob over ``collection/path`` (``notes/**/*.md``) or a
        comma-separated list of refs (each may be a glob); bodies cut at ``max_bytes`` of
        UTF-8 are listed in ``truncated``, refs not found in ``errors``."""
        if not isinstance(pattern, str):
            raise InvalidQueryError("the pattern must be text")
        max_bytes = check_limit(max_bytes, None, "max_bytes")
        max_documents = check_limit(max_documents, MAX_LIMIT, "max_documents")
        with self._lock:
            return multi_get(
                self._connection, pattern, max_bytes=max_bytes, max_documents=max_documents
            )

    def index_stats(self) -> IndexStats:
        """Content types, embedding coverage and staleness (effective time over 90 days)."""
        with self._lock:
            return index_stats(self._connection, self._clock())

    def lifecycle_status(self) -> LifecycleStatus:
        """Documents by state: active, inactive, pinned, snoozed, invalidated."""
        with self._lock:
            return lifecycle_status(self._connection, self._clock())
