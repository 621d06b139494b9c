"""The mining area (``vault.mining``): ``mine`` a folder of exported conversations into a
mined collection, date old imports (``backfill_dates``), and the runs so far.

Contract: given the vault's database, the configured collections (``collections``, as
:meth:`Vault.collections`: a mined collection may not take a folder collection's name), the
vault's ``embed`` (run after an import that asks for it) and its ``redactor`` (a callable:
the engine is built from ``config.yaml`` when first needed). Its statements are those of
:mod:`memtrove.mine` (the pipeline, ``mine_runs``, ``import_runs``, the date backfill),
writing ``documents`` and their fragments only through them.

A mined collection (default ``conversations``) is not a folder in ``config.yaml``: memtrove
owns its documents, so ``update`` never touches them, and :mod:`memtrove.mine.runs` says
which collections are mined. They are searched, filtered (``-c conversations``) and listed
(``collection list``, ``status``) like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memtrove.errors import CollectionError, CollectionNotFoundError, InvalidQueryError

if TYPE_CHECKING:  # the readers load on first use: a search needs none of them
    from memtrove.db.database import Database
    from memtrove.index.embedding import EmbedReport
    from memtrove.mine.backfill import BackfillReport
    from memtrove.mine.import_runs import ImportRun
    from memtrove.mine.report import MineReport, MineRun
    from memtrove.results import Collection
    from memtrove.security.redaction import Redactor

__all__ = ["DEFAULT_MINE_COLLECTION", "FORMATS", "FORMAT_ALIASES", "MiningArea"]

DEFAULT_MINE_COLLECTION = "conversations"
FORMATS = ("auto", "claude-code", "codex", "chatgpt", "claude-ai", "slack", "text")
# ClawMem's names for two of them, taken as they are
FORMAT_ALIASES = {"codex-cli": "codex", "plain-text": "text"}
MAX_RUNS = 100


class MiningArea:
    """Conversation import (see :mod:`memtrove.mine.pipeline`)."""

    def __init__(
        self,
        database: Database,
        *,
        collections: Callable[[], list[Collection]],
        embed: Callable[[], EmbedReport],
        redactor: Callable[[], Redactor],
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self._collections, self._embed, self._redactor = collections, embed, redactor

    def mine(
        self,
        folder: str | Path,
        collection: str = DEFAULT_MINE_COLLECTION,
        *,
        format: str = "auto",
        dry_run: bool = False,
        embed: bool = False,
        since: str | None = None,
    ) -> MineReport:
        """Import the conversations under ``folder`` (a file or a folder) into
        ``collection``: one ``conversation`` document per exchange, secrets redacted.

        ``format``: ``auto`` detects each file's (see :mod:`memtrove.mine.scan`), any other
        label reads only that format; ``dry_run``: count, write nothing; ``embed``: embed
        what was written; ``since``: a date or time, only exchanges from then on.
        Re-running is idempotent. Raises CollectionError for a missing folder or a name
        taken by a folder collection, InvalidQueryError for a bad format or date.
        """
        from memtrove.mine.pipeline import mine_folder
        from memtrove.mine.runs import finish_run, start_run
        from memtrove.text import now_iso

        root, labels = self._mine_arguments(folder, collection, format)
        cutoff = _since(since)
        # The lock is held while the connection is used: to record the run, and for each
        # batch the pipeline writes (never while it reads files), so search, REST and MCP
        # callers of this vault get in between batches.
        with self._lock:
            run_id = (
                None if dry_run else start_run(self._connection, collection, str(root), now_iso())
            )
        try:
            report = mine_folder(
                self._connection,
                root,
                collection,
                self._redactor().redact,  # one engine for the run: no config check per exchange
                now_iso(),
                formats=labels,
                dry_run=dry_run,
                since=cutoff,
                lock=self._lock,
            )
        except BaseException:
            if run_id is not None:
                with self._lock:
                    finish_run(self._connection, run_id, None, now_iso(), "failed")
            raise
        if run_id is not None:
            report = report._replace(run_id=run_id)
            with self._lock:
                finish_run(self._connection, run_id, report, now_iso(), "done")
        # The import is committed. Passes that build on it (embedding now; the synthesis of
        # decisions and preferences later) take report.document_ids from here, and their
        # failure never undoes the import.
        if embed and not dry_run and report.written:
            self._embed()
        return report

    def backfill_dates(
        self,
        folder: str | Path,
        collection: str = DEFAULT_MINE_COLLECTION,
        *,
        format: str = "auto",
        apply: bool = False,
    ) -> BackfillReport:
        """Give ``authored_at`` to documents of ``collection`` mined without one, from the
        conversations under ``folder``; a dry run unless ``apply``."""
        from memtrove.mine.backfill import backfill_dates

        root, labels = self._mine_arguments(folder, collection, format)
        with self._lock:
            held = self._connection.execute(
                "SELECT 1 FROM documents WHERE collection = ? LIMIT 1", (collection,)
            ).fetchone()
            if held is None:
                raise CollectionNotFoundError(f"no documents were mined into {collection!r}")
            return backfill_dates(self._connection, root, collection, formats=labels, apply=apply)

    def import_status(self, limit: int = 10, collection: str | None = None) -> list[MineRun]:
        """The latest mine runs, newest first (``limit`` 1-100)."""
        from memtrove.mine.runs import last_runs

        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RUNS:
            raise InvalidQueryError(f"limit must be an integer from 1 to {MAX_RUNS}")
        with self._lock:
            return last_runs(self._connection, limit, collection)

    def import_runs(self, limit: int = 10) -> list[ImportRun]:
        """The latest ``import`` runs (export files, ClawMem vaults), newest first
        (``limit`` 1-100)."""
        from memtrove.mine.import_runs import last_import_runs

        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RUNS:
            raise InvalidQueryError(f"limit must be an integer from 1 to {MAX_RUNS}")
        with self._lock:
            return last_import_runs(self._connection, limit)

    def mined_collections(self) -> list[tuple[str, str]]:
        """(name, folder last mined) of each mined collection."""
        from memtrove.mine.runs import mined_collections

        with self._lock:
            return mined_collections(self._connection)

    def _mine_arguments(
        self, folder: str | Path, collection: str, format: str
    ) -> tuple[Path, Sequence[str]]:
        from memtrove.config import validate_collection_name
        from memtrove.mine.formats import ORDER
        from memtrove.text import shown_path

        format = FORMAT_ALIASES.get(format, format)
        if format not in FORMATS:
            raise InvalidQueryError(f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
        name = validate_collection_name(collection)
        if any(c.name == name for c in self._collections()):
            raise CollectionError(
                f"collection {name!r} is a folder collection; mine into another (-c NAME)"
            )
        root = Path(folder).expanduser()
        shown = shown_path(str(root))
        try:
            if not root.exists():
                raise CollectionError(f"{shown} does not exist")
            if not (root.is_dir() or root.is_file()):
                raise CollectionError(f"{shown} is neither a folder nor a regular file")
            resolved = root.resolve()
        except (OSError, RuntimeError, ValueError) as error:  # too long, no access, a loop
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            raise CollectionError(f"cannot read {shown}: {reason}") from None
        return resolved, ORDER if format == "auto" else (format,)


def _since(value: str | None) -> str | None:
    from memtrove.text import parse_iso_datetime

    if value is None:
        return None
    parsed = parse_iso_datetime(value)
    if parsed is None:
        raise InvalidQueryError(
            f"since {str(value)[:80]!r} is not a date (use YYYY-MM-DD or ISO-8601)"
        )
    return parsed
