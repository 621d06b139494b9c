"""The Vault facade: every interface (CLI, MCP, REST, hooks) calls memtrove through here.

::

    with memtrove.Vault.open() as vault:
        vault.add_collection("~/notes")
        vault.update()
        for result in vault.search("refresh token rotation"):
            print(result.score, result.title)
"""

from __future__ import annotations

import builtins
import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from memtrove.config import (
    DEFAULT_PATTERN,
    CollectionConfig,
    Settings,
    collection_name_for,
    validate_collection_name,
)
from memtrove.db.connection import DEFAULT_BUSY_TIMEOUT_MS, Connection, open_connection
from memtrove.db.migrations import migrate
from memtrove.errors import CollectionError, CollectionNotFoundError, InvalidQueryError
from memtrove.index import curation
from memtrove.index.documents import document_rows, get_document, list_documents
from memtrove.index.embedding import EmbedProgress, EmbedReport, embed_pending
from memtrove.index.indexer import ProgressCallback, deactivate_collection, update_collections
from memtrove.index.stats import index_stats, lifecycle_status, vault_status
from memtrove.index.timeline import document_timeline, multi_get
from memtrove.lifecycle import sessions
from memtrove.models.registry import Models, ModelSettings
from memtrove.results import (
    Collection,
    DoctorReport,
    Document,
    DocumentSummary,
    IndexStats,
    LifecycleStatus,
    MultiGet,
    RerankHealth,
    SearchResults,
    SessionRecord,
    TargetMatch,
    Timeline,
    UpdateReport,
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
from memtrove.retrieval.pipeline import CANDIDATE_LIMIT, Filters, Ranking, Retriever
from memtrove.retrieval.presentation import present_results, strip_frontmatter
from memtrove.retrieval.scoring import has_recency_intent
from memtrove.retrieval.similar import similar_documents
from memtrove.retrieval.target import find_target

__all__ = ["Vault"]

MAX_SPARE_READERS = 2  # second connections kept open by Vault.reader


class Vault:
    """One SQLite vault file plus the collections configured for it."""

    def __init__(
        self,
        connection: Connection,
        path: Path,
        collections: CollectionConfig,
        models: Models | None = None,
    ) -> None:
        self._connection = connection
        self.path = path
        self._collections = collections
        self._lock = threading.RLock()
        self.models = models or Models()
        self._retriever = Retriever(connection, self.models)
        self._busy_timeout_ms = DEFAULT_BUSY_TIMEOUT_MS
        self._spare_readers: list[Vault] = []  # second connections, kept warm for reuse
        self._is_closed = False
        # The time session windows, snoozes and staleness are measured against (tests set it).
        self._clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        config_dir: str | Path | None = None,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        models: ModelSettings | Models | None = None,
    ) -> Vault:
        """Open (creating if needed) and migrate a vault.

        ``path`` defaults to ``MEMTROVE_VAULT`` or ``$XDG_CACHE_HOME/memtrove/vault.sqlite``;
        ``config_dir`` (for ``config.yaml``) to ``MEMTROVE_CONFIG_DIR`` or
        ``$XDG_CONFIG_HOME/memtrove``; ``models`` to the ``MEMTROVE_*`` model variables
        (nothing is loaded or contacted until a stage needs it).
        """
        if models is None:
            models = Models(ModelSettings.from_env(os.environ))
        elif isinstance(models, ModelSettings):
            models = Models(models)
        settings = Settings.from_env(vault=path, config_dir=config_dir)
        connection = open_connection(settings.vault_path, busy_timeout_ms)
        try:
            migrate(connection, label=f"vault {settings.vault_path}")
        except BaseException:
            connection.close()
            raise
        vault = cls(connection, settings.vault_path, CollectionConfig(settings.config_file), models)
        vault._busy_timeout_ms = busy_timeout_ms
        return vault

    def close(self) -> None:
        with self._lock:
            self._is_closed = True
            readers, self._spare_readers = self._spare_readers, []
            for reader in readers:
                reader.close()
            self._connection.close()

    @contextlib.contextmanager
    def reader(self) -> Iterator[Vault]:
        """This vault on a second connection, for work in another thread that must not hold
        this one's lock (a leg that may be abandoned). Connections are kept for the next
        call, with their vectors loaded, so a long-lived process pays for them once."""
        with self._lock:
            reader = self._spare_readers.pop() if self._spare_readers else None
        if reader is None:
            reader = Vault.open(
                self.path,
                config_dir=self._collections.config_file.parent,
                busy_timeout_ms=self._busy_timeout_ms,
                models=self.models,
            )
        try:
            yield reader
        except BaseException:
            reader.close()  # its state is unknown: do not reuse it
            raise
        with self._lock:
            if len(self._spare_readers) < MAX_SPARE_READERS and not self._is_closed:
                self._spare_readers.append(reader)
                return
        reader.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def config_file(self) -> Path:
        return self._collections.config_file

    # -- collections -------------------------------------------------------------------------

    def collections(self) -> list[Collection]:
        return self._collections.load()

    def add_collection(
        self, path: str | Path, name: str | None = None, pattern: str = DEFAULT_PATTERN
    ) -> Collection:
        """Register a folder; it is indexed by the next :meth:`update`."""
        folder = Path(path).expanduser()
        if not folder.exists():
            raise CollectionError(f"collection path {folder} does not exist")
        if not folder.is_dir():
            raise CollectionError(f"collection path {folder} is not a folder")
        if not pattern.strip():
            raise CollectionError("collection pattern must not be empty")
        collection = Collection(
            name=validate_collection_name(
                name if name is not None else collection_name_for(folder.resolve())
            ),
            path=folder.resolve(),
            pattern=pattern.strip(),
        )
        self._collections.add(collection)
        return collection

    def remove_collection(self, name: str) -> Collection:
        """Forget a collection and deactivate its documents (their text stays in the vault)."""
        removed = self._collections.remove(name)
        with self._lock:
            deactivate_collection(self._connection, name)
        return removed

    # -- indexing ----------------------------------------------------------------------------

    def update(
        self, collections: Sequence[str] | None = None, *, progress: ProgressCallback | None = None
    ) -> UpdateReport:
        """Re-scan collections (all by default) and index what changed."""
        configured = self.collections()
        if collections:
            known = {collection.name for collection in configured}
            for name in collections:
                if name not in known:
                    raise CollectionNotFoundError(f"no collection named {name!r}")
            configured = [c for c in configured if c.name in set(collections)]
        with self._lock:
            return update_collections(self._connection, configured, progress=progress)

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

    # -- curation ------------------------------------------------------------------------------

    def pin(self, ref: str, *, unpin: bool = False) -> Document:
        """Pin a document (+0.3 composite score), or unpin it. Unknown ref: DocumentNotFoundError."""
        with self._lock:
            return curation.pin_document(self._connection, ref, pinned=not unpin)

    def snooze(self, ref: str, until: str | None = None) -> Document:
        """Hide a document from context surfacing until ``until`` (ISO date or datetime; a
        bare date is the end of that day, UTC); None unsnoozes. It stays searchable.

        A moment not in the future is refused with InvalidQueryError.
        """
        moment = curation.parse_snooze_until(until, self._clock())
        with self._lock:
            return curation.snooze_document(self._connection, ref, moment)

    def forget(self, ref: str) -> Document:
        """Deactivate a document: it leaves every search (its text stays in the vault), and
        :meth:`update` leaves it out until its file's content changes. Idempotent."""
        with self._lock:
            return curation.forget_document(self._connection, ref)

    def find_target(self, query: str) -> TargetMatch:
        """The document ``query`` most likely names: exact ref or path, else BM25, title
        words, vectors (see :mod:`memtrove.retrieval.target`); check ``confident``."""
        if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
            query = query[:MAX_QUERY_CHARS]
        with self._lock:
            return find_target(self._connection, self._retriever, query)

    # -- sessions and hooks --------------------------------------------------------------------

    def hook_seen(self, hook_name: str, prompt: str, window_seconds: int = 600) -> bool:
        """True when ``hook_name`` saw this prompt (SHA-256 of it trimmed) within the window;
        records the sighting either way. Best-effort: a vault still locked after the busy
        timeout records nothing and answers False, never raising."""
        with self._lock:
            return sessions.record_prompt(
                self._connection, hook_name, prompt, window_seconds, self._clock()
            )

    def turn_index(self, session_id: str, hook_name: str = "context-surfacing") -> int:
        """How many context_usage rows ``hook_name`` logged for the session before now."""
        with self._lock:
            return sessions.turn_index(self._connection, session_id, hook_name)

    def recent_queries(
        self, session_id: str, *, within_seconds: int = 600, limit: int = 2
    ) -> builtins.list[str]:
        """The session's latest context-surfacing prompts (query_text), newest first."""
        with self._lock:
            return sessions.recent_queries(
                self._connection,
                session_id,
                check_count("within_seconds", within_seconds),
                min(check_count("limit", limit), MAX_LIMIT),
                self._clock(),
            )

    def log_context_usage(
        self,
        session_id: str,
        hook_name: str,
        *,
        injected: Sequence[tuple[int, float]] = (),
        estimated_tokens: int = 0,
        turn_index: int = 0,
        query_text: str | None = None,
    ) -> int:
        """Log one hook run (context_usage, recall events and stats, co-activations, session
        log) in one write transaction; ``injected`` holds (doc id, score). Returns its id.

        A locked vault is waited for: the write is retried for 30 s (on top of the busy
        timeout) before VaultBusyError. An unknown doc id raises DocumentNotFoundError.
        """
        with self._lock:
            return sessions.log_context_usage(
                self._connection,
                session_id,
                hook_name,
                injected=injected,
                estimated_tokens=check_count("estimated_tokens", estimated_tokens),
                turn=check_count("turn_index", turn_index),
                query_text=query_text,
                now=self._clock(),
            )

    def co_activation_count(self, doc_id: int) -> int:
        """How often the document was injected together with any other document."""
        with self._lock:
            return sessions.co_activation_count(self._connection, doc_id)

    def session_log(self, limit: int = 10) -> builtins.list[SessionRecord]:
        """Recent sessions, the most recently active first."""
        limit = check_limit(limit)
        with self._lock:
            return sessions.session_records(self._connection, limit)

    # -- health ------------------------------------------------------------------------------

    def doctor(self, timeout: float = 8.0) -> DoctorReport:
        """Check the vault, its collections, fragments, vectors and model services.

        The vault is read under the lock; model services are probed outside it (each probe
        bounded by ``timeout`` seconds), so a slow service never stalls other callers.
        """
        from memtrove.lifecycle.doctor import run_doctor  # httpx and friends: off the hot path

        return run_doctor(
            self._connection,
            self.models,
            self.collections,
            vault_path=self.path,
            timeout=timeout,
            lock=self._lock,
        )

    def rerank_health(self, timeout: float = 8.0) -> RerankHealth:
        """Probe the reranker live with a golden set (:mod:`memtrove.lifecycle.probes`).

        Needs no lock: it reads nothing from the vault and calls the reranker directly.
        """
        from memtrove.lifecycle.doctor import rerank_health

        return rerank_health(self.models, timeout)
