"""The portable area (``vault.portable``): ``export`` to memtrove's JSON-lines file and
``import`` it back (:mod:`memtrove.mine.portable`), and ``import clawmem``
(:mod:`memtrove.mine.clawmem_import`).

Contract: given the vault's database (an export reads ``database.location`` on a connection
of its own), the vault's ``config.yaml`` (``config_file``: its folder is never mapped as an
import's folder), the configured collections (``collections``) and ``add_collection`` (the
only way an import registers a folder), the vault's ``embed`` and its ``redactor`` (a
callable: every imported text is redacted by it). Its statements are those of
:mod:`memtrove.mine` (``portable_import``, ``portable_merge``, ``clawmem_import``,
``import_runs``); it reads ``documents`` only to check a mapped folder.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtrove.errors import PortableFormatError
from memtrove.text import shown_path

if TYPE_CHECKING:
    from memtrove.db.database import Database
    from memtrove.index.embedding import EmbedReport
    from memtrove.mine.clawmem_import import ClawmemReport
    from memtrove.mine.import_folders import FolderPlan
    from memtrove.mine.import_runs import ImportRunRecord
    from memtrove.mine.portable_report import ExportReport, ImportReport
    from memtrove.results import Collection
    from memtrove.security.redaction import Redactor

__all__ = ["PortableArea"]


class PortableArea:
    """Export, import and moving in from ClawMem."""

    def __init__(
        self,
        database: Database,
        *,
        config_file: Path,
        collections: Callable[[], list[Collection]],
        add_collection: Callable[..., Collection],
        embed: Callable[[], EmbedReport],
        redactor: Callable[[], Redactor],
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self._location = database.location  # a file's path or a server's URL
        self._config_file, self._collections, self._add_collection, self._embed, self._redactor = (
            config_file,
            collections,
            add_collection,
            embed,
            redactor,
        )

    def export_lines(self, *, vectors: bool = False) -> Iterator[str]:
        """The whole vault as export lines (see :mod:`memtrove.mine.portable`), read from
        one snapshot on a connection of its own: other callers are never held up.
        ``vectors`` adds the fragment vectors (an import into the same embedding space then
        needs no re-embedding)."""
        from memtrove import __version__
        from memtrove.mine.portable import export_lines
        from memtrove.text import now_iso

        collections = [collection.to_dict() for collection in self._collections()]
        return export_lines(
            self._location, collections, version=__version__, exported_at=now_iso(), vectors=vectors
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
        folders: Mapping[str, str | Path] | None = None,
        allow_any_folder: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Import an export file into this (empty) vault in one transaction; ``embed`` then
        embeds every fragment. ``merge``: add it to a vault in use (what the vault holds
        wins; see :mod:`memtrove.mine.portable_merge`).

        The file's collections are registered only where ``folders`` (name -> folder) maps
        them: the folders the file names are never read (see
        :mod:`memtrove.mine.import_folders`); ``allow_any_folder`` lets a mapping name the
        home folder, a dot-folder or a folder holding the vault."""
        from memtrove.mine.import_folders import folder_hints
        from memtrove.mine.portable_import import open_export, read_lines
        from memtrove.mine.portable_load import import_lines
        from memtrove.mine.portable_report import ImportReport

        started = time.monotonic()
        source = Path(path).expanduser()
        mapped = self._mapped(folders, lambda: list(_export_collections(source)), allow_any_folder)
        with self._recorded("export", source, dry_run) as run:
            with open_export(source) as stream, self._lock:
                imported = import_lines(
                    self._connection,
                    read_lines(stream),
                    redact=self._redactor().redact,  # built once, not per text
                    dry_run=dry_run,
                    merge=merge,
                    progress=progress,
                )
            entries = imported.header.get("collections")
            added, plans = self._register(entries, mapped, dry_run)
            report = self._embed().to_dict() if embed and not dry_run else None
            result = ImportReport(
                str(source),
                imported.records,
                imported.added,
                added,
                _unregistered(folder_hints(entries), added, self._collections()),
                [plan._asdict() for plan in plans],
                imported.redacted,
                dry_run,
                report,
                round(time.monotonic() - started, 3),
            )
            run.done(sum(result.records.values()), sum(result.added.values()), result.to_dict())
        return result

    def _mapped(
        self,
        folders: Mapping[str, str | Path] | None,
        names: Callable[[], list[str]],
        allow_any_folder: bool,
    ) -> dict[str, Path]:
        """The user's folder mapping, checked before anything is written."""
        from memtrove.mine.import_folders import check_folders

        if not folders:
            return {}
        protected = [self._config_file.parent]
        return check_folders(folders, names(), protected, allow_any_folder=allow_any_folder)

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
        folders: Mapping[str, str | Path] | None = None,
        allow_any_folder: bool = False,
    ) -> ClawmemReport:
        """Bring a ClawMem vault over (see :mod:`memtrove.mine.clawmem_import`); safe to
        run again: what already arrived is left as it is. ``renames``: ClawMem collection ->
        its name here; a ClawMem collection named like a folder collection of this vault
        that lives in another folder raises CollectionError (nothing is written).
        ``folders`` maps collections (by their name here) to the folders to register for
        them, as for :meth:`import_from`: ClawMem's config only hints."""
        from memtrove.config import validate_collection_name
        from memtrove.mine.clawmem_import import (
            INTERNAL,
            check_collections,
            clawmem_collections,
            import_clawmem,
            read_clawmem_config,
        )
        from memtrove.mine.import_folders import folder_hints

        started = time.monotonic()
        renames = dict(renames or {})
        for new in renames.values():
            validate_collection_name(new)
        source = Path(path).expanduser()
        collections = read_clawmem_config(source, config)
        names = clawmem_collections(source)
        check_collections(
            names,
            renames,
            {name: folder for name, (folder, _) in collections.items()},
            {collection.name: collection.path for collection in self._collections()},
        )
        here = [renames.get(name, name) for name in names if name not in INTERNAL]
        mapped = self._mapped(folders, lambda: here, allow_any_folder)
        entries = [
            {"name": renames.get(name, name), "path": folder, "pattern": pattern}
            for name, (folder, pattern) in collections.items()
        ]
        with self._recorded("clawmem", source, dry_run) as run:
            with self._lock:
                report = import_clawmem(
                    self._connection,
                    source,
                    redact=self._redactor().redact,
                    dry_run=dry_run,
                    renames=renames,
                )
            added, plans = self._register(entries, mapped, dry_run)
            hints = {**dict.fromkeys(here, ""), **folder_hints(entries)}
            embedded = self._embed().to_dict() if embed and not dry_run else None
            result = report._replace(
                collections_added=added,
                collections_unregistered=_unregistered(
                    {name: hint for name, hint in hints.items() if name in here},
                    added,
                    self._collections(),
                ),
                folders=[plan._asdict() for plan in plans],
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

    def _register(
        self, collections: Any, mapped: Mapping[str, Path], dry_run: bool
    ) -> tuple[list[str], list[FolderPlan]]:
        """Add to ``config.yaml`` the collections the user mapped to a folder (``mapped``,
        checked by :func:`~memtrove.mine.import_folders.check_folders`), with the source's
        pattern and excludes and always redacted (a file from elsewhere cannot turn
        redaction off); the names registered and what each folder holds. A dry run only
        plans. A mapped collection this vault already has keeps its folder."""
        from memtrove.mine.import_folders import plan_folder

        added: list[str] = []
        plans: list[FolderPlan] = []
        if not mapped:
            return added, plans
        entries = {
            str(entry["name"]): entry
            for entry in (collections if isinstance(collections, list) else ())
            if isinstance(entry, Mapping) and isinstance(entry.get("name"), str)
        }
        configured = {collection.name for collection in self._collections()}
        for name, folder in mapped.items():
            if name in configured:
                continue
            entry = entries.get(name, {})
            plan = plan_folder(name, folder, entry)
            if not dry_run:
                self._add_collection(
                    folder,
                    name=name,
                    pattern=plan.pattern,
                    exclude=tuple(plan.exclude),
                    surface=entry.get("surface", True) is not False,
                    stale_after_days=entry.get("stale_after_days", "auto"),
                    redact=True,
                )
                sampled, matching = self._matching(name, folder)
                plan = plan._replace(sampled=sampled, matching=matching)
            added.append(name)
            plans.append(plan)
        return added, plans

    def _matching(self, collection: str, folder: Path) -> tuple[int, int]:
        """How many of the collection's first documents are files in ``folder`` with the
        same body (a wrong mapping shows as none)."""
        with self._lock:
            rows = [
                (str(path), str(body_hash))
                for path, body_hash in self._connection.execute(
                    "SELECT path, hash FROM documents WHERE collection = ? AND active = 1 "
                    "ORDER BY id LIMIT 5",
                    (collection,),
                )
            ]
        root, redact = folder.resolve(), self._redactor().redact
        matching = sum(_file_hash(root, path, redact) == body_hash for path, body_hash in rows)
        return len(rows), matching


def _unregistered(
    hints: Mapping[str, str], added: list[str], configured: list[Any]
) -> dict[str, str]:
    """The source's collections left unregistered (name -> the folder it names, a hint
    never read): neither mapped now nor registered here before."""
    here = {collection.name for collection in configured}
    return {
        name: hint
        for name, hint in sorted(hints.items())
        if name not in added and name not in here and not name.startswith("_")
    }


def _export_collections(source: Path) -> list[str]:
    """The collection names an export's header lists (none when it cannot be read: the
    import then names the fault)."""
    import json

    from memtrove.mine.import_folders import folder_hints
    from memtrove.mine.portable_import import open_export

    with open_export(source) as stream:
        first = stream.readline(16 * 1024 * 1024)
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):
        return []
    entries = header.get("collections") if isinstance(header, dict) else None
    return list(folder_hints(entries))


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
