"""``Vault.portable.import_clawmem`` on a vault written by ClawMem 0.28 itself (read in place,
read-only): every document, diary entry and mined conversation arrives with its metadata,
search finds them, and a second run changes nothing.

The counts were read from the source with sqlite3: 38 documents (28 in ``goprop``, 7 mined
conversations in ``chats``, 3 in ``_clawmem``: the profile and two diary entries), 2
``context_usage`` rows of session ``fx1``, 3 ``recall_events``, 3 ``co_activations`` (by
path), 2 ``hook_dedupe`` rows, no relations, entities or vectors.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.errors import CollectionError, PortableFormatError

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"
SOURCE = BENCH / "clawmem-vault"
PROSE = BENCH / "prose" / "go-proposals"

pytestmark = pytest.mark.skipif(
    not (SOURCE / "index.sqlite").is_file(), reason="the ClawMem vault is not here"
)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _source_rows(query: str) -> list[tuple[object, ...]]:
    uri = f"{(SOURCE / 'index.sqlite').resolve().as_uri()}?mode=ro"
    with sqlite3.connect(uri, uri=True) as connection:
        return connection.execute(query).fetchall()


def _export(vault: Vault, path: Path) -> list[str]:
    vault.portable.export_to(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    del header["exported_at"]
    return [json.dumps(header, sort_keys=True), *lines[1:]]


def test_every_document_arrives_with_its_metadata(vault: Vault, tmp_path: Path) -> None:
    before = _digest(SOURCE / "index.sqlite")
    report = vault.portable.import_clawmem(SOURCE)
    assert _digest(SOURCE / "index.sqlite") == before  # read-only: never written
    assert report.documents == {"total": 38, "added": 38, "updated": 0, "unchanged": 0}
    counts = dict(
        vault._connection.execute(
            "SELECT collection, COUNT(*) FROM documents WHERE active = 1 GROUP BY collection"
        ).fetchall()
    )
    assert counts == {"goprop": 28, "chats": 7, "_memtrove": 3}
    # No secrets in these bodies: every content hash is ClawMem's own.
    hashes = {str(row[0]) for row in vault._connection.execute("SELECT hash FROM documents")}
    assert hashes == {str(row[0]) for row in _source_rows("SELECT hash FROM documents")}

    chat = vault.get("chats/aucontraire-echomine__golden_master-002_with_images-raw_0001.md")
    assert chat.content_type == "conversation"
    assert chat.authored_at == "2025-06-12T00:24:58Z"
    assert chat.created_at == "2026-12-01T19:00:51Z"
    assert chat.confidence == pytest.approx(0.549999999411681)
    assert chat.title == "Could there also be erotic connotations?"
    diary = vault.get("_memtrove/diary/2026-12-01-190051988-release.md")
    assert diary.confidence == pytest.approx(0.7) and diary.docid == diary.hash[:6]
    profile = vault.get("_memtrove/profile.md")
    assert profile.content_type == "hub"
    proposal = vault.get("goprop/19308-number-literals.md")
    assert proposal.quality_score == pytest.approx(0.85)
    assert proposal.modified_at == "2026-12-01T19:00:43Z"

    assert report.records["context_usage"] == 2 and report.records["recall_events"] == 3
    assert report.records["co_activations"] == 3 and report.records["hook_dedupe"] == 2
    sessions = vault.sessions.session_log(5)
    assert [s.session_id for s in sessions] == ["fx1"]
    injected = vault._connection.execute(
        "SELECT injected_paths FROM context_usage ORDER BY id"
    ).fetchone()[0]
    assert json.loads(injected)[0] == "goprop/17280-profile-labels.md"
    gc = vault.get("goprop/11970-decentralized-gc.md")
    assert vault.sessions.co_activation_count(gc.doc_id) == 2
    assert sorted(report.collections_unregistered) == ["chats", "goprop"]  # none mapped
    assert report.not_mapped["content_vectors"]["rows"] == 0
    assert report.not_mapped["consolidated_observations"]["rows"] == 0
    assert report.not_mapped["documents.normalized_hash"]["rows"] == 2


def test_search_finds_documents_diary_entries_and_conversations(vault: Vault) -> None:
    vault.portable.import_clawmem(SOURCE)
    found = {
        query: f"{hit.collection}/{hit.path}"
        for query in (
            "release branch frozen GC regression",
            "Spring Initializr dependencies",
            "binary integer literals",
            "review proposals Thursday meeting",
        )
        for hit in vault.search(query, limit=1)
    }
    assert found == {
        "release branch frozen GC regression": "_memtrove/diary/2026-12-01-190051988-release.md",
        "Spring Initializr dependencies": (
            "chats/aucontraire-echomine__golden_master-003_with_code-raw_0002.md"
        ),
        "binary integer literals": "goprop/19308-number-literals.md",
        "review proposals Thursday meeting": "_memtrove/diary/2026-12-01-190052184-process.md",
    }


def test_a_second_run_changes_nothing(vault: Vault, tmp_path: Path) -> None:
    vault.portable.import_clawmem(SOURCE)
    first = _export(vault, tmp_path / "first.jsonl")
    again = vault.portable.import_clawmem(SOURCE)
    assert again.documents == {"total": 38, "added": 0, "updated": 0, "unchanged": 38}
    assert not any(again.records.values())
    assert _export(vault, tmp_path / "second.jsonl") == first


def test_a_dry_run_writes_nothing(vault: Vault) -> None:
    report = vault.portable.import_clawmem(SOURCE, dry_run=True)
    assert report.dry_run and report.documents["added"] == 38
    assert vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0


@pytest.mark.skipif(not PROSE.is_dir(), reason="the Go design documents are not here")
def test_a_mapped_collection_is_registered_and_kept_current(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "go-proposals"
    folder.mkdir()
    for file in PROSE.glob("1*.md"):
        shutil.copy(file, folder / file.name)
    config = tmp_path / "index.yml"
    config.write_text(f'collections:\n  goprop:\n    path: {folder}\n    pattern: "**/*.md"\n')
    unmapped = vault.portable.import_clawmem(SOURCE / "index.sqlite", config=config, dry_run=True)
    assert unmapped.collections_added == []  # the config's folder is only a hint
    assert unmapped.collections_unregistered["goprop"] == str(folder)
    report = vault.portable.import_clawmem(
        SOURCE / "index.sqlite", config=config, folders={"goprop": folder}
    )
    assert report.collections_added == ["goprop"]
    assert list(report.collections_unregistered) == ["chats"]
    update = vault.update()
    assert (update.added, update.updated, update.removed) == (0, 0, 0)
    assert update.unchanged == 28


def test_what_is_not_a_clawmem_vault_is_one_error(vault: Vault, tmp_path: Path) -> None:
    with pytest.raises(PortableFormatError, match="no ClawMem vault"):
        vault.portable.import_clawmem(tmp_path)
    (tmp_path / "index.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(PortableFormatError, match="not a SQLite database"):
        vault.portable.import_clawmem(tmp_path)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(PortableFormatError, match="not a ClawMem vault"):
        vault.portable.import_clawmem(other)
    with pytest.raises(PortableFormatError, match="no ClawMem config"):
        vault.portable.import_clawmem(SOURCE, config=tmp_path / "missing.yml")


def test_a_damaged_row_is_one_error_and_nothing_is_written(vault: Vault, tmp_path: Path) -> None:
    copy = tmp_path / "index.sqlite"
    shutil.copy(SOURCE / "index.sqlite", copy)
    with sqlite3.connect(copy) as connection:
        connection.execute("UPDATE recall_events SET turn_index = 'third' WHERE id = 2")
    with pytest.raises(PortableFormatError, match="a row that cannot be read"):
        vault.portable.import_clawmem(copy)
    assert vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0


def test_graph_rows_arrive_mapped_and_dangling_ones_are_counted(
    vault: Vault, tmp_path: Path
) -> None:
    """The real vault has no edges or entities (no models ran): a copy gets a few, written
    with ClawMem's own columns, plus a relation to a document it does not have."""
    copy = tmp_path / "index.sqlite"
    shutil.copy(SOURCE / "index.sqlite", copy)
    with sqlite3.connect(copy) as connection:
        connection.executescript(
            """
            INSERT INTO memory_relations (source_id, target_id, relation_type, weight, created_at)
                VALUES (10, 11, 'causal', 0.9, '2026-12-01T19:01:00.000Z'),
                       (10, 999, 'semantic', 0.8, '2026-12-01T19:01:00.000Z');
            INSERT INTO entity_nodes (entity_id, entity_type, name, mention_count)
                VALUES ('default:concept:garbage-collector', 'concept', 'garbage collector', 2),
                       ('default:tool:pprof', 'tool', 'pprof', 1);
            INSERT INTO entity_mentions (entity_id, doc_id, mention_text)
                VALUES ('default:concept:garbage-collector', 13, 'GC'),
                       ('default:tool:pprof', 14, 'pprof');
            INSERT INTO entity_cooccurrences (entity_a, entity_b, count)
                VALUES ('default:tool:pprof', 'default:concept:garbage-collector', 1);
            INSERT INTO entity_triples (subject_entity_id, predicate, object_literal,
                valid_from, source_doc_id)
                VALUES ('default:tool:pprof', 'uses', 'profiler labels', '2016-09-01', 14);
            INSERT INTO documents (collection, path, title, hash, created_at, modified_at)
                VALUES ('goprop', 'lost.md', 'Lost', 'no-such-body', '2026-12-01', '2026-12-01');
            INSERT INTO memory_evolution (memory_id, triggered_by, version, new_context,
                reasoning, created_at)
                VALUES (10, 11, 1, 'stack re-scanning', 'a newer proposal', '2026-12-01 19:02:00');
            """
        )
    first = vault.portable.import_clawmem(copy)
    assert first.records["memory_relations"] == 1 and first.records["entity_triples"] == 1
    assert first.records["entity_mentions"] == 2 and first.records["memory_evolution"] == 1
    assert first.records["entity_cooccurrences"] == 1 and first.records["entity_nodes"] == 2
    assert first.not_mapped["memory_relations (rows pointing at what did not arrive)"]["rows"] == 1
    assert first.not_mapped["documents (without their content)"]["rows"] == 1
    edges = vault.graph.relations_of("goprop/17503-eliminate-rescan.md")
    assert [(e.relation_type, e.weight) for e in edges] == [("causal", pytest.approx(0.9))]
    facts = vault.knowledge.kg_query("pprof").facts
    assert [(f.predicate, f.object, f.valid_from) for f in facts] == [
        ("uses", "profiler labels", "2016-09-01T00:00:00Z")
    ]
    again = vault.portable.import_clawmem(copy)
    assert not any(again.records.values())


