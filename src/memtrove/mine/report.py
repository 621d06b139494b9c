"""What one ``mine`` run did: counts per format, documents written or unchanged, what was
skipped and why, the files no reader recognised."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["FormatCounts", "MineReport", "MineRun"]

MAX_LISTED = 100  # unrecognised files and errors listed by name; the rest only counted


class FormatCounts(NamedTuple):
    files: int = 0
    conversations: int = 0
    exchanges: int = 0


class MineReport(NamedTuple):
    """The outcome of mining one folder into one collection."""

    collection: str
    source: str
    dry_run: bool
    formats: dict[str, FormatCounts]
    written: int
    """Documents created or changed (would be, in a dry run)."""
    unchanged: int
    retired: int
    """Documents of a re-read conversation that it no longer holds (a rewound branch)."""
    skipped: dict[str, dict[str, int]]
    """Per format, what the readers and the writer dropped, by reason (and cut: ``message
    cut to 1,000,000 characters``); under ``files``, what was refused before any reader
    saw it (``symbolic link (not followed)``, ``not a regular file``)."""
    unrecognised: list[str]
    unrecognised_count: int
    errors: list[str]
    elapsed_seconds: float
    document_ids: tuple[int, ...] = ()
    """The ids of the documents written (for a pass that runs after the import)."""
    run_id: int | None = None

    @property
    def exchanges(self) -> int:
        return sum(counts.exchanges for counts in self.formats.values())

    @property
    def conversations(self) -> int:
        return sum(counts.conversations for counts in self.formats.values())

    @property
    def files(self) -> int:
        return sum(counts.files for counts in self.formats.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "source": self.source,
            "dryRun": self.dry_run,
            "files": self.files,
            "conversations": self.conversations,
            "exchanges": self.exchanges,
            "written": self.written,
            "unchanged": self.unchanged,
            "retired": self.retired,
            "formats": {name: counts._asdict() for name, counts in sorted(self.formats.items())},
            "skipped": {name: dict(sorted(r.items())) for name, r in sorted(self.skipped.items())},
            "unrecognised": self.unrecognised,
            "unrecognisedCount": self.unrecognised_count,
            "errors": self.errors,
            "elapsedSeconds": self.elapsed_seconds,
            "runId": self.run_id,
        }

    def text(self) -> str:
        verb = "would write" if self.dry_run else "wrote"
        lines = [
            f"{'dry run: ' if self.dry_run else ''}mined {self.files} files into "
            f"{self.collection!r}: {self.conversations} conversations, {self.exchanges} "
            f"exchanges; {verb} {self.written}, unchanged {self.unchanged}"
            + (f", retired {self.retired}" if self.retired else "")
            + f" ({self.elapsed_seconds:.2f}s)"
        ]
        for name, counts in sorted(self.formats.items()):
            lines.append(
                f"  {name}: {counts.files} files, {counts.conversations} conversations, "
                f"{counts.exchanges} exchanges"
            )
        for name, reasons in sorted(self.skipped.items()):
            listed = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
            lines.append(f"  skipped ({name}): {listed}")
        if self.unrecognised_count:
            lines.append(f"  unrecognised: {self.unrecognised_count} files")
            lines.extend(f"    {path}" for path in self.unrecognised[:20])
            if self.unrecognised_count > 20:
                lines.append(f"    ... and {self.unrecognised_count - 20} more")
        lines.extend(f"  error: {error}" for error in self.errors[:20])
        return "\n".join(lines)


class MineRun(NamedTuple):
    """One recorded run (``import_status``, ``doctor``)."""

    id: int
    collection: str
    source: str
    started_at: str
    finished_at: str | None
    status: str
    files: int
    conversations: int
    exchanges: int
    written: int
    unchanged: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "collection": self.collection,
            "source": self.source,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "status": self.status,
            "files": self.files,
            "conversations": self.conversations,
            "exchanges": self.exchanges,
            "written": self.written,
            "unchanged": self.unchanged,
        }
