"""Loading an export into a vault: :func:`import_lines` reads the header, picks the loader
(:class:`memtrove.mine.portable_import.Importer` for an empty vault, the id-mapping
:class:`memtrove.mine.portable_merge.Merger` for ``--merge``), feeds it every record in one
transaction and checks the end record and the header's counts; a dry run rolls it all back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import PortableFormatError, VaultNotEmptyError
from memtrove.mine.portable import VECTORS, decode_value
from memtrove.mine.portable_import import (
    ImportedFile,
    Importer,
    check_header,
    format_error,
    parse_line,
    vault_contents,
)
from memtrove.mine.portable_merge import Merger

__all__ = ["import_lines"]


class _DryRun(Exception):
    """Raised inside the transaction so that a dry run leaves nothing behind."""


def import_lines(
    connection: Connection,
    lines: Iterable[bytes | str],
    *,
    redact: Callable[[str], str],
    dry_run: bool = False,
    merge: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ImportedFile:
    """Import an export's lines into the (empty) vault of ``connection``, in one
    transaction; with ``dry_run`` everything is checked and then rolled back. ``merge``
    adds them to a vault in use instead (see :mod:`memtrove.mine.portable_merge`)."""
    iterator = iter(lines)
    first = next(iterator, None)
    if first is None:
        raise PortableFormatError("line 1: the file is empty")
    header = check_header(connection, parse_line(1, first))
    present = vault_contents(connection)
    if present and not merge:
        held = ", ".join(f"{count} {table}" for table, count in sorted(present.items())[:3])
        raise VaultNotEmptyError(
            f"the vault already holds data ({held}): import into a new vault file "
            "(--vault NEW.sqlite), or add it to this one with --merge"
        )
    importer = Merger(connection, redact) if merge else Importer(connection, redact)
    importer.vectors.space = header.get("embedding_space")
    total = sum(header["counts"].values())
    try:
        with write_transaction(connection):
            _import_records(importer, iterator, header, total, progress)
            if importer.added.get(VECTORS):
                importer.vectors.synced()
            if not importer.renamed and not merge:  # the source's BM25 totals hold here too
                _restore_averages(connection, header.get("fts_averages"))
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return ImportedFile(header, importer.records, importer.added, importer.redacted)


def _import_records(
    importer: Importer,
    iterator: Iterator[bytes | str],
    header: dict[str, Any],
    total: int,
    progress: Callable[[int, int], None] | None,
) -> None:
    number, ended = 1, False
    for line in iterator:
        number += 1
        if ended:
            raise format_error(number, "a record after the end record (the file was edited?)")
        record = parse_line(number, line)
        kind = record.get("type")
        if not isinstance(kind, str):
            raise format_error(number, 'a record without its "type"')
        if kind == "end":
            seen = sum(importer.records.values())
            if record.get("records") != seen:
                raise format_error(
                    number,
                    f"the end record counts {record.get('records')!r}, the file holds {seen}",
                )
            ended = True
            continue
        importer.add(number, record)
        if progress is not None and number % 1000 == 0:
            progress(number - 1, total)
    if not ended:
        raise format_error(number + 1, "the file ends before its end record (cut short?)")
    for table, expected in header["counts"].items():
        known = table in importer.tables or table == VECTORS
        if importer.records.get(table, 0) != expected and known:
            raise format_error(
                number,
                f"the file holds {importer.records.get(table, 0)} {table} records, its header "
                f"says {expected} (the file was edited?)",
            )


def _restore_averages(connection: Connection, value: Any) -> None:
    """The source's full-text totals (a short record of varints), when the header has them."""
    try:
        block = decode_value(value)
    except ValueError:
        raise format_error(1, "the header's fts_averages is not a blob") from None
    if not isinstance(block, bytes) or not 0 < len(block) <= 256:
        return
    connection.text.restore_totals_record(block)