def test_a_collection_named_like_another_folders_collection_is_refused(
    vault: Vault, tmp_path: Path
) -> None:
    """ClawMem's ``goprop`` would land in this vault's ``goprop``, a folder elsewhere: the
    next ``update`` there would take every imported document out of search."""
    mine = tmp_path / "my-notes"
    mine.mkdir()
    (mine / "plan.md").write_text("# Plan\n\nThe release plan for the spring.\n")
    vault.add_collection(mine, name="goprop")
    before = vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    with pytest.raises(CollectionError, match=r"'goprop'.*--rename goprop=goprop-clawmem"):
        vault.portable.import_clawmem(SOURCE)
    with pytest.raises(CollectionError, match="--rename goprop=goprop-clawmem"):
        vault.portable.import_clawmem(SOURCE, dry_run=True)
    assert vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == before


def test_rename_brings_a_collection_in_under_a_free_name(vault: Vault, tmp_path: Path) -> None:
    mine = tmp_path / "my-notes"
    mine.mkdir()
    (mine / "plan.md").write_text("# Plan\n\nThe release plan for the spring.\n")
    vault.add_collection(mine, name="goprop")
    vault.update()
    report = vault.portable.import_clawmem(SOURCE, renames={"goprop": "goprop-clawmem"})
    assert report.documents["added"] == 38
    counts = dict(
        vault._connection.execute(
            "SELECT collection, COUNT(*) FROM documents WHERE active = 1 GROUP BY collection"
        ).fetchall()
    )
    assert counts == {"goprop": 1, "goprop-clawmem": 28, "chats": 7, "_memtrove": 3}
    update = vault.update()
    assert update.removed == 0
    active = vault._connection.execute(
        "SELECT COUNT(*) FROM documents WHERE collection = 'goprop-clawmem' AND active = 1"
    ).fetchone()[0]
    assert active == 28
    # the co-activations ClawMem recorded by path still find their documents
    pairs = _source_rows("SELECT COUNT(*) FROM co_activations")[0][0]
    assert vault._connection.execute("SELECT COUNT(*) FROM co_activations").fetchone()[0] == pairs
    again = vault.portable.import_clawmem(SOURCE, renames={"goprop": "goprop-clawmem"})
    assert again.documents["unchanged"] == 38


