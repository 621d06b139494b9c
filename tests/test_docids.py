"""Unique docids, references to them, the migration that made them unique, and identical
documents collapsed in result lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlean
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from memtrove import AmbiguousReferenceError, DocumentNotFoundError, Vault
from memtrove.api import create_app
from memtrove.cli import app
from memtrove.db.connection import open_connection, write_transaction
from memtrove.db.migrations import applied_migrations, migrate
from memtrove.db.schema import MIGRATIONS
from memtrove.index.indexer import update_collections
from memtrove.results import Collection, SearchResult
from memtrove.vault.retrieval import COLLAPSE_MARGIN
from tests.conftest import RESULT_FIELDS, where, write

ADR = "# ADR 7: event bus\n\nWe publish domain events on Kafka; consumers are idempotent.\n"
OTHER = "# ADR 8: storage\n\nPostgreSQL keeps metadata; Kafka is not a database.\n"


@pytest.fixture
def copies(vault: Vault, notes: Path) -> Vault:
    """``en/adr7.md`` and its untranslated copy ``fr/adr7.md``, plus a different ADR."""
    write(notes, "en/adr7.md", ADR)
    write(notes, "fr/adr7.md", ADR)
    write(notes, "en/adr8.md", OTHER)
    vault.add_collection(notes, name="adr")
    vault.update()
    return vault


def docids(vault: Vault) -> dict[str, str]:
    rows = vault._connection.execute("SELECT path, docid FROM documents").fetchall()
    return {str(path): str(docid) for path, docid in rows}


# -- unique docids ------------------------------------------------------------------------------


def test_identical_files_get_distinct_docids(copies: Vault) -> None:
    en, fr = copies.get("adr/en/adr7.md"), copies.get("adr/fr/adr7.md")
    assert en.hash == fr.hash
    assert en.docid == en.hash[:6]  # the first keeps the familiar short id
    assert fr.docid == en.hash[:6] + "01"
    assert len(set(docids(copies).values())) == 3
    assert copies.get("#" + en.docid).path == "en/adr7.md"
    assert copies.get(fr.docid).path == "fr/adr7.md"
    assert copies.get("memtrove://adr/fr/adr7.md") == fr


def test_curation_acts_on_the_named_copy(copies: Vault) -> None:
    en, fr = copies.get("adr/en/adr7.md"), copies.get("adr/fr/adr7.md")
    assert copies.curation.pin("#" + fr.docid).doc_id == fr.doc_id
    assert copies.get("adr/fr/adr7.md").pinned and not copies.get("adr/en/adr7.md").pinned
    copies.curation.snooze("#" + en.docid, "2999-01-01")
    assert copies.get("adr/en/adr7.md").snoozed_until is not None
    assert copies.get("adr/fr/adr7.md").snoozed_until is None
    assert copies.curation.forget("#" + fr.docid).doc_id == fr.doc_id
    assert copies.get("#" + en.docid).active
    with pytest.raises(DocumentNotFoundError):
        copies.get("adr/fr/adr7.md")
    assert (
        copies.curation.forget("#" + fr.docid).doc_id == fr.doc_id
    )  # forgetting twice is harmless
    assert copies.update().added == 0  # the forgotten copy stays forgotten


def test_a_docid_survives_edits_and_renames(copies: Vault, notes: Path) -> None:
    before = copies.get("adr/en/adr8.md").docid
    write(notes, "en/adr8.md", OTHER + "\nAmended: retention is 7 days.\n")
    assert copies.update().updated == 1
    edited = copies.get("#" + before)
    assert edited.path == "en/adr8.md" and "retention" in edited.body
    assert not edited.hash.startswith(before)  # the docid no longer follows the hash
    (notes / "en/adr8.md").rename(notes / "en/adr8-storage.md")
    assert copies.update().renamed == 1
    assert copies.get("#" + before).path == "en/adr8-storage.md"


def test_a_new_copy_never_takes_a_held_docid(copies: Vault, notes: Path) -> None:
    write(notes, "de/adr7.md", ADR)
    copies.update()
    held = docids(copies)
    assert held["de/adr7.md"] == held["en/adr7.md"] + "02"
    # SQLite: "UNIQUE constraint failed"; PostgreSQL: "violates unique constraint"
    duplicate = pytest.raises(sqlean.IntegrityError, match=r"(?i)unique constraint")
    with duplicate, write_transaction(copies._connection):
        copies._connection.execute(
            "UPDATE documents SET docid = ? WHERE path = 'en/adr8.md'", (held["en/adr7.md"],)
        )


# -- ambiguous references -----------------------------------------------------------------------


def test_an_ambiguous_prefix_is_refused_naming_the_candidates(copies: Vault) -> None:
    en, fr = copies.get("adr/en/adr7.md"), copies.get("adr/fr/adr7.md")
    prefix = "#" + en.hash[:12]  # a prefix of both copies' content hash
    with pytest.raises(AmbiguousReferenceError) as caught:
        copies.get(prefix)
    message = str(caught.value)
    assert "\n" not in message and "2 documents" in message
    assert f"#{en.docid} adr/en/adr7.md" in message and f"#{fr.docid} adr/fr/adr7.md" in message
    assert "collection/path" in message
    assert caught.value.status == 409
    for operation in (
        copies.curation.pin,
        copies.curation.forget,
        lambda ref: copies.curation.snooze(ref, "2999-01-01"),
        copies.documents.timeline,
        copies.retrieval.find_similar,
    ):
        with pytest.raises(AmbiguousReferenceError):
            operation(prefix)
    assert not copies.get("adr/en/adr7.md").pinned  # nothing was touched
    found = copies.multi_get(f"{prefix},adr/en/adr8.md")
    assert [d.path for d in found.documents] == ["en/adr8.md"]
    assert len(found.errors) == 1 and "2 documents" in found.errors[0]


def test_a_unique_prefix_of_a_docid_or_hash_resolves(copies: Vault) -> None:
    other = copies.get("adr/en/adr8.md")
    assert copies.get("#" + other.hash[:10]) == other
    fr = copies.get("adr/fr/adr7.md")
    assert copies.get("#" + fr.docid.upper()) == fr
    with pytest.raises(DocumentNotFoundError):
        copies.get("#" + other.hash[:6] + "ff00")


def test_the_message_lists_at_most_five_candidates(vault: Vault, notes: Path) -> None:
    for number in range(7):
        write(notes, f"copy{number}.md", ADR)
    vault.add_collection(notes, name="many")
    vault.update()
    body_hash = vault.get("many/copy0.md").hash
    with pytest.raises(AmbiguousReferenceError, match="7 documents") as caught:
        vault.get(body_hash[:7])  # a prefix of six docids (…01 to …06) and of all seven hashes
    message = str(caught.value)
    assert message.count(" many/copy") == 5 and "and 2 more" in message


def test_find_target_offers_every_copy(copies: Vault) -> None:
    en = copies.get("adr/en/adr7.md")
    match = copies.curation.find_target("#" + en.hash[:12])
    assert not match.confident and match.method == "exact"
    assert sorted(c.path for c in match.candidates) == ["en/adr7.md", "fr/adr7.md"]
    exact = copies.curation.find_target("#" + en.docid)
    assert exact.confident and exact.target is not None and exact.target.path == "en/adr7.md"


def test_rest_routes_take_longer_docids_and_refuse_ambiguity(copies: Vault) -> None:
    fr = copies.get("adr/fr/adr7.md")
    app = create_app(copies)
    with TestClient(app, base_url="http://127.0.0.1:7438", raise_server_exceptions=False) as client:
        found = client.get(f"/documents/{fr.docid}")
        assert found.status_code == 200 and found.json()["path"] == "fr/adr7.md"
        json = {"Content-Type": "application/json"}  # what every POST sends
        pinned = client.post(f"/documents/{fr.docid}/pin", headers=json)
        assert pinned.status_code == 200 and pinned.json()["docid"] == fr.docid
        refused = client.get(f"/documents/{fr.hash[:12]}")
        assert refused.status_code == 409
        assert "adr/en/adr7.md" in refused.json()["error"]
        assert client.post(f"/documents/{fr.hash[:12]}/forget", headers=json).status_code == 409
    assert copies.get("adr/en/adr7.md").active and copies.get("adr/fr/adr7.md").pinned


# -- the migration ------------------------------------------------------------------------------


def test_m010_gives_colliding_docids_their_own(tmp_path: Path, notes: Path) -> None:
    """A vault indexed before m010 (docid = 6 hex of the hash) is renumbered on open."""
    for name in ("a.md", "b.md", "c.md"):
        write(notes, f"en/{name}", ADR)
    write(notes, "en/other.md", OTHER)
    write(notes, "gone.md", ADR)
    path = tmp_path / "old.sqlite"
    connection = open_connection(path)
    migrate(connection, MIGRATIONS)  # today's indexer writes today's columns
    update_collections(connection, [Collection("adr", notes)])
    with write_transaction(connection):  # the vault as it was before m010: the old scheme
        connection.execute("DROP INDEX documents_docid_unique")
        connection.execute("CREATE INDEX documents_docid ON documents (docid)")
        connection.execute("UPDATE documents SET docid = substr(hash, 1, 6)")
        connection.execute("UPDATE documents SET active = 0 WHERE path = 'gone.md'")
        connection.execute("DELETE FROM schema_migrations WHERE name = 'm010_unique_docids'")
    (notes / "gone.md").unlink()
    old = dict(connection.execute("SELECT path, docid FROM documents").fetchall())
    ids = dict(connection.execute("SELECT path, id FROM documents").fetchall())
    assert len(set(old.values())) == 2
    connection.close()

    with Vault.open(path, config_dir=tmp_path / "config") as vault:
        assert "m010_unique_docids" in applied_migrations(vault._connection)
        new = docids(vault)
        assert len(set(new.values())) == len(new) == 5
        assert new["en/other.md"] == old["en/other.md"]
        first = min(("en/a.md", "en/b.md", "en/c.md"), key=ids.__getitem__)
        assert new[first] == old[first]  # the oldest active copy keeps the old docid
        base = old[first]
        assert sorted(new[p] for p in ("en/a.md", "en/b.md", "en/c.md", "gone.md")) == [
            base,
            base + "01",
            base + "02",
            base + "03",
        ]
        assert new["gone.md"] == base + "03"  # inactive rows come after active ones
        assert vault.get("#" + base).path == first  # the reference held from before
        indexes = vault._connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents'"
        ).fetchall()
        assert ("documents_docid_unique",) in indexes and ("documents_docid",) not in indexes
        vault.add_collection(notes, name="adr")
        write(notes, "en/d.md", ADR)
        assert vault.update().added == 1
        assert vault.get("adr/en/d.md").docid == base + "04"


# -- collapsing identical documents -------------------------------------------------------------


def test_search_shows_identical_copies_once(copies: Vault) -> None:
    results = copies.search("kafka events", limit=10)
    (shown,) = [r for r in results if r.path.endswith("adr7.md")]
    other = "adr/fr/adr7.md" if shown.path == "en/adr7.md" else "adr/en/adr7.md"
    assert shown.also_at == (other,)
    assert shown.to_dict()["also_at"] == [other]
    assert set(shown.to_dict()) == RESULT_FIELDS | {"also_at"}
    (single,) = [r for r in results if r.path == "en/adr8.md"]
    assert single.also_at == () and set(single.to_dict()) == RESULT_FIELDS
    assert SearchResult.from_dict(shown.to_dict()).also_at == (other,)


def test_every_result_list_collapses_copies(copies: Vault) -> None:
    copies.embed()
    methods = {
        "search": copies.search,
        "vsearch": copies.vsearch,
        "hybrid": copies.hybrid,
        "query": copies.query,
        "recent search": lambda q, **kw: copies.search("latest " + q, **kw),
    }
    for name, method in methods.items():
        results = method("kafka domain events", limit=10)
        paths = [f"{r.collection}/{r.path}" for r in results]
        twins = [p for p in paths if p.endswith("adr7.md")]
        assert len(twins) == 1, name
        assert len(paths) == len(set(paths)) == 2, name
    similar = copies.retrieval.find_similar("adr/en/adr8.md", limit=5)
    assert len(similar) == 1 and len(similar[0].also_at) == 1


def test_collapsing_still_fills_the_limit(vault: Vault, notes: Path) -> None:
    """More copies of the best note than the margin: the search asks again, deeper."""
    for number in range(COLLAPSE_MARGIN + 10):
        write(notes, f"copies/c{number:02}.md", "# Zebra\n\nzebra zebra zebra zebra stripes\n")
    for number in range(8):
        write(notes, f"n{number}.md", f"# Note {number}\n\nzebra stripes, item {number}\n")
    vault.add_collection(notes, name="z")
    vault.update()
    results = vault.search("zebra stripes", limit=5)
    assert len(results) == 5 and len({r.doc_id for r in results}) == 5
    assert results[0].path.startswith("copies/")
    assert len(results[0].also_at) == COLLAPSE_MARGIN + 9
    assert sum(r.path.startswith("copies/") for r in results) == 1
    assert len(vault.search("zebra stripes", limit=50)) == 9  # 1 body of copies + 8 notes


def test_search_json_carries_also_at(copies: Vault) -> None:
    copies.close()
    answer = CliRunner().invoke(
        app, ["--vault", str(where(copies)), "search", "kafka events", "--json"]
    )
    assert answer.exit_code == 0, answer.output
    results = json.loads(answer.stdout)["results"]
    twins = [r for r in results if r["path"].endswith("adr7.md")]
    assert len(twins) == 1 and len(twins[0]["also_at"]) == 1
