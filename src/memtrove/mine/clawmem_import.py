"""``memtrove import clawmem PATH``: a ClawMem vault (its ``index.sqlite`` and collection
config) brought over into this vault.

The source is opened read-only (``mode=ro``; nothing is ever written to it) and read row by
row. Everything lands in one ``BEGIN IMMEDIATE`` transaction (a dry run rolls it back):

- documents with their content (redacted like every write), title, type, confidence,
  quality, pins, snoozes, access counters, dates (``created_at``, ``modified_at``,
  ``authored_at``, normalised to memtrove's UTC seconds), tags, A-MEM notes, and their
  forgotten/invalidated state (an inactive ClawMem document stays out of search, and
  ``update`` keeps it out while its file holds that body); ``_clawmem`` becomes ``_memtrove``;
- relations, A-MEM evolution, entities (nodes, mentions, co-occurrences, the name index),
  triples, sessions (``session_log``, with a row made from ``context_usage`` for sessions
  ClawMem logged only there), context usage, recall events and stats, co-activations (ClawMem
  pairs paths; here they pair document ids) and the hook dedupe table.

Documents keep their collection and path (``renames`` gives a ClawMem collection another
name here). A ClawMem collection named like one of this vault's folder collections is
refused unless ClawMem's config puts it in that same folder: landing in another folder's
collection, its documents would be taken out of search by the next ``update`` there
(:func:`check_collections`; ``--rename OLD=NEW`` imports it under a free name). A
collection is added to ``config.yaml`` (so ``update`` keeps it current) only when the user
maps it to a folder (``--map NAME=DIR``, see :mod:`memtrove.mine.import_folders`): the
folders ClawMem's config names are hints, never read. The others are not registered: their
documents arrive all the same, are found by every search, and no ``update`` touches them
(``collection add FOLDER --name NAME`` later takes them over). Vectors are not copied
(another model): ``--embed`` embeds.

What cannot be mapped (caches, vectors, beads, consolidation and maintenance runs, columns
memtrove has no place for) is counted and named in the report. A second run changes
nothing: documents are matched by collection and path (same body: left as it is), and every
other row by its key or its natural key.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import CollectionError, PortableFormatError
from memtrove.files import read_regular
from memtrove.index.classify import quality_score
from memtrove.index.indexer import (
    _insert_document,
    _store_content,
    _write_document,
    deactivate_documents,
)
from memtrove.index.markdown import parse_markdown
from memtrove.index.preparing import Prepared
from memtrove.index.scanner import FileEntry
from memtrove.index.types import CONTENT_TYPES
from memtrove.index.writing import LinkPass
from memtrove.mine.clawmem_tables import (
    import_tables,
    not_mapped_tables,
    plain,
    quoted,
    skipped_rows,
    table_kinds,
    when,
)
from memtrove.mine.portable_report import collection_lines
from memtrove.text import is_inside_path, is_written_name

__all__ = [
    "ClawmemReport",
    "check_collections",
    "clawmem_collections",
    "import_clawmem",
    "open_clawmem",
    "read_clawmem_config",
]

INTERNAL = {"_clawmem": "_memtrove"}
CONFIG_MAX_BYTES = 1 << 20
_CONFIG_NAMES = ("config.yaml", "index.yml", "config/config.yaml", "config/index.yml")
# Document columns kept (the rest, when they hold a value, are counted as not mapped).
_MAPPED = frozenset(
    {
        "id", "collection", "path", "title", "hash", "created_at", "modified_at", "active",
        "tags", "content_type", "confidence", "access_count", "quality_score", "pinned",
        "snoozed_until", "last_accessed_at", "duplicate_count", "revision_count",
        "authored_at", "amem_keywords", "amem_tags", "amem_context", "invalidated_at",
        "invalidated_by", "superseded_by",
        # the vectors' state: re-embedded here
        "embed_state", "embed_error", "embed_attempts",
    }
)  # fmt: skip
_DEFAULTS: dict[str, object] = {"memory_type": "semantic", "duplicate_count": 1}


class ClawmemReport(NamedTuple):
    """What ``import clawmem`` brought over, what it left as it was, and what it could not
    map (``not_mapped``: table or ``documents.column`` -> rows and the reason)."""

    source: str
    documents: dict[str, int]
    records: dict[str, int]
    not_mapped: dict[str, dict[str, Any]]
    collections_added: list[str]
    collections_unregistered: dict[str, str]
    folders: list[dict[str, Any]]
    redacted: int
    dry_run: bool
    embed: dict[str, Any] | None
    elapsed_seconds: float

    def text(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        docs = self.documents
        lines = [
            f"{verb} from {self.source}: documents +{docs['added']} ~{docs['updated']} "
            f"={docs['unchanged']} (of {docs['total']}) in {self.elapsed_seconds:.2f}s"
        ]
        lines += [f"  {table}: +{count}" for table, count in self.records.items() if count]
        lines += collection_lines(
            self.collections_added, self.collections_unregistered, self.folders, self.dry_run
        )
        kept_out = {name: item for name, item in self.not_mapped.items() if item["rows"]}
        if kept_out:
            lines.append("not imported:")
            lines += [
                f"  {name}: {item['rows']} ({item['reason']})" for name, item in kept_out.items()
            ]
        if self.redacted:
            lines.append(f"redacted {self.redacted} text(s) holding secrets")
        if self.embed is not None:
            lines.append(f"embedded {self.embed.get('fragments', 0)} fragment(s)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


def _database_file(path: Path) -> Path:
    if path.is_dir():
        path = path / "index.sqlite"
    if not path.is_file():
        raise PortableFormatError(f"no ClawMem vault at {path} (index.sqlite)")
    return path


def read_clawmem_config(path: Path, config: str | Path | None) -> dict[str, tuple[str, str]]:
    """ClawMem's collections (name -> folder, pattern) from ``config`` or, without one, a
    ``config.yaml``/``index.yml`` beside the database (or in ``config/``); {} when none."""
    import yaml

    if config is not None:
        file = Path(config).expanduser()
        if not file.is_file():
            raise PortableFormatError(f"no ClawMem config at {file}")
    else:
        folder = path if path.is_dir() else path.parent
        found = [folder / name for name in _CONFIG_NAMES if (folder / name).is_file()]
        if not found:
            return {}
        file = found[0]
    try:  # a FIFO or a device in the config's place is refused, never waited on
        data = yaml.safe_load(read_regular(file, CONFIG_MAX_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise PortableFormatError(
            f"{file}: not a readable ClawMem config ({type(error).__name__})"
        ) from None
    entries = data.get("collections") if isinstance(data, dict) else None
    collections: dict[str, tuple[str, str]] = {}
    for name, value in (entries or {}).items() if isinstance(entries, dict) else ():
        if isinstance(value, str):
            collections[str(name)] = (value, "**/*.md")
        elif isinstance(value, dict) and isinstance(value.get("path"), str):
            collections[str(name)] = (value["path"], str(value.get("pattern") or "**/*.md"))
    return collections


def open_clawmem(path: Path) -> Connection:
    """The ClawMem database, read-only (``mode=ro``: SQLite refuses every write)."""
    import sqlean

    file = _database_file(path)
    try:
        source: Connection = sqlean.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        # A file from elsewhere is read as untrusted: its views and triggers may not call
        # functions with side effects (and are never read: see table_kinds).
        source.execute("PRAGMA trusted_schema = OFF")
        kinds = table_kinds(source)
    except sqlean.DatabaseError as error:
        raise PortableFormatError(f"{file}: not a SQLite database ({error})") from None
    if kinds.get("documents") != "table" or kinds.get("content") != "table":
        source.close()
        raise PortableFormatError(f"{file}: not a ClawMem vault (no documents and content tables)")
    return source


def clawmem_collections(path: Path) -> list[str]:
    """The collection names the ClawMem vault's documents use, sorted."""
    source = open_clawmem(path)
    try:
        return sorted(
            str(plain(row[0]))
            for row in source.execute("SELECT DISTINCT collection FROM documents")
        )
    finally:
        source.close()