def test_the_same_folder_under_the_same_name_is_no_conflict(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "go-proposals"
    folder.mkdir()
    vault.add_collection(folder, name="goprop")
    config = tmp_path / "index.yml"
    config.write_text(f"collections:\n  goprop:\n    path: {folder}\n")
    report = vault.portable.import_clawmem(SOURCE, config=config, dry_run=True)
    assert report.documents["added"] == 38


@pytest.mark.parametrize(
    ("renames", "message"),
    [
        ({"notes": "x"}, "has no collection 'notes'"),
        ({"_clawmem": "mine"}, "internal collections keep their name"),
        ({"goprop": "_mine"}, "invalid collection name"),
        ({"goprop": "chats"}, "'chats' is taken"),
        ({"goprop": "a b/c"}, "invalid collection name"),
    ],
)
def test_a_bad_rename_is_one_error(vault: Vault, renames: dict[str, str], message: str) -> None:
    with pytest.raises(CollectionError, match=message):
        vault.portable.import_clawmem(SOURCE, renames=renames)
    assert vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0


@pytest.mark.parametrize("named", ["a\x00b", "~no-such-user-here/notes", "loop"])
def test_a_config_folder_that_cannot_be_one_is_refused_in_one_line(
    vault: Vault, tmp_path: Path, example_copy: Path, named: str
) -> None:
    """A ClawMem config naming, for a collection this vault has, a folder that cannot be one
    here (a NUL, an unknown user's home, a loop of links) is another folder: refused."""
    from memtrove.mine.clawmem_import import check_collections

    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    folder = str(tmp_path / "loop") if named == "loop" else named
    with pytest.raises(CollectionError, match="has the name of this vault's collection"):
        check_collections(["goprop"], {}, {"goprop": folder}, {"goprop": example_copy})
