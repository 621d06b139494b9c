"""The Vault's moving methods: ``export`` to memtrove's JSON-lines file and ``import`` it
back (:mod:`memtrove.mine.portable`), and ``import clawmem`` (:mod:`memtrove.mine.clawmem_import`)."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtrove.errors import CollectionError, PortableFormatError
from memtrove.text import shown_path
from memtrove.vault.state import VaultState

if TYPE_CHECKING:
    from memtrove.mine.clawmem_import import ClawmemReport
    from memtrove.mine.import_runs import ImportRunRecord
    from memtrove.mine.portable_report import ExportReport, ImportReport
    from memtrove.results import EmbedReport
    from memtrove.security.redaction import Redactor

__all__ = ["PortableAccess"]


class PortableAccess(VaultState):
    """Export, import and moving in from ClawMem."""

    if TYPE_CHECKING:

        @property
        def redactor(self) -> Redactor: ...

        def add_collection(
            self, path: str | Path, name: str | None = None, *a: Any, **k: Any
        ) -> Any: ...

        def embed(self, *, force: bool = False, progress: Any = None) -> EmbedReport: ...

    def export_lines(self, *, vectors: bool = False) -> Iterator[str]:
        """The whole vault as export lines (see :mod:`memtrove.mine.portable`), read from
        one snapshot on a connection of its own: other callers are never held up.
        ``vectors`` adds the fragment vectors (an import into the same embedding space then
        needs no re-embedding)."""
        from memtrove import __version__
        from memtrove.mine.portable import export_lines
        from memtrove.text import now_iso

        collections = [collection.to_dict() for collection in self.collections()]
        return export_lines(
            self.path, collections, version=__version__, exported_at=now_iso(), vectors=vectors
        )

    def export_to(self, path: str | Path, *, vectors: bool = False) -> ExportReport:
        """Write the export to ``path`` (through a temporary file beside it, renamed when
        complete, so a failed export never leaves a partial file under that name)."""
        from memtrove.mine.portable_report import ExportReport

        started = time.monotonic()
        target = Path(path).expanduser()
        shown = shown_path(str(target))
        if not target.name:
            raise PortableFormatError(f"cannot write {shown!r}: name a file to write")
        try:
            found = target.lstat()
        except FileNotFoundError:
            pass
        except OSError as error:
            raise PortableFormatError(f"cannot write {shown}: {error.strerror or error}") from None
        else:  # replaced when complete: a device, a pipe or a link would be replaced too
            if not stat.S_ISREG(found.st_mode):
                raise PortableFormatError(f"cannot write {shown}: it is not a regular file")
        partial = target.with_name(target.name + ".partial")
        records, size = -2, 0  # the header and the end line are not records
        try:
            with partial.open("w", encoding="utf-8") as stream:
                for line in self.export_lines(vectors=vectors):
                    stream.write(line)
                    records += 1
                    size += len(line.encode("utf-8"))
            os.replace(partial, target)
        except OSError as error:
            with contextlib.suppress(OSError):  # a read-only folder refuses this too
                partial.unlink(missing_ok=True)
            raise PortableFormatError(f"cannot write {shown}: {error.strerror or error}") from None
        except BaseException:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            raise
        return ExportReport(str(target), records, size, round(time.monotonic() - started, 3))

    def import_from(
        self,
        path: str | Path,
        *,
        dry_run: bool = False,
        embed: bool = False,
        merge: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Import an export file into this (empty) vault in one transaction; register its
        collections whose folders exist here; ``embed`` then embeds every fragment.
        ``merge``: add it to a vault in use (what the vault holds wins; see
        :mod:`memtrove.mine.portable_merge`)."""
        from memtrove.mine.portable_import import import_lines, open_export, read_lines
        from memtrove.mine.portable_report import ImportReport

        started = time.monotonic()
        source = Path(path).expanduser()
        with self._recorded("export", source, dry_run) as run:
            with open_export(source) as stream, self._lock:
                imported = import_lines(
                    self._connection,
                    read_lines(stream),
                    redact=self.redactor.redact,  # built once, not per text
                    dry_run=dry_run,
                    merge=merge,
                    progress=progress,
                )
            added, missing = self._register(imported.header.get("collections"), dry_run)
            report = self.embed().to_dict() if embed and not dry_run else None
            result = ImportReport(
                str(source),
                imported.records,
                imported.added,
                added,
                missing,
                imported.redacted,
                dry_run,
                report,
                round(time.monotonic() - started, 3),
            )
            run.done(sum(result.records.values()), sum(result.added.values()), result.to_dict())
        return result

    def _recorded(
        self, kind: str, source: Path, dry_run: bool
    ) -> contextlib.AbstractContextManager[ImportRunRecord]:
        """The ``import_runs`` row of this run (see :mod:`memtrove.mine.import_runs`)."""
        from memtrove.mine.import_runs import recorded_import

        return recorded_import(
            self._connection, kind, str(source.resolve()), dry_run=dry_run, guard=self._lock
        )

    def import_clawmem(
        self,
        path: str | Path,
        *,
        config: str | Path | None = None,
        dry_run: bool = False,
        embed: bool = False,
        renames: Mapping[str, str] | None = None,
    ) -> ClawmemReport:
        """Bring a ClawMem vault over (see :mod:`memtrove.mine.clawmem_import`); safe to
        run again: what already arrived is left as it is. ``renames``: ClawMem collection ->
        its name here; a ClawMem collection named like a folder collection of this vault
        that lives in another folder raises CollectionError (nothing is written)."""
        from memtrove.config import validate_collection_name
        from memtrove.mine.clawmem_import import (
            check_collections,
            clawmem_collections,
            import_clawmem,
            read_clawmem_config,
        )

        started = time.monotonic()
        renames = dict(renames or {})
        for new in renames.values():
            validate_collection_name(new)
        collections = read_clawmem_config(Path(path).expanduser(), config)
        check_collections(
            clawmem_collections(Path(path).expanduser()),
            renames,
            {name: folder for name, (folder, _) in collections.items()},
            {collection.name: collection.path for collection in self.collections()},
        )
        with self._recorded("clawmem", Path(path).expanduser(), dry_run) as run:
            with self._lock:
                report = import_clawmem(
                    self._connection,
                    Path(path).expanduser(),
                    redact=self.redactor.redact,
                    dry_run=dry_run,
                    renames=renames,
                )
            added, missing = self._register(
                [
                    {"name": renames.get(name, name), "path": folder, "pattern": pattern}
                    for name, (folder, pattern) in collections.items()
                ],
                dry_run,
            )
            embedded = self.embed().to_dict() if embed and not dry_run else None
            result = report._replace(
                collections_added=added,
                collections_missing=sorted({*missing, *report.collections_missing} - set(added)),
                embed=embedded,
                elapsed_seconds=round(time.monotonic() - started, 3),
            )
            documents = result.documents
            run.done(
                int(documents.get("total", 0)) + sum(result.records.values()),
                int(documents.get("added", 0))
                + int(documents.get("updated", 0))
                + sum(result.records.values()),
                result.to_dict(),
            )
        return result

    def _register(self, collections: Any, dry_run: bool) -> tuple[list[str], list[str]]:
        """Add to ``config.yaml`` the collections whose folder exists here and holds their
        files (and whose name is free); the names of the others. A dry run only says which.

        "Holds their files": each of the collection's first active documents is a file there
        whose text, read as ``update`` reads it, has the body's hash. A file from elsewhere
        names any folder it likes; this keeps a crafted export from registering (and the
        next ``update`` from indexing) a folder that is not its own, such as ``/etc`` behind
        a document named ``passwd``. A registered collection is always redacted: an export
        file cannot turn redaction off."""
        added: list[str] = []
        missing: list[str] = []
        if not isinstance(collections, list):
            return added, missing
        configured = {collection.name for collection in self.collections()}
        for entry in collections:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                continue
            name = str(entry["name"])
            if name in configured or name.startswith("_"):
                continue
            folder = Path(str(entry.get("path", ""))).expanduser()
            if not folder.is_dir():
                missing.append(name)
                continue
            if dry_run:
                added.append(name)
                continue
            if not self._holds_its_files(name, folder):
                missing.append(name)
                continue
            try:
                self.add_collection(
                    folder,
                    name=name,
                    pattern=str(entry.get("pattern") or "**/*.md"),
                    exclude=tuple(entry.get("exclude") or ()),
                    surface=bool(entry.get("surface", True)),
                    stale_after_days=entry.get("stale_after_days", "auto"),
                    redact=True,
                )
            except CollectionError:
                missing.append(name)
                continue
            added.append(name)
        return added, missing

    def _holds_its_files(self, collection: str, folder: Path) -> bool:
        with self._lock:
            rows = [
                (str(path), str(body_hash))
                for path, body_hash in self._connection.execute(
                    "SELECT path, hash FROM documents WHERE collection = ? AND active = 1 "
                    "ORDER BY id LIMIT 5",
                    (collection,),
                )
            ]
        root, redact = folder.resolve(), self.redactor.redact
        return bool(rows) and all(
            _file_hash(root, path, redact) == body_hash for path, body_hash in rows
        )


def _file_hash(root: Path, path: str, redact: Callable[[str], str]) -> str | None:
    """The hash ``update`` would give the file at ``root/path`` (None when there is none):
    its text, redacted, as the indexer reads it."""
    from memtrove.files import open_regular
    from memtrove.index.preparing import body_hash, decode_file
    from memtrove.index.scanner import MAX_FILE_BYTES

    candidate = (root / path).resolve()
    if not candidate.is_relative_to(root):
        return None
    try:
        with open_regular(candidate) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return body_hash(redact(decode_file(data)[0]))
