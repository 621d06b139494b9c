"""What ``export`` and ``import`` report (:mod:`memtrove.vault.portable`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from memtrove.mine.import_folders import FolderPlan

__all__ = ["ExportReport", "ImportReport", "collection_lines"]


class ExportReport(NamedTuple):
    """``export``: where it went, how many records (header and end aside) and bytes."""

    path: str
    records: int
    bytes: int
    elapsed_seconds: float

    def text(self) -> str:
        return (
            f"exported {self.records} records ({self.bytes:,} bytes) to {self.path} "
            f"in {self.elapsed_seconds:.2f}s"
        )

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class ImportReport(NamedTuple):
    """``import``: the records read and the rows written per table (the same but for a
    merge, which keeps what the vault holds), the collections registered in ``config.yaml``
    (those the user mapped to a folder; ``folders``: what each folder holds, see
    :class:`~memtrove.mine.import_folders.FolderPlan`) and those left unregistered (name ->
    the folder the file names, never read; their documents arrive all the same)."""

    path: str
    records: dict[str, int]
    added: dict[str, int]
    collections_added: list[str]
    collections_unregistered: dict[str, str]
    folders: list[dict[str, Any]]
    redacted: int
    dry_run: bool
    embed: dict[str, Any] | None
    elapsed_seconds: float

    def text(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        total, written_total = sum(self.records.values()), sum(self.added.values())
        counted = f"{total}" if written_total == total else f"{written_total} of {total}"
        lines = [f"{verb} {counted} records from {self.path} in {self.elapsed_seconds:.2f}s"]
        for table, count in self.records.items():
            written = self.added.get(table, 0)
            kept = f" ({count - written} already here, kept)" if written != count else ""
            lines.append(f"  {table}: {written}{kept}")
        lines += collection_lines(
            self.collections_added, self.collections_unregistered, self.folders, self.dry_run
        )
        if self.redacted:
            lines.append(f"redacted {self.redacted} text(s) holding secrets")
        if self.embed is not None:
            lines.append(f"embedded {self.embed.get('fragments', 0)} fragment(s)")
        elif not self.dry_run:
            lines.append("vectors are not in the file: run `memtrove embed` (or import --embed)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


def collection_lines(
    added: list[str], unregistered: dict[str, str], folders: list[dict[str, Any]], dry_run: bool
) -> list[str]:
    """The report's lines on collections: those registered (with what each folder holds)
    and those left unregistered, with the command that would register each."""
    lines: list[str] = []
    if added:
        verb = "would register" if dry_run else "collections registered"
        lines.append(f"{verb}: " + ", ".join(added))
        lines += [FolderPlan(**plan).text() for plan in folders]
    if unregistered:
        lines.append(
            "collections left unregistered (documents searchable, no folder scanned; "
            "register one with --map NAME=DIR or `memtrove collection add DIR --name NAME`):"
        )
        lines += [
            f"  {name}" + (f" (the source names {hint!r})" if hint else "")
            for name, hint in unregistered.items()
        ]
    return lines