def check_collections(
    names: list[str],
    renames: Mapping[str, str],
    clawmem_folders: Mapping[str, str],
    folders_here: Mapping[str, Path],
) -> None:
    """Raise CollectionError (one line) for a rename that names no ClawMem collection, an
    internal one, a repeated new name (the caller checks that it is a valid name), or a
    ClawMem collection that would land in one of this vault's folder collections
    (``folders_here``: name -> folder) although ClawMem's config does not put it there."""
    for name in names:
        here = renames.get(name, INTERNAL.get(name, name))
        if here in INTERNAL.values():
            continue
        if here.startswith("_") or not is_written_name(here):
            raise CollectionError(
                f"ClawMem collection {name[:80]!r} is not a name this vault can hold: "
                f"import it under another with --rename {name[:80]}=NEW"
            )
    targets: dict[str, str] = {}
    for old, new in renames.items():
        if old not in names:
            raise CollectionError(
                f"--rename {old}={new}: the ClawMem vault has no collection {old!r} "
                f"(it has {', '.join(names) or 'none'})"
            )
        if old in INTERNAL or new.startswith("_"):
            raise CollectionError(f"--rename {old}={new}: internal collections keep their name")
        if new in targets or (new in names and new not in renames):
            raise CollectionError(f"--rename {old}={new}: {new!r} is taken by another collection")
        targets[new] = old
    for name in names:
        here = renames.get(name, INTERNAL.get(name, name))
        folder = folders_here.get(here)
        if folder is None:
            continue
        theirs = clawmem_folders.get(name)
        if theirs is not None and _same_folder(theirs, folder):
            continue
        where = (
            f"ClawMem's folder {theirs}" if theirs else "a folder ClawMem's config does not name"
        )
        raise CollectionError(
            f"ClawMem collection {name!r} ({where}) has the name of this vault's collection "
            f"{here!r} ({folder}), and its next update would drop them: "
            f"import it under another name with --rename {name}={here}-clawmem"
        )


