"""The Vault, the composition root every interface (CLI, MCP, REST, hooks) goes through: it
opens the database and builds one object per area on first use, each given only what it
uses (``vault.graph``, ``vault.memory``, ``vault.lifecycle``...); the common verbs
(``search``, ``query``, ``get``, ``status``, ``embed``...) stay on it as delegations::

    with memtrove.Vault.open() as vault:
        vault.add_collection("~/notes")
        vault.update()
        print(vault.search("refresh token rotation"))
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from memtrove.config import (
    DEFAULT_PATTERN,
    CollectionConfig,
    Settings,
    cache_dir,
    new_collection,
)
from memtrove.db.connection import DEFAULT_BUSY_TIMEOUT_MS, Connection
from memtrove.db.database import Database
from memtrove.errors import CollectionNotFoundError
from memtrove.locations import is_server_url, scratch_location, shown_location
from memtrove.models.registry import Models, ModelSettings
from memtrove.results import Collection, DocumentSummary, StaleAfterDays
from memtrove.retrieval.arguments import check_limit
from memtrove.retrieval.pipeline import CANDIDATE_LIMIT, Retriever
from memtrove.vault.opening import open_database

if TYPE_CHECKING:
    from memtrove.index.embedding import EmbedProgress, EmbedReport
    from memtrove.index.indexer import ProgressCallback
    from memtrove.results import (
        DoctorReport,
        Document,
        MultiGet,
        RerankHealth,
        SearchResults,
        SecretsReport,
        UpdateReport,
        VaultStatus,
    )
    from memtrove.security.redaction import Redactor
    from memtrove.vault.capture import CaptureArea
    from memtrove.vault.consolidation import ConsolidationArea
    from memtrove.vault.curation import CurationArea
    from memtrove.vault.documents import DocumentsArea
    from memtrove.vault.enrichment import EnrichmentArea
    from memtrove.vault.graph import GraphArea
    from memtrove.vault.intent import IntentArea
    from memtrove.vault.knowledge import KnowledgeArea
    from memtrove.vault.lifecycle import LifecycleArea
    from memtrove.vault.memory import MemoryArea
    from memtrove.vault.mine import MiningArea
    from memtrove.vault.portable import PortableArea
    from memtrove.vault.retrieval import RetrievalArea
    from memtrove.vault.rules import RulesArea
    from memtrove.vault.sessions import SessionsArea
    from memtrove.vault.synthesis import SynthesisArea

__all__ = ["MAX_SPARE_READERS", "Vault"]

_Area = TypeVar("_Area")

MAX_SPARE_READERS = 2  # second connections kept open by Vault.reader


class Vault:
    """One vault (a SQLite file or a PostgreSQL schema) and its collections. ``location``
    names it (path, or URL without password); ``path`` is the file (None on a server)."""

    def __init__(
        self,
        connection: Connection,
        location: Path | str,
        collections: CollectionConfig,
        models: Models | None = None,
    ) -> None:
        self.database = Database(connection, location)
        self._connection = connection  # the same as database.connection and database.lock
        self._location = location  # what reopens it: a URL may hold a password
        self.location = shown_location(location)
        self.path: Path | None = None if is_server_url(location) else Path(location)
        self._collections = collections
        self._lock = self.database.lock
        self.models = models or Models()
        self._retriever = Retriever(connection, self.models, str(location))
        self._busy_timeout_ms = DEFAULT_BUSY_TIMEOUT_MS
        self._spare_readers: list[Vault] = []  # second connections, kept warm for reuse
        self._is_closed = False
        self._redactor: tuple[tuple[tuple[str, str], ...], Redactor] | None = None
        # The time session windows, snoozes and staleness are measured against (tests set it).
        self._clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self._areas: dict[str, object] = {}  # built on first use: see _area

    # -- areas -------------------------------------------------------------------------------

    def _area(self, name: str, build: Callable[[], _Area]) -> _Area:
        """The area ``name``, built by ``build`` on first use: a command imports only the
        areas it calls (a search, none of the graph, memory or lifecycle modules)."""
        with self._lock:
            area = self._areas.get(name)
            if area is None:
                area = self._areas[name] = build()
            return area  # type: ignore[return-value]

    def _now(self) -> datetime:
        """The vault's clock, read at each call (tests replace ``_clock``)."""
        return self._clock()

    @property
    def retrieval(self) -> RetrievalArea:
        """Keyword, vector, hybrid and pipeline searches, recent, similar (:mod:`.retrieval`)."""
        from memtrove.vault.retrieval import RetrievalArea

        return self._area("retrieval", lambda: RetrievalArea(
            self.database, retriever=self._retriever, sessions=self.sessions
        ))  # fmt: skip

    @property
    def documents(self) -> DocumentsArea:
        """Documents whole, timelines, status, statistics, embedding, export (:mod:`.documents`)."""
        from memtrove.vault.documents import DocumentsArea

        return self._area("documents", lambda: DocumentsArea(
            self.database, models=self.models, clock=self._now, collections=self.collections
        ))  # fmt: skip

    @property
    def intent(self) -> IntentArea:
        """Intent search, causal links, query plans, timelines, ``retrieve`` (:mod:`.intent`)."""
        from memtrove.vault.intent import IntentArea

        return self._area("intent", lambda: IntentArea(
            self.database, retriever=self._retriever, models=self.models, clock=self._now,
            retrieval=self.retrieval, get=self.get,
        ))  # fmt: skip

    @property
    def graph(self) -> GraphArea:
        """Typed edges between documents and facts about entities (:mod:`.graph`)."""
        from memtrove.vault.graph import GraphArea

        return self._area("graph", lambda: GraphArea(
            self.database, get=self.get, redact=self.redact, clock=self._now
        ))  # fmt: skip

    @property
    def knowledge(self) -> KnowledgeArea:
        """Entities, their mentions and the knowledge graph's triples (:mod:`.knowledge`)."""
        from memtrove.vault.knowledge import KnowledgeArea

        return self._area("knowledge", lambda: KnowledgeArea(
            self.database, models=self.models, get=self.get, redact=self.redact, clock=self._now
        ))  # fmt: skip

    @property
    def synthesis(self) -> SynthesisArea:
        """Facts and links from imported conversations (:mod:`.synthesis`)."""
        from memtrove.vault.synthesis import SynthesisArea

        return self._area("synthesis", lambda: SynthesisArea(
            self.database, models=self.models, clock=self._now
        ))  # fmt: skip

    @property
    def enrichment(self) -> EnrichmentArea:
        """A-MEM notes and links, re-indexing, memory evolution (:mod:`.enrichment`)."""
        from memtrove.vault.enrichment import EnrichmentArea

        return self._area("enrichment", lambda: EnrichmentArea(
            self.database, models=self.models, get=self.get, redact=self.redact,
            update=self.update,
        ))  # fmt: skip

    @property
    def consolidation(self) -> ConsolidationArea:
        """The light and heavy lanes, the journal, reflection (:mod:`.consolidation`)."""
        from memtrove.vault.consolidation import ConsolidationArea

        return self._area("consolidation", lambda: ConsolidationArea(
            self.database, models=self.models, redact=self.redact, clock=self._now,
            enrichment=self.enrichment,
        ))  # fmt: skip

    @property
    def memory(self) -> MemoryArea:
        """The agent-curated memory store: entries, recall, dedup, hygiene (:mod:`.memory`)."""
        from memtrove.vault.memory import MemoryArea

        return self._area("memory", lambda: MemoryArea(
            self.database, models=self.models, redact=self.redact, clock=self._now
        ))  # fmt: skip

    @property
    def rules(self) -> RulesArea:
        """Learned rules: prediction and behaviour engines (:mod:`.rules`)."""
        from memtrove.vault.rules import RulesArea

        return self._area("rules", lambda: RulesArea(
            self.database, redact=self.redact, clock=self._now, memory=self.memory
        ))  # fmt: skip

    @property
    def lifecycle(self) -> LifecycleArea:
        """Policy, sweep, restore and purge of documents (:mod:`.lifecycle`)."""
        from memtrove.vault.lifecycle import LifecycleArea

        return self._area("lifecycle", lambda: LifecycleArea(
            self.database, collections=self._collections, clock=self._now
        ))  # fmt: skip

    @property
    def capture(self) -> CaptureArea:
        """Decisions, handoffs, feedback and sessions captured by hooks (:mod:`.capture`)."""
        from memtrove.vault.capture import CaptureArea

        return self._area("capture", lambda: CaptureArea(
            self.database, models=self.models, redact=self.redact, clock=self._now
        ))  # fmt: skip

    @property
    def mining(self) -> MiningArea:
        """Conversation imports into collections of their own (:mod:`.mine`)."""
        from memtrove.vault.mine import MiningArea

        return self._area("mining", lambda: MiningArea(
            self.database, collections=self.collections, embed=self.embed,
            redactor=lambda: self.redactor,
        ))  # fmt: skip

    @property
    def portable(self) -> PortableArea:
        """Export and import of whole vaults, ClawMem's included (:mod:`.portable`)."""
        from memtrove.vault.portable import PortableArea

        return self._area("portable", lambda: PortableArea(
            self.database, config_file=self.config_file, collections=self.collections,
            add_collection=self.add_collection, embed=self.embed, redactor=lambda: self.redactor,
        ))  # fmt: skip

    @property
    def sessions(self) -> SessionsArea:
        """What hooks injected and saw, per session and prompt (:mod:`.sessions`)."""
        from memtrove.vault.sessions import SessionsArea

        return self._area("sessions", lambda: SessionsArea(
            self.database, redact=self.redact, clock=self._now
        ))  # fmt: skip

    @property
    def curation(self) -> CurationArea:
        """Pin, snooze, forget, restore, confidence and type of documents (:mod:`.curation`)."""
        from memtrove.vault.curation import CurationArea

        return self._area("curation", lambda: CurationArea(
            self.database, retriever=self._retriever, clock=self._now, sessions=self.sessions
        ))  # fmt: skip

    # -- lifecycle ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        config_dir: str | Path | None = None,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        models: ModelSettings | Models | None = None,
        create: bool = True,
    ) -> Vault:
        """Open (creating if needed) and migrate a vault.

        ``create=False`` (what read commands ask for) raises :class:`VaultNotFoundError`
        naming the path when there is no vault there, instead of creating an empty one
        that would answer "No results".

        ``path`` (a file, or a ``postgresql://...?schema=NAME`` URL) defaults to
        ``MEMTROVE_VAULT`` or ``$XDG_CACHE_HOME/memtrove/vault.sqlite``;
        ``config_dir`` (for ``config.yaml``) to ``MEMTROVE_CONFIG_DIR`` or
        ``$XDG_CONFIG_HOME/memtrove``; ``models`` to the ``MEMTROVE_*`` model variables
        (nothing is loaded or contacted until a stage needs it).
        """
        models = Models(models) if isinstance(models, ModelSettings) else models
        models = models or Models(ModelSettings.from_env(os.environ))
        settings = Settings.from_env(vault=path, config_dir=config_dir)
        if models.cache_folder is None:
            models.cache_folder = str(cache_dir())
        connection = open_database(settings.vault_path, busy_timeout_ms, create=create)
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
    def scratch_copy(self) -> Iterator[Vault]:
        """A copy deleted on exit (a temporary file, or a schema beside a server vault's)."""
        import secrets
        import tempfile

        make = functools.partial(Vault.open, config_dir=self.config_file.parent, models=self.models)
        with contextlib.ExitStack() as stack:
            if self.path is None:
                target: Path | str = scratch_location(str(self._location), secrets.token_hex(4))
                copy = stack.enter_context(make(target))
                stack.callback(copy.discard)  # runs before the close
            else:
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="memtrove-copy-"))
                target = Path(folder) / "vault.sqlite"
            with self._lock:
                self._connection.catalog.copy_to(target)
            yield copy if self.path is None else stack.enter_context(make(target))

    def discard(self) -> None:
        """Remove what a scratch vault made on a server (its schema); nothing for a file."""
        self._connection.catalog.discard()

    @contextlib.contextmanager
    def reader(self, busy_timeout_ms: int | None = None) -> Iterator[Vault]:
        """This vault on a second connection, for work in another thread that must not hold
        this one's lock (a leg that may be abandoned, a request of the warm path). Waits for
        locks ``busy_timeout_ms`` (default: as this vault). Connections are kept for the
        next call, with their vectors loaded, so a long-lived process pays for them once."""
        with self._lock:
            reader = self._spare_readers.pop() if self._spare_readers else None
        if reader is None:
            reader = Vault.open(
                self._location,
                config_dir=self._collections.config_file.parent,
                busy_timeout_ms=self._busy_timeout_ms,
                models=self.models,
            )
        wait = self._busy_timeout_ms if busy_timeout_ms is None else busy_timeout_ms
        try:
            reader._set_busy_timeout(wait)
            yield reader
        except BaseException:
            reader.close()  # its state is unknown: do not reuse it
            raise
        with self._lock:
            if len(self._spare_readers) < MAX_SPARE_READERS and not self._is_closed:
                self._spare_readers.append(reader)
                return
        reader.close()

    def _set_busy_timeout(self, milliseconds: int) -> None:
        with self._lock:
            if milliseconds != self._busy_timeout_ms:
                self._connection.catalog.set_busy_timeout(milliseconds)
                self._busy_timeout_ms = milliseconds

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
        """The collections in ``config.yaml`` (parsed again only when the file changes)."""
        return self._collections.load()

    def unsurfaced_collections(self) -> frozenset[str]:
        """Names of the collections set ``surface: false``: searchable, but never injected
        automatically (context-surfacing leaves them out).

        Cheap on the hook path: a ``config.yaml`` that never says ``surface`` is only read;
        otherwise it is parsed once per Vault and again only when it changes (a ``stat``
        per call). Raises ConfigError when a file that mentions ``surface`` is broken.
        """
        return self._collections.unsurfaced()

    def add_collection(
        self,
        path: str | Path,
        name: str | None = None,
        pattern: str = DEFAULT_PATTERN,
        *,
        exclude: Sequence[str] = (),
        surface: bool = True,
        stale_after_days: StaleAfterDays = "auto",
        redact: bool = True,
    ) -> Collection:
        """Register a folder; it is indexed by the next :meth:`update`.

        ``exclude``: globs never indexed; ``surface=False``: never injected by hooks;
        ``stale_after_days``: days, None (never) or "auto" (see ``config.yaml`` keys);
        ``redact=False``: stored verbatim, secrets included.
        """
        collection = new_collection(
            path, name, pattern, exclude=exclude, surface=surface,
            stale_after_days=stale_after_days, redact=redact,
        )  # fmt: skip
        self._collections.add(collection)
        return collection

    def remove_collection(self, name: str) -> Collection:
        """Forget a collection and deactivate its documents (their text stays in the vault).
        A mined collection (see :meth:`MiningArea.mine`) is forgotten with its runs."""
        mined = dict(self.mining.mined_collections())
        if name in mined and all(c.name != name for c in self.collections()):
            from memtrove.mine.runs import forget_mined

            with self._lock:
                forget_mined(self._connection, name)
            return Collection(name, Path(mined[name]), "(mined)")
        removed = self._collections.remove(name)
        with self._lock:
            from memtrove.index.indexer import deactivate_collection

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
                if name in dict(self.mining.mined_collections()) and name not in known:
                    raise CollectionNotFoundError(
                        f"{name!r} is a mined collection: `memtrove mine DIR -c {name}` "
                        "refreshes it"
                    )
                if name not in known:
                    raise CollectionNotFoundError(f"no collection named {name!r}")
            configured = [c for c in configured if c.name in set(collections)]
        with self._lock:
            from memtrove.index.indexer import update_collections

            # A bad ``redaction:`` pattern fails here, before any work; the engine itself
            # (its module, its automaton) is built only once a file is to be read.
            self._collections.redaction_patterns()
            return update_collections(
                self._connection, configured, progress=progress, redactor=lambda: self.redactor
            )

    @property
    def redactor(self) -> Redactor:
        """The redaction engine every write goes through: the built-in shapes plus the
        ``redaction: patterns`` of ``config.yaml`` (rebuilt when they change)."""
        from memtrove.security import redaction  # loaded by the first write, not by a search

        patterns = tuple(self._collections.redaction_patterns())
        if self._redactor is None or self._redactor[0] != patterns:
            engine = redaction.Redactor(patterns) if patterns else redaction.DEFAULT
            self._redactor = (patterns, engine)
        return self._redactor[1]

    def redact(self, text: str) -> str:
        """``text`` as this vault would store it (secrets as ``[REDACTED:kind]``)."""
        return self.redactor.redact(text)

    def stored_secrets(self, *, apply: bool = False) -> SecretsReport:
        """Secrets already stored (bodies and every other stored text), counted by kind;
        with ``apply`` they are rewritten as ``[REDACTED:kind]`` and wiped from the file
        (see :mod:`memtrove.index.secrets`). Collections set ``redact: false`` are kept."""
        from memtrove.index.secrets import stored_secrets

        verbatim = {c.name for c in self.collections() if not c.redact}
        engine = self.redactor
        with self._lock:
            return stored_secrets(self._connection, engine, verbatim=verbatim, apply=apply)

    # -- health ------------------------------------------------------------------------------

    def stale_documents(self, limit: int = 10) -> list[DocumentSummary]:
        """Stale documents, oldest first, by each collection's rule (see
        :mod:`memtrove.index.staleness`): to review one at a time, then pin or snooze."""
        from memtrove.index.staleness import stale_documents

        limit = check_limit(limit)
        collections = self.collections()
        with self._lock:
            return stale_documents(self._connection, collections, self._clock(), limit)

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
            vault_path=self._location,
            timeout=timeout,
            lock=self._lock,
            secrets=lambda: self.stored_secrets(),
        )

    def rerank_health(self, timeout: float = 8.0) -> RerankHealth:
        """Probe the reranker live with a golden set (:mod:`memtrove.lifecycle.probes`).

        Needs no lock: it reads nothing from the vault and calls the reranker directly.
        """
        from memtrove.lifecycle.doctor import rerank_health

        return rerank_health(self.models, timeout)

    # -- the common verbs (the README's example): each delegates to its area ------------------
    # fmt: off
    def search(self, query: str, limit: int = 10, collections: Sequence[str] | None = None,
               content_types: Sequence[str] | None = None, *, since: str | None = None,
               until: str | None = None, min_score: float = 0.0, include_internal: bool = True,
               kept_internal: Sequence[str] = (), hidden_parts: Sequence[str] = (),
               hidden_collections: Sequence[str] = ()) -> SearchResults:
        """BM25 keyword search: see :meth:`.retrieval.RetrievalArea.search`."""
        return self.retrieval.search(query, limit, collections, content_types, since=since,
            until=until, min_score=min_score, include_internal=include_internal,
            kept_internal=kept_internal, hidden_parts=hidden_parts,
            hidden_collections=hidden_collections)

    def vsearch(self, query: str, limit: int = 10, collections: Sequence[str] | None = None,
                content_types: Sequence[str] | None = None, *, since: str | None = None,
                until: str | None = None, min_score: float = 0.0,
                include_internal: bool = True) -> SearchResults:
        """Vector search: see :meth:`.retrieval.RetrievalArea.vsearch`."""
        return self.retrieval.vsearch(query, limit, collections, content_types, since=since,
            until=until, min_score=min_score, include_internal=include_internal)

    def hybrid(self, query: str, limit: int = 10, collections: Sequence[str] | None = None,
               content_types: Sequence[str] | None = None, *, since: str | None = None,
               until: str | None = None, min_score: float = 0.0, vectors: bool = True,
               snippets: bool = True, passages: bool = False, include_internal: bool = True,
               kept_internal: Sequence[str] = (), hidden_parts: Sequence[str] = (),
               hidden_collections: Sequence[str] = ()) -> SearchResults:
        """BM25 and vectors fused: see :meth:`.retrieval.RetrievalArea.hybrid`."""
        return self.retrieval.hybrid(query, limit, collections, content_types, since=since,
            until=until, min_score=min_score, vectors=vectors, snippets=snippets,
            passages=passages, include_internal=include_internal, kept_internal=kept_internal,
            hidden_parts=hidden_parts, hidden_collections=hidden_collections)

    def query(self, query: str, limit: int = 10, intent: str | None = None,
              collections: Sequence[str] | None = None, compact: bool = True, *,
              content_types: Sequence[str] | None = None, since: str | None = None,
              until: str | None = None, min_score: float = 0.0, diverse: bool = True,
              candidate_limit: int = CANDIDATE_LIMIT,
              include_internal: bool = True) -> SearchResults:
        """The full hybrid pipeline: see :meth:`.retrieval.RetrievalArea.query`."""
        return self.retrieval.query(query, limit, intent, collections, compact,
            content_types=content_types, since=since, until=until, min_score=min_score,
            diverse=diverse, candidate_limit=candidate_limit, include_internal=include_internal)

    def get(self, ref: str, *, include_inactive: bool = False) -> Document:
        """A document by reference: see :meth:`.documents.DocumentsArea.get`."""
        return self.documents.get(ref, include_inactive=include_inactive)

    def multi_get(self, pattern: str, *, max_bytes: int = 10240,
                  max_documents: int = 50) -> MultiGet:
        """Documents by glob or list of refs: see :meth:`.documents.DocumentsArea.multi_get`."""
        return self.documents.multi_get(pattern, max_bytes=max_bytes, max_documents=max_documents)

    def list(self, limit: int = 10, collection: str | None = None) -> list[DocumentSummary]:
        """The newest documents: see :meth:`.documents.DocumentsArea.list`."""
        return self.documents.list(limit, collection)

    def status(self) -> VaultStatus:
        """The vault and its collections: see :meth:`.documents.DocumentsArea.status`."""
        return self.documents.status()

    def embed(self, *, force: bool = False, progress: EmbedProgress | None = None, **canary: bool) -> EmbedReport:
        """Vectors for what is pending (``canary``: ``force_geometry``, ``recalibrate_canary``): see :meth:`.documents.DocumentsArea.embed`."""
        return self.documents.embed(force=force, progress=progress, **canary)

    # fmt: on
