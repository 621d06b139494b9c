"""``Vault.portable.export_to`` / ``Vault.portable.import_from``: memtrove's own vault out and
back in, lossless, and refused (with nothing written) when the file or the target is wrong."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.migration_names import NAMES
from memtrove.errors import PortableFormatError, VaultNotEmptyError
from memtrove.mine.portable import known_migrations, schema_level
from tests.conftest import write
from tests.postgres_server import fresh_schema

QUERIES = (
    "refresh token race",
    "why did we choose PostgreSQL",
    "image uploads failing",
    "deploy on wednesdays",
    "heron caching queues retries",
    "handoff follow-ups",
    "EXIF GPS coordinates",
    "note 17 topic",
)


def _populated(tmp_path: Path, example_copy: Path, location: Path | str | None = None) -> Vault:
    """The example vault plus generated notes, entries (with versions), edges, facts,
    rules, a session, a pin, a snooze and a forgotten document (in a SQLite file, unless
    ``location`` names another vault)."""
    notes = tmp_path / "generated"
    for index in range(40):
        write(
            notes,
            f"part{index % 4}/note-{index:03}.md",
            f"---\ndate: 2026-0{1 + index % 9}-1{index % 10}\ntags: [gen, n{index % 3}]\n---\n"
            f"# Note {index}\n\n## Topic\n\nHeron {index} about caching, queues and retries.\n\n"
            f"- item one {index}\n- see [the next](note-{index + 1:03}.md)\n",
        )
    vault = Vault.open(
        location or tmp_path / "source.sqlite", config_dir=tmp_path / "source-config"
    )
    vault.add_collection(example_copy, name="demo")
    vault.add_collection(notes, name="generated")
    vault.update()
    vault.memory.remember("deploy rule", "Deploy on Tuesdays after the freeze.", store="global")
    vault.memory.remember("deploy rule", "Deploy on Wednesdays.", store="global", overwrite=True)
    vault.memory.remember("cache choice", "Redis for sessions, memcached never.", store="global")
    vault.memory.forget_entry("cache choice", store="global")
    listed = vault.list(40)
    vault.graph.relate(f"#{listed[0].docid}", f"#{listed[1].docid}", "causal", 0.8)
    vault.graph.add_fact("catalog", "runs_on", "PostgreSQL")
    vault.graph.add_fact("team", "prefers", object_literal="small pull requests")
    rule = vault.rules.add_rule(
        "prediction", "The user wants tests first", when=["writing code"], store="global"
    )
    vault.rules.signal_rule("prediction", rule.id, "confirm", "asked for tests")
    vault.curation.pin(f"#{listed[2].docid}")
    vault.curation.snooze(f"#{listed[3].docid}", "2099-01-01")
    vault.curation.forget(f"#{listed[4].docid}")
    vault.sessions.log_context_usage(
        "session-1",
        "context-surfacing",
        injected=[(doc.doc_id, 0.7) for doc in vault.search("heron caching", limit=3)],
        estimated_tokens=120,
        query_text="heron caching?",
    )
    return vault


def _records(path: Path) -> list[str]:
    """The export's lines but the header's time (what two exports of one vault share)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    del header["exported_at"]
    return [json.dumps(header, sort_keys=True), *lines[1:]]


def _top(vault: Vault) -> list[list[str]]:
    return [[result.docid for result in vault.search(query)] for query in QUERIES]


def test_an_import_into_an_empty_vault_reproduces_the_source(
    tmp_path: Path, example_copy: Path
) -> None:
    source = _populated(tmp_path, example_copy)
    exported = source.portable.export_to(tmp_path / "vault.jsonl")
    assert exported.records > 100
    target = Vault.open(tmp_path / "target.sqlite", config_dir=tmp_path / "target-config")
    report = target.portable.import_from(
        tmp_path / "vault.jsonl",
        folders={"demo": example_copy, "generated": tmp_path / "generated"},
    )
    rows = source._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    assert report.records["documents"] == rows > source.status().documents  # forgotten ones too
    assert sorted(report.collections_added) == ["demo", "generated"]
    target.portable.export_to(tmp_path / "again.jsonl")
    # Every row of every table, as stored: ids, docids, hashes, dates, pins, snoozes,
    # forgotten state, entry versions, edges, facts, rules, sessions.
    assert _records(tmp_path / "again.jsonl") == _records(tmp_path / "vault.jsonl")
    assert _top(target) == _top(source)
    assert target.memory.entry_versions("deploy rule", "global")[0].content.startswith(
        "Deploy on Tuesdays"
    )
    assert [c.name for c in target.collections()] == ["demo", "generated"]
    assert target.update().added == 0  # the files are those documents: nothing new