def _same_folder(theirs: str, folder: Path) -> bool:
    """Whether the folder ClawMem's config names is ``folder`` (a name that cannot be a
    folder here, with a NUL, an unknown ``~user`` or a loop of links, is not)."""
    try:
        return Path(theirs).expanduser().resolve() == folder.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def import_clawmem(
    connection: Connection,
    path: Path,
    *,
    redact: Callable[[str], str],
    dry_run: bool = False,
    renames: Mapping[str, str] | None = None,
) -> ClawmemReport:
    """Bring the ClawMem vault at ``path`` over into ``connection``'s vault (see the module
    docstring); one transaction, rolled back for a dry run. ``renames``: ClawMem collection
    name -> the name it gets here (checked first by :func:`check_collections`)."""
    import sqlean

    started = time.monotonic()
    source = open_clawmem(path)
    try:
        importer = _Documents(connection, source, redact, renames or {})
        try:
            with write_transaction(connection):
                importer.run()
                records, skipped = import_tables(
                    connection, source, importer.ids, importer.paths, redact
                )
                if dry_run:
                    raise _DryRun
        except _DryRun:
            pass
        except (
            ValueError,
            TypeError,
            KeyError,
            OverflowError,
            RecursionError,
            sqlean.DatabaseError,
        ) as error:
            # A row ClawMem would not have written (a hand-edited or damaged file): nothing
            # was written here (the transaction rolled back), and the user gets one line.
            message = " ".join(str(error).split()) or type(error).__name__
            raise PortableFormatError(
                f"{_database_file(path)}: a row that cannot be read ({message}); nothing was imported"
            ) from None
        not_mapped = {
            **not_mapped_tables(source),
            **importer.unmapped_columns(),
            **skipped_rows(skipped),
        }
    finally:
        source.close()
    collections = sorted({c for c in importer.collections if not c.startswith("_")})
    return ClawmemReport(
        str(_database_file(path)),
        importer.counts,
        records,
        not_mapped,
        [],
        dict.fromkeys(collections, ""),
        [],
        importer.redacted,
        dry_run,
        None,
        round(time.monotonic() - started, 3),
    )


