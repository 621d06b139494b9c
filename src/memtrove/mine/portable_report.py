"""What ``export`` and ``import`` report (:mod:`memtrove.vault.portable`)."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["ExportReport", "ImportReport"]


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
    and those whose folder is not on this machine (their documents arrive all the same)."""

    path: str
    records: dict[str, int]
    added: dict[str, int]
    collections_added: list[str]
    collections_missing: list[str]
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
        if self.collections_added:
            lines.append("collections registered: " + ", ".join(self.collections_added))
        if self.collections_missing:
            lines.append(
                "collections whose folder is not here (documents kept, not re-scanned): "
                + ", ".join(self.collections_missing)
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