def _documents(path: Path) -> list[str]:
    """The export's document and content records, as written."""
    return [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("type") in ("documents", "content")
    ]


def _moved(source: Vault, target: Vault, tmp_path: Path, name: str, demo: Path) -> Path:
    """``source`` exported, imported into the empty ``target`` (its folders mapped) and
    exported again from there: that second export, once it is checked equal to the first."""
    first = Path(source.portable.export_to(tmp_path / f"{name}-from.jsonl").path)
    target.portable.import_from(first, folders={"demo": demo, "generated": tmp_path / "generated"})
    again = Path(target.portable.export_to(tmp_path / f"{name}-to.jsonl").path)
    assert _documents(again) == _documents(first)  # ids, docids, hashes, bodies, state
    assert _records(again) == _records(first)  # every other row, the header's counts too
    assert _top(target) == _top(source)
    return again


def test_an_export_moves_a_vault_from_sqlite_to_postgresql_and_back(
    tmp_path: Path, example_copy: Path
) -> None:
    source = _populated(tmp_path, example_copy)
    with fresh_schema() as location:
        server = Vault.open(location, config_dir=tmp_path / "server-config")
        moved = _moved(source, server, tmp_path, "sqlite", example_copy)
        header = json.loads(moved.read_text(encoding="utf-8").split("\n", 1)[0])
        assert header["schema"][0] == "m001_core" and header["fts_averages"] is not None
        back = Vault.open(tmp_path / "back.sqlite", config_dir=tmp_path / "back-config")
        _moved(server, back, tmp_path, "postgresql", example_copy)
        server.close()


def test_a_vault_written_on_postgresql_moves_to_sqlite(tmp_path: Path, example_copy: Path) -> None:
    with fresh_schema() as location:
        source = _populated(tmp_path, example_copy, location)
        target = Vault.open(tmp_path / "target.sqlite", config_dir=tmp_path / "target-config")
        _moved(source, target, tmp_path, "postgresql", example_copy)
        assert target.memory.entry_versions("deploy rule", "global")[0].content.startswith(
            "Deploy on Tuesdays"
        )
        source.close()


def test_an_import_then_embed_gives_the_same_vector_results(
    tmp_path: Path, example_copy: Path
) -> None:
    source = Vault.open(tmp_path / "source.sqlite", config_dir=tmp_path / "source-config")
    source.add_collection(example_copy, name="demo")
    source.update()
    source.embed()
    source.portable.export_to(tmp_path / "vault.jsonl")
    target = Vault.open(tmp_path / "target.sqlite", config_dir=tmp_path / "target-config")
    report = target.portable.import_from(tmp_path / "vault.jsonl", embed=True)
    assert report.embed is not None and report.embed["failed_documents"] == 0
    for query in QUERIES[:4]:
        assert [r.docid for r in target.vsearch(query)] == [r.docid for r in source.vsearch(query)]


