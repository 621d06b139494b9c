"""What every evaluation shares: the retrieval methods, timing, scratch vaults, reports.

Each method is one public :class:`~memtrove.Vault` call, so an evaluation measures exactly
what a user of that call gets::

    bm25    vault.search(query, limit=k)
    vector  vault.vsearch(query, limit=k)
    hybrid  vault.hybrid(query, limit=k)
    query   vault.query(query, limit=k)
    intent  vault.intent.intent_search(query, limit=k)
    plan    vault.intent.query_plan(query, limit=k)
    surfacing   the context-surfacing hook; the documents it injects, in order
                (see :mod:`memtrove.eval.surfacing`)

Methods other than ``bm25`` need vectors: :func:`prepare` runs ``vault.embed()`` after
``vault.update()`` for them.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtrove.errors import ConfigError, InvalidQueryError
from memtrove.eval.metrics import mean, percentile
from memtrove.eval.surfacing import SURFACING, Surfacer
from memtrove.results import SearchResults
from memtrove.vault import Vault

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "MetricTable",
    "ProgressCallback",
    "RankingReport",
    "TimedRetriever",
    "check_method",
    "json_head",
    "latency_summary",
    "pipeline_summary",
    "prepare",
    "read_text_file",
    "retrieve",
    "retrieved_paths",
    "scratch_vault",
    "token_summary",
]

# method name -> the Vault method it calls
METHODS: dict[str, str] = {
    "bm25": "search",
    "vector": "vsearch",
    "hybrid": "hybrid",
    "query": "query",
    "intent": "intent_search",
    "plan": "query_plan",
    "surfacing": "context-surfacing",
}
DEFAULT_METHOD = "query"

# (items done, items in all, what is being done): progress for long runs.
ProgressCallback = Callable[[int, int, str], None]


def check_method(method: str) -> None:
    """Refuse a method name that is not one of :data:`METHODS`."""
    if method not in METHODS:
        raise InvalidQueryError(f"unknown retrieval method {method!r}; known: {', '.join(METHODS)}")


def prepare(vault: Vault, method: str) -> list[str]:
    """Index the vault's collections, and embed them when ``method`` uses vectors.

    Returns notes on files the indexer skipped (each one is a unit the task cannot find).
    """
    check_method(method)
    report = vault.update()
    if method != "bm25":
        vault.embed()
    if not report.skipped:
        return []
    return [f"{len(report.skipped)} files not indexed (first: {report.skipped[0]})"]


def retrieve(
    vault: Vault,
    method: str,
    query: str,
    limit: int,
    collections: Sequence[str] | None = None,
) -> SearchResults:
    """The top ``limit`` results of ``query`` by ``method`` (see :data:`METHODS`)."""
    check_method(method)
    only = list(collections) if collections else None
    if method == "bm25":
        return vault.search(query, limit=limit, collections=only)
    if method == "vector":
        return vault.vsearch(query, limit=limit, collections=only)
    if method == "hybrid":
        return vault.hybrid(query, limit=limit, collections=only)
    if method == SURFACING:
        return Surfacer(vault)(query, limit, only)
    if method == "intent":
        return vault.intent.intent_search(query, limit=limit, collections=only)
    if method == "plan":
        return vault.intent.query_plan(query, limit=limit, collections=only)
    return vault.query(query, limit=limit, collections=only)


@dataclass
class TimedRetriever:
    """Runs :func:`retrieve` and keeps each call's wall time in milliseconds.

    A query the vault refuses (:class:`InvalidQueryError`) ranks nothing and is counted in
    ``failures``, with the first message kept, so one odd query cannot end a long run.
    """

    vault: Vault
    method: str
    session: bool = False
    hook_vectors: str = "auto"
    latencies_ms: list[float] = field(default_factory=list)
    failures: int = 0
    first_failure: str | None = None
    stages: dict[str, int] = field(default_factory=dict)
    skipped_stages: dict[str, str] = field(default_factory=dict)
    surfacer: Surfacer | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_method(self.method)
        if self.method == SURFACING:
            self.surfacer = Surfacer(self.vault, session=self.session, vectors=self.hook_vectors)

    def new_session(self) -> None:
        """Start a new session (``surfacing`` with ``session=True``; a no-op otherwise)."""
        if self.surfacer is not None:
            self.surfacer.new_session()

    @property
    def tokens(self) -> list[int]:
        """Estimated tokens of each injection (``surfacing`` only; empty otherwise)."""
        return self.surfacer.tokens if self.surfacer is not None else []

    def __call__(
        self, query: str, limit: int, collections: Sequence[str] | None = None
    ) -> SearchResults:
        started = time.perf_counter()
        try:
            if self.surfacer is not None:
                results = self.surfacer(query, limit, collections)
            else:
                results = retrieve(self.vault, self.method, query, limit, collections)
        except InvalidQueryError as error:
            self.failures += 1
            self.first_failure = self.first_failure or str(error)
            results = SearchResults()
        self.latencies_ms.append((time.perf_counter() - started) * 1000.0)
        self._note_stages(results)
        return results

    def _note_stages(self, results: SearchResults) -> None:
        """Count the stages that ran and keep the first reason each other stage did not."""
        for stage in results.stages:
            self.stages[stage] = self.stages.get(stage, 0) + 1
        for stage, reason in results.skipped.items():
            self.skipped_stages.setdefault(stage, reason)


def pipeline_summary(retrievers: Iterable[TimedRetriever]) -> dict[str, Any]:
    """``{"stages": {stage: queries it ran for}, "skipped_stages": {stage: first reason}}``."""
    stages: dict[str, int] = {}
    skipped: dict[str, str] = {}
    for retriever in retrievers:
        for stage, count in retriever.stages.items():
            stages[stage] = stages.get(stage, 0) + count
        for stage, reason in retriever.skipped_stages.items():
            skipped.setdefault(stage, reason)
    return {"stages": stages, "skipped_stages": skipped}


def retrieved_paths(results: SearchResults, collection: str) -> list[str]:
    """Each result's path in ``collection``, followed by its identical copies' (``also_at``):
    a collapsed copy was retrieved too, with the same text, at the same rank."""
    prefix = f"{collection}/"
    paths: list[str] = []
    for result in results:
        if result.collection == collection:
            paths.append(result.path)
        paths.extend(ref.removeprefix(prefix) for ref in result.also_at if ref.startswith(prefix))
    return paths


def token_summary(retrievers: Iterable[TimedRetriever]) -> dict[str, float]:
    """Injected tokens per question (``surfacing``): ``{"mean", "p50", "max"}``; else ``{}``."""
    tokens = [float(count) for retriever in retrievers for count in retriever.tokens]
    if not tokens:
        return {}
    return {
        "mean": round(mean(tokens), 1),
        "p50": round(percentile(tokens, 0.50), 1),
        "max": max(tokens),
    }


def latency_summary(latencies_ms: Sequence[float]) -> dict[str, float]:
    """``{"p50": ..., "p95": ...}`` in milliseconds, rounded to microseconds."""
    return {
        "p50": round(percentile(latencies_ms, 0.50), 3),
        "p95": round(percentile(latencies_ms, 0.95), 3),
    }


@dataclass
class MetricTable:
    """Per-query metric values, averaged per named metric."""

    names: tuple[str, ...]
    rows: list[Mapping[str, float]] = field(default_factory=list)

    def add(self, values: Mapping[str, float]) -> None:
        missing = set(self.names) - set(values)
        if missing:
            raise ValueError(f"metric values lack {sorted(missing)}")
        self.rows.append(values)

    def __len__(self) -> int:
        return len(self.rows)

    def means(self) -> dict[str, float]:
        """Each metric averaged over the queries, rounded to 6 places (0 for no queries)."""
        return {name: round(mean(row[name] for row in self.rows), 6) for name in self.names}


def json_head(report: Any, task: str) -> dict[str, Any]:
    """How every report's ``--json`` shape starts: ``metrics``, ``latency_ms`` and ``n``
    first, then the task and the method (the report's context follows)."""
    return {
        "metrics": report.metrics,
        "latency_ms": report.latency_ms,
        "n": report.n,
        "task": task,
        "method": report.method,
    }


@dataclass
class RankingReport:
    """A document-ranking evaluation (BEIR, gold): one set of metrics over ``n`` queries."""

    task: str
    method: str
    metrics: dict[str, float]
    latency_ms: dict[str, float]
    n: int
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    elapsed_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: ``metrics``, ``latency_ms`` and ``n`` first, then context."""
        return json_head(self, self.task) | {
            "skipped": self.skipped,
            "notes": self.notes,
            **self.details,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


@contextlib.contextmanager
def scratch_vault(
    prefix: str = "memtrove-eval-", server: str | None = None
) -> Iterator[tuple[Vault, Path]]:
    """A fresh vault in a temporary folder (``server``, a server vault's URL: in a new
    schema beside that vault's), and a ``docs`` folder in it for its files.

    Everything is deleted on exit.
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as temporary:
        root = Path(temporary)
        docs = root / "docs"
        docs.mkdir()
        if server is not None:
            import secrets

            from memtrove.locations import scratch_location

            where: Path | str = scratch_location(server, "eval_" + secrets.token_hex(4))
        else:
            where = root / "vault.sqlite"
        vault = Vault.open(where, config_dir=root / "config")
        try:
            yield vault, docs
        finally:
            if server is not None:
                with contextlib.suppress(Exception):
                    vault.discard()
            vault.close()


def read_text_file(path: Path, what: str) -> str:
    """A whole UTF-8 file, or a :class:`ConfigError` saying why it cannot be read."""
    if not path.exists():
        raise ConfigError(f"{what} {path} does not exist")
    if path.is_dir():
        raise ConfigError(f"{what} {path} is a folder, not a file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{what} {path} is not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise ConfigError(f"cannot read {what} {path}: {error.strerror or error}") from None
