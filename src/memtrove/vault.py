"""The Vault facade: every interface (CLI, MCP, REST, hooks) calls memtrove through here.

::

    with memtrove.Vault.open() as vault:
        vault.add_collection("~/notes")
        vault.update()
        for result in vault.search("refresh token rotation"):
            print(result.score, result.title)
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
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
from memtrove.db.migrations import applied_migrations, migrate
from memtrove.errors import CollectionError, CollectionNotFoundError, InvalidQueryError
from memtrove.index.classify import CONTENT_TYPES
from memtrove.index.documents import (
    collection_counts,
    content_type_counts,
    document_rows,
    fragment_texts,
    get_document,
    list_documents,
)
from memtrove.index.embedding import EmbedProgress, EmbedReport, embed_pending
from memtrove.index.indexer import ProgressCallback, deactivate_collection, update_collections
from memtrove.models.registry import Models, ModelSettings
from memtrove.results import (
    Collection,
    CollectionStatus,
    DoctorReport,
    Document,
    DocumentSummary,
    RerankHealth,
    SearchResult,
    SearchResults,
    UpdateReport,
    VaultStatus,
)
from memtrove.retrieval.fts import MAX_QUERY_CHARS, parse_query
from memtrove.retrieval.pipeline import CANDIDATE_LIMIT, Filters, Ranking, Retriever
from memtrove.retrieval.scoring import has_recency_intent
from memtrove.retrieval.snippets import Highlighter, make_snippet
from memtrove.text import parse_iso_datetime

__all__ = ["Vault"]

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*\r?$\n?", re.S | re.M)
MAX_LIMIT = 1000


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
        return cls(connection, settings.vault_path, CollectionConfig(settings.config_file), models)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

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
        candidate_limit = _check_limit(candidate_limit)
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
            _check_limit(limit),
            Filters(
                collections=list(collections) if collections else None,
                content_types=_check_content_types(content_types),
                since=_check_date("since", since),
                until=_check_date("until", until, end_of_day=True),
            ),
        )

    def _bodies(self, ids: Sequence[int]) -> dict[int, str]:
        rows = document_rows(self._connection, list(ids))
        return {doc: _FRONTMATTER.sub("", str(row["text"]), count=1) for doc, row in rows.items()}

    def _co_activation(self, doc_id: int) -> int:
        return 0  # co-activation counts arrive with session tracking

    def _present(
        self,
        query: str,
        ranking: Ranking,
        min_score: float,
        *,
        intent: str | None = None,
        full: bool = False,
    ) -> SearchResults:
        hits = [(doc, score) for doc, score in ranking.hits if score >= min_score]
        rows = document_rows(self._connection, [doc for doc, _ in hits])
        parsed = parse_query(f"{query} {intent}" if intent else query)
        highlighter = Highlighter(parsed.highlight)
        results = SearchResults(
            stages=ranking.stages, skipped=ranking.skipped, warnings=ranking.warnings
        )
        fragments = fragment_texts(self._connection, rows, ranking.best_seq)
        for doc, score in hits:
            row = rows.get(doc)
            if row is None:
                continue
            body = _FRONTMATTER.sub("", str(row["text"]), count=1)
            snippet, _ = make_snippet(body, highlighter)
            if doc in fragments and highlighter.best_line(snippet) < 0:
                snippet, _ = make_snippet(fragments[doc], highlighter)
            results.append(
                SearchResult(
                    docid=str(row["docid"]),
                    collection=str(row["collection"]),
                    path=str(row["path"]),
                    title=str(row["title"]),
                    score=score,
                    snippet=snippet,
                    content_type=str(row["content_type"]),
                    modified_at=str(row["modified_at"]),
                    doc_id=doc,
                    content=body if full else None,
                )
            )
        return results

    def get(self, ref: str) -> Document:
        """A document by ``#docid``, bare docid, or ``collection/path``."""
        with self._lock:
            return get_document(self._connection, ref)

    def list(self, limit: int = 10, collection: str | None = None) -> list[DocumentSummary]:
        """The most recently modified active documents."""
        with self._lock:
            return list_documents(self._connection, _check_limit(limit), collection)

    def status(self) -> VaultStatus:
        with self._lock:
            connection = self._connection
            counts = collection_counts(connection)
            types = content_type_counts(connection)
            active, inactive, last = connection.execute(
                "SELECT COALESCE(SUM(active), 0), COALESCE(SUM(1 - active), 0), MAX(modified_at) "
                "FROM documents"
            ).fetchone()
            fragments = connection.execute(
                "SELECT COUNT(*) FROM fragments f JOIN "
                "(SELECT DISTINCT hash FROM documents WHERE active = 1) d ON d.hash = f.hash"
            ).fetchone()[0]
            schema = applied_migrations(connection)
        size = sum(
            candidate.stat().st_size
            for candidate in (self.path, Path(f"{self.path}-wal"))
            if candidate.exists()
        )
        return VaultStatus(
            path=str(self.path),
            size_bytes=size,
            schema=schema,
            documents=int(active),
            inactive_documents=int(inactive),
            fragments=int(fragments),
            collections=[
                CollectionStatus(
                    name=c.name,
                    path=str(c.path),
                    pattern=c.pattern,
                    documents=counts.get(c.name, 0),
                    path_exists=c.path.is_dir(),
                )
                for c in self.collections()
            ],
            content_types=types,
            last_modified_at=last,
        )

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


def _check_limit(limit: int) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidQueryError(f"limit must be a positive integer, got {limit!r}")
    return min(limit, MAX_LIMIT)


def _check_content_types(content_types: Sequence[str] | None) -> list[str] | None:
    if not content_types:
        return None
    unknown = [name for name in content_types if name not in CONTENT_TYPES]
    if unknown:
        raise InvalidQueryError(
            f"unknown content type {unknown[0]!r}; known: {', '.join(CONTENT_TYPES)}"
        )
    return list(content_types)


def _check_date(name: str, value: str | None, *, end_of_day: bool = False) -> str | None:
    if value is None or value == "":
        return None
    text = value.strip()
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        text += "T23:59:59Z"
    parsed = parse_iso_datetime(text)
    if parsed is None:
        raise InvalidQueryError(f"{name} must be an ISO date such as 2026-01-31, got {value!r}")
    return parsed