def test_vectors_carried_in_the_file_need_no_embedding(tmp_path: Path, example_copy: Path) -> None:
    source = Vault.open(tmp_path / "source.sqlite", config_dir=tmp_path / "source-config")
    source.add_collection(example_copy, name="demo")
    source.update()
    source.embed()
    source.portable.export_to(tmp_path / "vault.jsonl", vectors=True)
    target = Vault.open(tmp_path / "target.sqlite", config_dir=tmp_path / "target-config")
    report = target.portable.import_from(tmp_path / "vault.jsonl")
    stored = source._connection.execute("SELECT COUNT(*) FROM content_vectors").fetchone()[0]
    assert report.added["vectors"] == stored > 0
    assert target.embed().fragments == 0  # every document is synced already
    for query in QUERIES[:4]:
        assert [r.docid for r in target.vsearch(query)] == [r.docid for r in source.vsearch(query)]

    lines = (tmp_path / "vault.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if '"type":"vectors"' in line)
    record = json.loads(lines[number])
    record["vector"] = {"$b64": "AAAAAA=="}
    short = [*lines[:number], json.dumps(record) + "\n", *lines[number + 1 :]]
    fresh = Vault.open(tmp_path / "fresh.sqlite", config_dir=tmp_path / "fresh-config")
    _refused(fresh, _rewrite(tmp_path / "vault.jsonl", short), rf"line {number + 1}: a vector that")
    header = json.loads(lines[0])
    header["embedding_space"] = {"identity": "http:other", "dimensions": 256}
    other = [json.dumps(header) + "\n", *lines[1:]]
    # A vault with no vectors yet takes the file's space; one with vectors of another refuses.
    fresh.portable.import_from(_rewrite(tmp_path / "vault.jsonl", other), dry_run=True)
    with pytest.raises(PortableFormatError, match="come from http:other"):
        target.portable.import_from(_rewrite(tmp_path / "vault.jsonl", other), merge=True)


def test_vectors_carried_in_the_file_move_between_engines(
    tmp_path: Path, example_copy: Path
) -> None:
    source = Vault.open(tmp_path / "source.sqlite", config_dir=tmp_path / "source-config")
    source.add_collection(example_copy, name="demo")
    source.update()
    source.embed()
    first = Path(source.portable.export_to(tmp_path / "vault.jsonl", vectors=True).path)
    with fresh_schema() as location:
        server = Vault.open(location, config_dir=tmp_path / "server-config")
        report = server.portable.import_from(first, folders={"demo": example_copy})
        assert report.added["vectors"] == report.records["vectors"] > 0
        assert server.embed().fragments == 0  # every document is synced already
        for query in QUERIES[:4]:
            assert [r.docid for r in server.vsearch(query)] == [
                r.docid for r in source.vsearch(query)
            ]
        again = Path(server.portable.export_to(tmp_path / "again.jsonl", vectors=True).path)
        assert _records(again) == _records(first)  # the vectors too, bit for bit
        server.close()


def test_an_import_into_a_vault_holding_data_is_refused(tmp_path: Path, vault: Vault) -> None:
    source = Vault.open(tmp_path / "source.sqlite", config_dir=tmp_path / "source-config")
    source.memory.remember("one", "the first entry", store="global")
    source.portable.export_to(tmp_path / "vault.jsonl")
    vault.memory.remember("mine", "already here", store="global")
    with pytest.raises(VaultNotEmptyError, match="already holds data"):
        vault.portable.import_from(tmp_path / "vault.jsonl")
    assert [entry.label for entry in vault.memory.entries("global")] == ["mine"]


@pytest.fixture
def exported(tmp_path: Path, example_copy: Path) -> Path:
    source = Vault.open(tmp_path / "source.sqlite", config_dir=tmp_path / "source-config")
    source.add_collection(example_copy, name="demo")
    source.update()
    source.memory.remember("deploy rule", "Deploy on Wednesdays.", store="global")
    return source.portable.export_to(tmp_path / "vault.jsonl").path and tmp_path / "vault.jsonl"


def _refused(vault: Vault, path: Path, message: str) -> None:
    with pytest.raises(PortableFormatError, match=message):
        vault.portable.import_from(path)
    assert vault.status().documents == 0
    assert vault._connection.execute("SELECT COUNT(*) FROM content").fetchone()[0] == 0


def _rewrite(path: Path, lines: list[str]) -> Path:
    edited = path.with_name("edited.jsonl")
    edited.write_text("".join(lines), encoding="utf-8")
    return edited


def test_a_cut_file_names_its_line_and_writes_nothing(exported: Path, vault: Vault) -> None:
    data = exported.read_bytes()
    cut = exported.with_name("cut.jsonl")
    cut.write_bytes(data[: len(data) // 2])
    lines = data[: len(data) // 2].count(b"\n")
    _refused(vault, cut, rf"line {lines + 1}: not valid JSON")
    whole_lines = data.split(b"\n")
    cut.write_bytes(b"\n".join(whole_lines[:-2]) + b"\n")  # every line whole, the end missing
    _refused(vault, cut, rf"line {len(whole_lines) - 1}: the file ends before its end record")


def test_an_edited_file_is_refused(exported: Path, vault: Vault) -> None:
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if '"type":"content"' in line)
    record = json.loads(lines[number])
    record["doc"] += "\nAn added line."
    edited = [*lines[:number], json.dumps(record) + "\n", *lines[number + 1 :]]
    _refused(vault, _rewrite(exported, edited), rf"line {number + 1}: .*does not match its hash")

    dropped = [line for i, line in enumerate(lines) if i != number + 3]  # a body
    _refused(vault, _rewrite(exported, dropped), r"line \d+: documents: FOREIGN KEY")
    dropped = [*lines[:-2], lines[-1]]  # the last row
    _refused(vault, _rewrite(exported, dropped), rf"line {len(lines) - 1}: the end record counts")

    record = json.loads(lines[-2])
    record["extra_column"] = 1
    unknown = [*lines[:-2], json.dumps(record) + "\n", lines[-1]]
    _refused(
        vault, _rewrite(exported, unknown), rf"line {len(lines) - 1}: .*no column 'extra_column'"
    )

    header = json.loads(lines[0])
    header["schema"].append("m999_from_the_future")
    newer = [json.dumps(header) + "\n", *lines[1:]]
    _refused(vault, _rewrite(exported, newer), "line 1: written by a newer memtrove")

    number = next(i for i, line in enumerate(lines) if '"type":"documents"' in line)
    record = json.loads(lines[number])
    record["active"] = "yes"
    typed = [*lines[:number], json.dumps(record) + "\n", *lines[number + 1 :]]
    _refused(vault, _rewrite(exported, typed), rf"line {number + 1}: documents.active holds str")
    deep = [lines[0], "[" * 100_000 + "]" * 100_000 + "\n", *lines[1:]]
    _refused(vault, _rewrite(exported, deep), "line 2: ")

    _refused(vault, _rewrite(exported, ["just text\n"]), "line 1: not valid JSON")
    _refused(vault, _rewrite(exported, ['{"a": 1}\n']), "line 1: not a memtrove export")
    doubled = [*lines[:-1], lines[2], lines[-1]]
    _refused(vault, _rewrite(exported, doubled), rf"line {len(lines)}: ")


@pytest.mark.parametrize(
    "schema",
    [
        ["p001_baseline"],
        ["m001_core", "m002_fragments"],
        ["p001_baseline", "m024_vector_version_random"],
    ],
)
def test_a_header_naming_either_engines_migrations_is_read(
    exported: Path, vault: Vault, schema: list[str]
) -> None:
    """The header names the schema as SQLite's migrations (an older export fewer of them);
    PostgreSQL's baseline stands for m001-m024 on both engines."""
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    assert header["schema"] == list(NAMES)  # the level, as SQLite names it
    header["schema"] = schema
    vault.portable.import_from(_rewrite(exported, [json.dumps(header) + "\n", *lines[1:]]))
    assert vault.status().documents == 31
    again = vault.portable.export_to(exported.with_name("again.jsonl"))
    assert json.loads(Path(again.path).read_text(encoding="utf-8").split("\n", 1)[0])[
        "schema"
    ] == list(NAMES)


def test_the_schema_level_is_engine_neutral() -> None:
    baseline = NAMES[: NAMES.index("m024_vector_version_random") + 1]  # what p001 stands for
    later = NAMES[len(baseline) :]  # written for both engines under the same names
    assert schema_level(["p001_baseline"]) == list(baseline)
    assert schema_level(["p001_baseline", *later]) == list(NAMES)
    assert schema_level(NAMES) == list(NAMES)
    assert "p001_baseline" in known_migrations(baseline)  # a SQLite vault at m024 reads it
    assert "p001_baseline" not in known_migrations(baseline[:-1])
    assert known_migrations(["p001_baseline"]) == {*baseline, "p001_baseline"}


def test_a_dry_run_checks_everything_and_writes_nothing(exported: Path, vault: Vault) -> None:
    report = vault.portable.import_from(exported, dry_run=True)
    assert report.dry_run and report.records["documents"] == 31
    assert vault.status().documents == 0 and vault.collections() == []


def test_secrets_in_an_imported_body_are_redacted(exported: Path, vault: Vault) -> None:
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if '"type":"content"' in line)
    record = json.loads(lines[number])
    record["doc"] += "\nDB_PASSWORD=hunter2-Very-Secret-9f8e7d\n"
    record["hash"] = hashlib.sha256(record["doc"].encode()).hexdigest()
    old = json.loads(lines[number])["hash"]
    edited = [*lines[:number], json.dumps(record) + "\n", *lines[number + 1 :]]
    edited = [line.replace(old, record["hash"]) for line in edited]
    report = vault.portable.import_from(_rewrite(exported, edited))
    assert report.redacted >= 1
    bodies = [str(row[0]) for row in vault._connection.execute("SELECT doc FROM content")]
    assert not any("hunter2" in body for body in bodies)
    assert any("[REDACTED:" in body for body in bodies)
    assert vault.search("hunter2") == []
    for body_hash, body in vault._connection.execute("SELECT hash, doc FROM content"):
        assert hashlib.sha256(str(body).encode()).hexdigest() == body_hash


def test_an_unreadable_file_is_one_error(tmp_path: Path, vault: Vault) -> None:
    with pytest.raises(PortableFormatError, match="cannot read"):
        vault.portable.import_from(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(PortableFormatError, match="line 1: the file is empty"):
        vault.portable.import_from(empty)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage\n")
    with pytest.raises(PortableFormatError, match="line 1: not UTF-8"):
        vault.portable.import_from(binary)
    if hasattr(os, "mkfifo"):  # a FIFO is refused at once, never waited on
        os.mkfifo(tmp_path / "pipe.jsonl")
        with pytest.raises(PortableFormatError, match="not a regular file"):
            vault.portable.import_from(tmp_path / "pipe.jsonl")


def test_a_merge_adds_what_is_new_and_keeps_what_the_vault_holds(
    tmp_path: Path, example_copy: Path, vault: Vault
) -> None:
    source = _populated(tmp_path, example_copy)
    source.portable.export_to(tmp_path / "vault.jsonl")
    target = vault  # on each engine
    target.add_collection(example_copy, name="demo")
    target.update()
    target.memory.remember("own entry", "The target's own memory.", store="global")
    kept = {(d.path, d.doc_id, d.hash) for d in target.documents.export()}
    pinned = source.list(40)[2]

    report = target.portable.import_from(tmp_path / "vault.jsonl", merge=True)
    assert report.added["documents"] == report.records["documents"] - len(kept) + 1
    assert {
        (d.path, d.doc_id, d.hash) for d in target.documents.export() if d.collection == "demo"
    } == {item for item in kept if not item[0].startswith("entries/")}
    entries = {e.label: e.content for e in target.memory.entries("global")}
    assert entries == {  # each entry on its own document (it had another's)
        "own entry": "The target's own memory.",
        "deploy rule": "Deploy on Wednesdays.",
    }
    assert target.memory.entry_versions("deploy rule", "global")[0].content.startswith(
        "Deploy on Tues"
    )
    assert [r.path for r in target.search("heron caching queues", limit=3)] == [
        r.path for r in source.search("heron caching queues", limit=3)
    ]
    assert pinned.collection == "generated" and target.get(f"generated/{pinned.path}").pinned
    assert [f.predicate for f in target.knowledge.kg_query("catalog").facts] == ["runs_on"]
    assert [s.session_id for s in target.sessions.session_log(5)] == ["session-1"]

    target.portable.export_to(tmp_path / "merged.jsonl")
    again = target.portable.import_from(tmp_path / "vault.jsonl", merge=True)
    assert not any(again.added.values()), again.added  # a second merge adds nothing
    target.portable.export_to(tmp_path / "merged-again.jsonl")
    assert _records(tmp_path / "merged-again.jsonl") == _records(tmp_path / "merged.jsonl")


def test_the_folder_the_file_names_is_never_registered(
    exported: Path, vault: Vault, example_copy: Path
) -> None:
    """The export names the very folder its documents came from, and they are all there:
    still only a hint, shown, never read (the user maps it)."""
    report = vault.portable.import_from(exported)
    assert report.collections_added == [] and report.folders == []
    assert report.collections_unregistered == {"demo": str(example_copy.resolve())}
    assert vault.collections() == [] and vault.status().documents == 31  # still searchable
    assert vault.search("refresh token race")
    assert "--map NAME=DIR" in report.text() and str(example_copy.resolve()) in report.text()


def test_a_mapped_folder_is_registered_and_always_redacted(
    exported: Path, vault: Vault, example_copy: Path
) -> None:
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["collections"][0]["redact"] = False
    edited = _rewrite(exported, [json.dumps(header) + "\n", *lines[1:]])
    report = vault.portable.import_from(edited, folders={"demo": example_copy})
    assert report.collections_added == ["demo"] and report.collections_unregistered == {}
    (plan,) = report.folders
    assert (plan["files"], plan["sampled"], plan["matching"]) == (30, 5, 5)
    (collection,) = vault.collections()
    assert collection.path == example_copy.resolve() and collection.redact is True
    assert vault.update().added == 0  # the files are those documents


@pytest.mark.parametrize("kind", ["empty", "fifo", "link", "device"])
def test_an_export_never_replaces_what_is_not_a_regular_file(
    vault: Vault, tmp_path: Path, kind: str
) -> None:
    """The file is renamed into place when complete: `export /dev/null` replaced the device
    with a regular file."""
    target = Path("") if kind == "empty" else tmp_path / kind  # never a device in use
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "link":
        target.symlink_to(tmp_path / "elsewhere.jsonl")
    elif kind == "device":
        try:  # a null device of its own (root only)
            os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("only root makes device nodes")
    message = "name a file to write" if kind == "empty" else "it is not a regular file"
    with pytest.raises(PortableFormatError, match=message):
        vault.portable.export_to(target)
    assert not (tmp_path / "elsewhere.jsonl").exists()
    assert kind == "empty" or not target.is_file()


def test_a_byte_order_mark_an_editor_added_is_read_past(exported: Path, vault: Vault) -> None:
    """It was refused as 'not valid JSON (...; cut short?)'."""
    marked = exported.with_name("marked.jsonl")
    marked.write_bytes(b"\xef\xbb\xbf" + exported.read_bytes())
    vault.portable.import_from(marked)
    assert vault.status().documents == 31


def _first_document_with(exported: Path, column: str, value: object) -> tuple[Path, int]:
    """The export with its first document's ``column`` set to ``value``, and that line's
    number."""
    lines = exported.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines) if json.loads(line).get("type") == "documents")
    record = json.loads(lines[number])
    record[column] = value
    lines[number] = json.dumps(record) + "\n"
    return _rewrite(exported, lines), number + 1


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("collection", "../../x", "'../../x' is not a collection name"),
        ("collection", "", "'' is not a collection name"),
        ("path", "../../etc/passwd", "is not a path inside a collection"),
        ("path", "/etc/passwd", "is not a path inside a collection"),
        ("path", "", "is not a path inside a collection"),
    ],
)
def test_a_document_named_outside_any_collection_is_refused(
    exported: Path, vault: Vault, column: str, value: str, message: str
) -> None:
    edited, number = _first_document_with(exported, column, value)
    _refused(vault, edited, rf"line {number}: documents: .*{message}")


@pytest.mark.parametrize(
    ("column", "value"),
    [("active", 5), ("pinned", -1), ("access_count", -3), ("quality_score", 2.5),
     ("confidence", -0.1)],
)  # fmt: skip
def test_a_document_value_out_of_its_range_is_refused(
    exported: Path, vault: Vault, column: str, value: object
) -> None:
    edited, number = _first_document_with(exported, column, value)
    _refused(vault, edited, rf"line {number}: documents.{column} holds")