class _DryRun(Exception):
    pass


def _number(row: dict[str, Any], name: str, default: float) -> float:
    value = row.get(name)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else default


def _tags(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        items = json.loads(value)
    except (ValueError, RecursionError):
        items = None
    if isinstance(items, str | int | float):
        items = [items]  # "5", "\"go\"": one tag
    elif not isinstance(items, list):
        items = [part.strip() for part in value.split(",")]
    tags = [str(item).strip()[:100] for item in items if isinstance(item, str | int | float)]
    tags = [tag for tag in tags if tag][:50]
    return json.dumps(tags, ensure_ascii=False) if tags else None


class _Documents:
    """The documents pass: ClawMem ids mapped to memtrove ids, and paths to ids."""

    def __init__(
        self,
        connection: Connection,
        source: Connection,
        redact: Callable[[str], str],
        renames: Mapping[str, str],
    ) -> None:
        self.connection = connection
        self.renames = {**renames, **INTERNAL}
        self.source = source
        self.redact = redact
        self.ids: dict[int, int] = {}
        self.paths: dict[str, int] = {}  # "collection/path" as ClawMem displays it -> id
        self.counts = {"total": 0, "added": 0, "updated": 0, "unchanged": 0}
        self.collections: set[str] = set()
        self.redacted = 0
        self.outside = 0
        self.columns = [str(row[1]) for row in source.execute("PRAGMA table_info(documents)")]

    def _clean(self, text: str) -> str:
        cleaned = self.redact(text)
        if cleaned != text:
            self.redacted += 1
        return cleaned

    def run(self) -> None:
        links = LinkPass(True)
        names = ", ".join(f"d.{quoted(c)}" for c in self.columns)
        rows = self.source.execute(
            f"SELECT {names}, c.doc FROM documents d JOIN content c ON c.hash = d.hash ORDER BY d.id"
        )
        later: list[tuple[int, Any, Any]] = []
        for values in rows:
            row = dict(zip([*self.columns, "doc"], map(plain, values), strict=True))
            self.counts["total"] += 1
            if not is_inside_path(str(row["path"])):
                self.outside += 1  # "../../x.md", "/etc/x": no file of a collection
                continue
            doc_id = self._document(row, links)
            if row.get("invalidated_by") is not None or row.get("superseded_by") is not None:
                later.append((doc_id, row.get("invalidated_by"), row.get("superseded_by")))
        links.flush(self.connection)
        for doc_id, invalidated_by, superseded_by in later:
            self.connection.execute(
                "UPDATE documents SET invalidated_by = ?, superseded_by = ? WHERE id = ?",
                (self.ids.get(invalidated_by or -1), self.ids.get(superseded_by or -1), doc_id),
            )

    def _document(self, row: dict[str, Any], links: LinkPass) -> int:
        collection = self.renames.get(str(row["collection"]), str(row["collection"]))
        path = str(row["path"])
        self.collections.add(collection)
        text = self._clean(str(row["doc"]))
        data = text.encode("utf-8", "surrogatepass")
        body_hash = hashlib.sha256(data).hexdigest()
        existing = self.connection.execute(
            "SELECT id, hash FROM documents WHERE collection = ? AND path = ?", (collection, path)
        ).fetchone()
        if existing is not None and str(existing[1]) == body_hash:
            self.counts["unchanged"] += 1
            return self._mapped(row, int(existing[0]))
        parsed = parse_markdown(text)
        content_type = str(row.get("content_type") or "note")
        item = Prepared(
            file=FileEntry(path=path, absolute="", size=len(data), mtime_ns=0),
            text=text,
            hash=body_hash,
            parsed=parsed,
            title=self._clean(str(row.get("title") or path)),
            content_type=content_type if content_type in CONTENT_TYPES else "note",
            quality=quality_score(parsed.body, bool(parsed.frontmatter_span)),
            authored_at=when(row.get("authored_at")),
            tags=_tags(row.get("tags")),
        )
        now = when(row.get("created_at")) or "1970-01-01T00:00:00Z"
        _store_content(self.connection, item, now)
        if existing is None:
            doc_id = _insert_document(self.connection, collection, item, now)
            self.counts["added"] += 1
        else:
            doc_id = int(existing[0])
            _write_document(self.connection, doc_id, item, collection, now, revision=True)
            self.counts["updated"] += 1
        links.wrote(doc_id, item, moved=True)
        self._metadata(doc_id, row, item)
        return self._mapped(row, doc_id)

    def _mapped(self, row: dict[str, Any], doc_id: int) -> int:
        self.ids[int(row["id"])] = doc_id
        self.paths[f"{row['collection']}/{row['path']}"] = doc_id
        return doc_id

    def _metadata(self, doc_id: int, row: dict[str, Any], item: Prepared) -> None:
        self.connection.execute(
            "UPDATE documents SET created_at = ?, modified_at = ?, confidence = ?, "
            "quality_score = ?, pinned = ?, snoozed_until = ?, access_count = ?, "
            "last_accessed_at = ?, duplicate_count = ?, revision_count = ?, "
            "amem_keywords = ?, amem_tags = ?, amem_context = ?, invalidated_at = ?, "
            "file_size = NULL, file_mtime_ns = NULL WHERE id = ?",
            (
                when(row.get("created_at")) or "1970-01-01T00:00:00Z",
                when(row.get("modified_at"))
                or when(row.get("created_at"))
                or "1970-01-01T00:00:00Z",
                float(_number(row, "confidence", 0.5)),
                float(_number(row, "quality_score", item.quality)),
                1 if row.get("pinned") else 0,
                when(row.get("snoozed_until")),
                int(_number(row, "access_count", 0)),
                when(row.get("last_accessed_at")),
                int(_number(row, "duplicate_count", 1)),
                int(_number(row, "revision_count", 1)),
                row.get("amem_keywords"),
                row.get("amem_tags"),
                row.get("amem_context"),
                when(row.get("invalidated_at")),
                doc_id,
            ),
        )
        if not row.get("active", 1) or row.get("archived_at"):
            deactivate_documents(self.connection, [doc_id])
            self.connection.execute(
                "UPDATE documents SET forgotten_hash = hash WHERE id = ?", (doc_id,)
            )

    def unmapped_columns(self) -> dict[str, dict[str, Any]]:
        """Document columns memtrove has no place for that hold a value, with their counts."""
        found: dict[str, dict[str, Any]] = {}
        bodiless = int(
            self.source.execute(
                "SELECT COUNT(*) FROM documents WHERE hash NOT IN (SELECT hash FROM content)"
            ).fetchone()[0]
        )
        if bodiless:
            found["documents (without their content)"] = {
                "rows": bodiless,
                "reason": "their body is not in the source's content table",
            }
        if self.outside:
            found["documents (with a path outside their collection)"] = {
                "rows": self.outside,
                "reason": "a path such as ../x.md or /x.md names no file of a collection",
            }
        for column in self.columns:
            if column in _MAPPED:
                continue
            default = _DEFAULTS.get(column)
            where = f"{quoted(column)} IS NOT NULL AND {quoted(column)} != ''"
            arguments: tuple[object, ...] = ()
            if default is not None:
                where += f" AND {quoted(column)} != ?"
                arguments = (default,)
            count = int(
                self.source.execute(
                    f"SELECT COUNT(*) FROM documents WHERE {where}", arguments
                ).fetchone()[0]
            )
            if count:
                found[f"documents.{column}"] = {
                    "rows": count,
                    "reason": "no such document field here",
                }
        return found
