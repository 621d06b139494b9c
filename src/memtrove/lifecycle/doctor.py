"""``memtrove doctor``: is the vault sound, and does every model service answer sanely?

Each finding is a :class:`~memtrove.results.Check` with a status (``ok``, ``warn``, ``fail``),
a one-line detail and, when something is wrong, the command or setting that fixes it. The
vault checks only read; their queries live here because nothing else asks them. The model
services are probed by :mod:`memtrove.lifecycle.probes` (``rerank_health`` is re-exported).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from memtrove.capture.status import capture_check
from memtrove.db.connection import Connection
from memtrove.db.migrations import applied_migrations
from memtrove.db.schema import migrations_for
from memtrove.errors import ConfigError, MemtroveError, SchemaTooNewError, VaultBusyError
from memtrove.graph.amem_status import enrichment_check
from memtrove.index.documents import collection_counts
from memtrove.index.embedding import MAX_ATTEMPTS, pending_counts
from memtrove.lifecycle.geometry_checks import geometry_checks
from memtrove.lifecycle.maintenance import consolidation_check
from memtrove.lifecycle.probes import (
    PROBE_TIMEOUT,
    embedder_check,
    llm_check,
    rerank_health,
    reranker_check,
    service_checks,
)
from memtrove.locations import is_server_url, shown_location
from memtrove.mine.import_runs import import_checks
from memtrove.mine.runs import mined_checks
from memtrove.models.registry import Models
from memtrove.results import Check, Collection, DoctorReport, SecretsReport
from memtrove.retrieval.vectors import EmbeddingSpace, stored_space

__all__ = ["PROBE_TIMEOUT", "rerank_health", "run_doctor", "unopened_report"]

_REBUILD = "`memtrove embed --force` rebuilds every vector"
_REBUILD_VAULT = (
    "move the file aside and run `memtrove bootstrap <folder>` to rebuild it from your "
    "markdown (the notes themselves are untouched)"
)
_CHECK_SERVER = (
    "check that the PostgreSQL server runs and that the URL's host, port, database, user and "
    "schema are right (the password goes in ~/.pgpass or PGPASSWORD, or in the URL)"
)


# -- the whole report ---------------------------------------------------------------------------


def run_doctor(
    connection: Connection,
    models: Models,
    collections: Callable[[], Sequence[Collection]],
    *,
    vault_path: Path | str,
    timeout: float = PROBE_TIMEOUT,
    lock: AbstractContextManager[object] | None = None,
    secrets: Callable[[], SecretsReport] | None = None,
) -> DoctorReport:
    """Check the vault file, collections, fragments, vectors and every model service.

    ``collections`` loads the configured collections (a broken ``config.yaml`` becomes a
    failed check). ``lock`` is held while the vault is read, not while services are probed.
    ``secrets`` counts the secrets the vault stores (reads every body).
    """
    started = time.monotonic()
    with lock or contextlib.nullcontext():
        checks = _vault_checks(connection, vault_path)
        checks += _collection_checks(connection, collections)
        checks += mined_checks(connection)
        checks += import_checks(connection)
        checks += [_fragment_check(connection), *_vector_checks(connection)]
        checks.append(_embed_state_check(connection))
        checks.append(_second_check(connection, models))
        checks.append(enrichment_check(connection, models.has_llm))
        checks.append(consolidation_check(connection, models.has_llm))
        checks.append(capture_check(connection, models.has_llm))
        space = stored_space(connection)
    if secrets is not None:
        checks.append(_secrets_check(secrets))
    embedder, identity, dimensions = embedder_check(models, timeout)
    checks.append(_space_check(space, identity, dimensions))
    checks += [embedder, llm_check(models, timeout), reranker_check(models, timeout)]
    checks += geometry_checks(connection, models if embedder.status == "ok" else None, lock=lock)
    return DoctorReport(checks, time.monotonic() - started)


def unopened_report(
    path: Path | str,
    error: MemtroveError | None,
    models: Models | MemtroveError,
    timeout: float = PROBE_TIMEOUT,
) -> DoctorReport:
    """The report when the vault is missing (``error`` is None) or cannot be opened.

    ``models`` is the model configuration, or the error that stopped it being read.
    """
    started = time.monotonic()
    if error is None:
        fix = "`memtrove bootstrap <folder>` creates it (or point --vault at the one you use)"
        checks = [Check("vault", "fail", f"no vault at {shown_location(path)}", fix)]
    elif isinstance(error, ConfigError):
        checks = [Check("config", "fail", str(error), "fix the setting the message names")]
    elif isinstance(error, SchemaTooNewError):
        checks = [Check("vault", "fail", str(error), "upgrade memtrove (pip install -U memtrove)")]
    elif isinstance(error, VaultBusyError):
        fix = "another process holds the vault locked; let it finish, then run doctor again"
        checks = [Check("vault", "fail", str(error), fix)]
    else:
        fix = _CHECK_SERVER if is_server_url(path) else _REBUILD_VAULT
        checks = [Check("vault", "fail", str(error), fix)]
    if isinstance(models, Models):
        checks += service_checks(models, timeout)
    elif not isinstance(error, ConfigError):
        checks.append(Check("config", "fail", str(models), "fix the setting the message names"))
    return DoctorReport(checks, time.monotonic() - started)


def _second_check(connection: Connection, models: Models) -> Check:
    """The second vector space (``MEMTROVE_EMBED_SECOND``): off, active, or what it lacks."""
    from memtrove.retrieval.second_space import second_state

    state = second_state(connection, models.settings.embed_second)
    if state.startswith("not available"):
        return Check("second space", "fail", state, "install the extra, or unset the setting")
    if state.startswith("active") and "pending" not in state:
        return Check("second space", "ok", f"{state}; fused as a third channel")
    if state.startswith("off"):
        return Check("second space", "ok", f"{state}: no paraphrase channel")
    return Check("second space", "warn", state, "`memtrove embed` fills the second space")


# -- the vault --------------------------------------------------------------------------------


def _vault_checks(connection: Connection, location: Path | str) -> list[Check]:
    problems = connection.catalog.integrity_problems()
    path, server = shown_location(location), is_server_url(location)
    check = "the table check" if server else "quick_check"
    if problems:
        vault = Check(
            "vault",
            "fail",
            f"{path}: {check} found {len(problems)} problem(s), first: {problems[0]}",
            _CHECK_SERVER if server else _REBUILD_VAULT,
        )
    elif server:
        vault = Check("vault", "ok", f"{path} (on the server), {check} ok")
    else:
        size = sum(p.stat().st_size for p in (Path(path), Path(f"{path}-wal")) if p.exists())
        vault = Check("vault", "ok", f"{path} ({size / 1_048_576:.1f} MiB), quick_check ok")
    applied = applied_migrations(connection)
    missing = [name for name, _ in migrations_for(connection.dialect) if name not in applied]
    if missing:
        schema = Check(
            "schema",
            "fail",
            f"migrations not applied: {', '.join(missing)}",
            "open the vault with this memtrove (any command applies them); if that fails, "
            "rebuild it with `memtrove bootstrap <folder>`",
        )
    else:
        schema = Check("schema", "ok", f"{len(applied)} migrations applied, latest {applied[-1]}")
    status, line = connection.catalog.engine_check()
    fix = (
        "grant the role USAGE and CREATE on the schema, or give the URL another schema"
        if server
        else ""
    )
    engine = Check("engine", status, line, fix if status != "ok" else "")
    return [vault, schema, engine]


def _collection_checks(
    connection: Connection, load: Callable[[], Sequence[Collection]]
) -> list[Check]:
    try:
        collections = list(load())
    except MemtroveError as error:
        return [Check("config", "fail", str(error), "fix or remove the file it names")]
    if not collections:
        fix = "`memtrove bootstrap <folder>` adds a folder of markdown and indexes it"
        return [Check("collections", "warn", "no collections yet", fix)]
    counts = collection_counts(connection)
    checks: list[Check] = []
    for collection in collections:
        name, folder = f"collection {collection.name}", collection.path
        documents = counts.get(collection.name, 0)
        if not folder.is_dir():
            detail = f"folder {folder} is missing ({documents} documents kept)"
            fix = f"restore the folder, or `memtrove collection remove {collection.name}`"
            checks.append(Check(name, "fail", detail, fix))
        elif not os.access(folder, os.R_OK | os.X_OK):
            fix = f"give your user read access: chmod u+rx {folder}"
            checks.append(Check(name, "fail", f"folder {folder} is not readable", fix))
        elif documents == 0:
            detail = f"no documents indexed from {folder} ({collection.pattern})"
            fix = "`memtrove update` indexes it; check the pattern matches your files"
            checks.append(Check(name, "warn", detail, fix))
        else:
            detail = f"{documents} documents in {folder} ({collection.pattern})"
            checks.append(Check(name, "ok", detail))
    return checks


def _fragment_check(connection: Connection) -> Check:
    active, fragments = connection.execute(
        "SELECT (SELECT COUNT(*) FROM documents WHERE active = 1), (SELECT COUNT(*) FROM "
        "fragments WHERE hash IN (SELECT hash FROM documents WHERE active = 1))"
    ).fetchone()
    bare = connection.execute(
        "SELECT COUNT(*) FROM documents d WHERE d.active = 1 "
        "AND NOT EXISTS (SELECT 1 FROM fragments f WHERE f.hash = d.hash)"
    ).fetchone()[0]
    if bare:
        detail = f"{bare} of {active} active documents have no fragments (they cannot be embedded)"
        return Check("fragments", "fail", detail, "`memtrove update` builds the missing fragments")
    return Check("fragments", "ok", f"{fragments} fragments for {active} active documents")


def _vector_checks(connection: Connection) -> list[Check]:
    space = stored_space(connection)
    rows = dict(connection.execute("SELECT id, model FROM content_vectors").fetchall())
    table = connection.vectors.exists()
    if not rows and space is None and not table:
        return [Check("vectors", "ok", "no vectors yet")]
    problems: list[str] = []
    if space is None:
        problems.append(f"{len(rows)} vectors but no recorded embedding space")
    models = sorted({str(model) for model in rows.values()})
    if len(models) > 1 or (space is not None and models and models[0] != space.identity):
        problems.append(f"vectors of several models are mixed: {', '.join(models)}")
    if not table:
        problems.append(f"{len(rows)} vector rows but no vector table")
    else:
        declared = connection.vectors.dimensions()
        if space is not None and declared and declared != space.dimensions:
            problems.append(f"the vector table holds {declared}-d vectors, not {space}")
        stored = set(connection.vectors.ids())
        if missing := len(rows.keys() - stored):
            problems.append(f"{missing} fragment vectors are missing from the vector table")
        if extra := len(stored - rows.keys()):
            problems.append(f"{extra} vectors belong to no fragment row")
    unsynced = connection.execute(
        "SELECT COUNT(DISTINCT d.id) FROM documents d JOIN fragments f ON f.hash = d.hash "
        "WHERE d.active = 1 AND d.embed_state = 'synced' AND NOT EXISTS (SELECT 1 FROM "
        "content_vectors cv WHERE cv.hash = f.hash AND cv.seq = f.seq)"
    ).fetchone()[0]
    if unsynced:
        problems.append(f"{unsynced} documents marked embedded lack fragment vectors")
    if problems:
        checks = [Check("vectors", "fail", "; ".join(problems), _REBUILD)]
    elif rows:
        checks = [Check("vectors", "ok", f"{len(rows)} vectors of {space}, consistent")]
    else:
        checks = [Check("vectors", "ok", f"no vectors yet (space {space} recorded)")]
    vectors, bodies = connection.execute(
        "SELECT COUNT(*), COUNT(DISTINCT hash) FROM content_vectors cv WHERE NOT EXISTS "
        "(SELECT 1 FROM documents d WHERE d.hash = cv.hash AND d.active = 1)"
    ).fetchone()
    if vectors:
        detail = f"{vectors} vectors of {bodies} bodies no active document uses"
        fix = f"harmless (a restored file reuses them); {_REBUILD} without them"
        checks.append(Check("orphan vectors", "warn", detail, fix))
    return checks


def _secrets_check(secrets: Callable[[], SecretsReport]) -> Check:
    try:
        report = secrets()
    except MemtroveError as error:
        return Check("secrets", "warn", f"could not look for stored secrets: {error}")
    if not report.total:
        return Check("secrets", "ok", "no secrets stored (bodies, memories, prompts, rules)")
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(report.kinds.items()))
    where = [f"{report.documents} documents"] if report.documents else []
    where += [f"{count} {table} rows" for table, count in sorted(report.rows.items())]
    sample = f"; e.g. {', '.join(report.refs[:3])}" if report.refs else ""
    return Check(
        "secrets",
        "warn",
        f"{report.total} secrets stored in {', '.join(where)} ({kinds}){sample}",
        "`memtrove redact --apply` rewrites them as [REDACTED:kind] and wipes them from the "
        "file (`memtrove redact` first shows what it would change)",
    )


def _embed_state_check(connection: Connection) -> Check:
    documents, fragments = pending_counts(connection)
    retried, last_error = connection.execute(
        "SELECT COUNT(*), MAX(embed_error) FROM documents WHERE active = 1 "
        "AND embed_state = 'failed' AND embed_attempts < ?",
        (MAX_ATTEMPTS,),
    ).fetchone()
    given_up = connection.execute(
        "SELECT collection || '/' || path, embed_error FROM documents WHERE active = 1 "
        "AND embed_state = 'failed' AND embed_attempts >= ? ORDER BY id",
        (MAX_ATTEMPTS,),
    ).fetchall()
    if given_up:
        shown = "; ".join(f"{ref} ({error or 'no error recorded'})" for ref, error in given_up[:3])
        more = f" and {len(given_up) - 3} more" if len(given_up) > 3 else ""
        return Check(
            "embeddings",
            "warn",
            f"{len(given_up)} documents failed {MAX_ATTEMPTS} times and are skipped: {shown}{more}"
            + (f"; {documents} more wait for vectors" if documents else ""),
            "fix the cause, then `memtrove embed --force` retries them (re-embedding everything)",
        )
    if documents:
        detail = f"{documents} documents ({fragments} fragments) wait for vectors"
        if retried:
            detail += f", {retried} after a failure: {last_error}"
        return Check("embeddings", "warn", detail, "`memtrove embed`")
    return Check("embeddings", "ok", "every active document has its vectors")


# -- model services -------------------------------------------------------------------------------


def _space_check(
    space: EmbeddingSpace | None, identity: str | None, dimensions: int | None
) -> Check:
    name = "embedding space"
    if identity is None:
        return Check(name, "warn", "the embedder could not be built", "see the embedder check")
    configured = f"{identity} ({dimensions}-d)" if dimensions else identity
    if space is None:
        return Check(name, "ok", f"no vectors yet; `memtrove embed` will use {configured}")
    if identity != space.identity or (dimensions is not None and dimensions != space.dimensions):
        return Check(
            name,
            "fail",
            f"the vectors come from {space}, but the configured embedder is {configured}",
            f"`memtrove embed --force` re-embeds everything with {identity}, or configure the "
            "embedder that made them (MEMTROVE_EMBED_URL, MEMTROVE_EMBED_MODEL)",
        )
    if dimensions is None:
        detail = f"vectors of {space}; the embedder did not answer, so its dimension is unchecked"
        return Check(name, "warn", detail, "see the embedder check")
    return Check(name, "ok", f"{space} matches the configured embedder")
