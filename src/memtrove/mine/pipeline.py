"""``mine``: scan a folder, read each conversation, write one document per exchange.

Conversations are streamed one at a time from the readers into the writer's batches, so
memory holds one conversation and one batch, whatever the size of the folder. The
connection is used (under ``lock``, the vault's) only while a batch is written, so readers
and other writers of the vault get in between batches. A reader that
fails on a file costs that file only (named in ``errors``); what each reader dropped is
counted per format. The Vault records the run (:mod:`memtrove.mine.runs`).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memtrove.db.connection import Connection
from memtrove.files import Refused
from memtrove.mine.exchanges import Skips, exchanges
from memtrove.mine.formats import ORDER
from memtrove.mine.report import MAX_LISTED, FormatCounts, MineReport
from memtrove.mine.scan import candidates, detect
from memtrove.mine.twins import TWIN, Twins
from memtrove.mine.writer import DEFAULT_BATCH, Writer, render, source_mtime_ns
from memtrove.text import iso_from_timestamp

__all__ = ["FILES", "mine_folder", "relative_source"]

FILES = "files"
"""The report's heading for what was refused before any reader saw it (a symbolic link, a
FIFO or a device in the folder mined): ``skipped (files): symbolic link (not followed) 2``."""


def relative_source(root: Path, path: Path) -> str:
    """``path`` as the documents name it: relative to the folder mined (its own name when
    the folder is the file itself)."""
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return path.name
    return relative if relative != "." else path.name


def mine_folder(
    connection: Connection,
    root: Path,
    collection: str,
    redact: Callable[[str], str],
    now: str,
    *,
    formats: Sequence[str] = ORDER,
    dry_run: bool = False,
    since: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    lock: contextlib.AbstractContextManager[Any] | None = None,
) -> MineReport:
    """Mine every conversation under ``root`` into ``collection``; see the module doc.

    ``since`` (UTC ISO): only exchanges authored then or later (an exchange without a time
    counts from its file's modification time). ``lock`` is held while the connection is
    used (each batch), never while files are read."""
    started = time.monotonic()
    lock = lock if lock is not None else contextlib.nullcontext()
    writer = Writer(
        connection, collection, redact, now, dry_run=dry_run, batch_size=batch_size, lock=lock
    )
    tally = _Tally()
    twins = Twins(connection, collection, lock, writer.flush)
    _mine_files(root, formats, writer, since, tally, twins)
    writer.flush()
    if writer.retired or writer.rewritten:
        # deleted full-text rows (retired exchanges, rewritten ones) can leave the index's
        # BM25 totals inflated: recount them
        with lock:
            connection.text.settle_totals(("documents", "passages"))
    return MineReport(
        collection=collection,
        source=str(root),
        dry_run=dry_run,
        formats={
            label: FormatCounts(c["files"], c["conversations"], c["exchanges"])
            for label, c in tally.counts.items()
        },
        written=writer.written,
        unchanged=writer.unchanged,
        retired=writer.retired,
        skipped={label: dict(reasons) for label, reasons in tally.skipped.items() if reasons},
        unrecognised=tally.unrecognised,
        unrecognised_count=tally.unrecognised_count,
        errors=tally.errors,
        elapsed_seconds=round(time.monotonic() - started, 3),
        document_ids=tuple(writer.ids),
    )


class _Tally:
    """What a run counted, per format, and the files it could not take."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}
        self.skipped: dict[str, Counter[str]] = {}
        self.unrecognised: list[str] = []
        self.unrecognised_count = 0
        self.errors: list[str] = []


def _mine_files(
    root: Path,
    formats: Sequence[str],
    writer: Writer,
    since: str | None,
    tally: _Tally,
    twins: Twins,
) -> None:
    refused = Skips()
    for path, is_folder in candidates(root, formats, refused):
        name = relative_source(root, path)
        try:
            found = detect(path, is_folder, formats)
        except Refused as error:  # swapped since the walk, or a reader's first open refused
            refused.skip(error.reason)
            continue
        except (OSError, ValueError, RecursionError) as error:
            tally.errors.append(f"{name}: {type(error).__name__}: {error}"[:300])
            continue
        if found is None:
            tally.unrecognised_count += 1
            if len(tally.unrecognised) < MAX_LISTED:
                tally.unrecognised.append(name)
            continue
        counted = tally.counts.setdefault(found.label, Counter())
        counted["files"] += 1
        mtime = source_mtime_ns(path)
        file_time = iso_from_timestamp(mtime / 1e9)
        dropped = tally.skipped.setdefault(found.label, Counter())
        try:
            for conversation in found.conversations:
                counted["conversations"] += 1
                kept: set[str] = set()
                for exchange in exchanges(conversation, dropped):
                    when = exchange.authored_at or file_time
                    if since is not None and when < since:
                        dropped["before --since"] += 1
                        continue
                    document = render(exchange, name)
                    if document is None:
                        dropped["exchange too short"] += 1
                        continue
                    if twins.twin(document):  # mined from another source already
                        dropped[TWIN] += 1
                        continue
                    counted["exchanges"] += 1
                    kept.add(document.path)
                    writer.add(document, mtime)
                if since is None and kept:
                    folder = next(iter(kept)).rsplit("/", 1)[0]
                    writer.retire_others(folder, frozenset(kept))
        except Refused as error:
            dropped[error.reason] += 1
        except (
            OSError,
            ValueError,
            RecursionError,
            TypeError,
            LookupError,
            AttributeError,
        ) as error:
            # a file a reader could not follow costs that file (named), never the run
            tally.errors.append(f"{name}: {type(error).__name__}: {error}"[:300])
        dropped.update(found.skips)
    if refused:
        tally.skipped.setdefault(FILES, Counter()).update(refused)
