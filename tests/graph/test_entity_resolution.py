"""Canonical entity resolution on real variants, mentions, co-occurrences and the
IDF-weighted entity edges."""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove.db.connection import Connection, write_transaction
from memtrove.graph.entities import ExtractedEntity
from memtrove.graph.entity_resolution import (
    ENTITY_EDGE_THRESHOLD,
    Entity,
    LinkCache,
    Resolver,
    active_documents,
    bucket_of,
    ensure_entity,
    find_entity,
    link_shared_entities,
    record_mentions,
    specificity,
)
from memtrove.vault import Vault
from tests.conftest import write


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    yield opened
    opened.close()


def ensure(vault: Vault, name: str, kind: str) -> Entity:
    with write_transaction(vault._connection):
        return ensure_entity(vault._connection, name, kind)


def test_buckets() -> None:
    assert bucket_of("tool") == bucket_of("concept") == bucket_of("project") == "tech"
    assert bucket_of("person") == "person" and bucket_of("org") == "org"
    assert bucket_of("statute") == "type:statute"  # an unknown type is its own bucket


@pytest.mark.parametrize(
    "variants",
    [
        [("PostgreSQL", "tool"), ("Postgres", "service"), ("postgres", "concept")],
        [("Redis cluster", "tool"), ("Redis clusters", "tool"), ("redis Cluster", "project")],
        [("Kubernetes", "tool"), ("KUBERNETES", "service"), ("kubernetes", "tool")],
        [("Jane Smith", "person"), ("jane smith", "person"), ("Jane Smyth", "person")],
    ],
)
def test_variants_resolve_to_one_entity(vault: Vault, variants: list[tuple[str, str]]) -> None:
    ids = {ensure(vault, name, kind).entity_id for name, kind in variants}
    assert len(ids) == 1
    assert vault._connection.execute("SELECT COUNT(*) FROM entity_nodes").fetchone()[0] == 1
    assert vault._connection.execute("SELECT mention_count FROM entity_nodes").fetchone()[0] == 3


def test_ids_are_vault_type_slug(vault: Vault) -> None:
    assert ensure(vault, "Billing API", "service").entity_id == "default:service:billing-api"
    assert ensure(vault, "Zürich", "location").entity_id == "default:location:zürich"


def test_first_names_join_the_one_full_name(vault: Vault) -> None:
    full = ensure(vault, "Russ Cox", "person")
    assert ensure(vault, "Russ", "person").entity_id == full.entity_id
    ensure(vault, "Russ Hammond", "person")  # now "Russ" is ambiguous
    assert ensure(vault, "Russ", "person").entity_id == "default:person:russ"


def test_a_first_name_grows_into_the_full_name(vault: Vault) -> None:
    first = ensure(vault, "Andrea", "person")
    grown = ensure(vault, "Andrea Rossi", "person")
    assert grown.entity_id == first.entity_id and grown.name == "Andrea Rossi"
    assert find_entity(vault._connection, "Andrea Rossi") == grown._replace(mention_count=2)


def test_buckets_never_merge(vault: Vault) -> None:
    person = ensure(vault, "Andrea", "person")
    project = ensure(vault, "Andrea", "project")
    org = ensure(vault, "Andrea", "org")
    place = ensure(vault, "Andrea", "location")
    assert len({person.entity_id, project.entity_id, org.entity_id, place.entity_id}) == 4
    assert ensure(vault, "andrea", "tool").entity_id == project.entity_id  # same bucket
    assert ensure(vault, "Andrea", "statute").entity_id == "default:statute:andrea"


def test_near_names_that_differ_stay_apart(vault: Vault) -> None:
    ids = {
        ensure(vault, name, "tool").entity_id
        for name in ("Python 2", "Python 3", "Java", "JavaScript", "Redis", "Reddit", "Go", "Git")
    }
    assert len(ids) == 8


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("ECONNRESET", "ECONNREFUSED"),  # 0.75 alike as strings
        ("upgrade_row", "upgrade_pool"),
        ("web/report/spike.go", "web/report/nonce.go"),
        ("services/notification/outage.py", "services/notification/flag.sh"),
        ("internal/storage/gauge.md", "internal/user/gauge.md"),
        ("config.yaml", "config.yml"),
        ("Ask Sofia", "Ask Kofi"),
        ("swallow_batch", "swallow_batch_dns"),
    ],
)
def test_names_alike_as_strings_but_not_word_by_word_stay_apart(
    vault: Vault, first: str, second: str
) -> None:
    from memtrove.graph.entity_names import similarity

    assert similarity(first, second) >= 0.75 or first == "config.yaml"
    assert ensure(vault, first, "tool").entity_id != ensure(vault, second, "concept").entity_id
    assert ensure(vault, second.lower(), "tool").name == second  # each still gathers its own


@pytest.mark.parametrize(
    "variants",
    [
        ["GitHub Actions", "Github action", "github actions"],
        ["Kubernetes", "Kubernets"],
        ["upgrade_row", "upgrade_rows"],
        ["services/notification/outage.py", "services/notifications/outage.py"],
        ["Pipelined runners", "Pipelines runner"],
    ],
)
def test_spacing_plurals_longer_forms_and_typos_still_merge(
    vault: Vault, variants: list[str]
) -> None:
    assert len({ensure(vault, name, "tool").entity_id for name in variants}) == 1


def test_words_differ_word_by_word() -> None:
    from memtrove.graph.entity_names import words_differ

    assert not words_differ("PostgreSQL", "postgres")
    assert not words_differ("GitHub Actions", "Github action")
    assert not words_differ("e-mail", "email")
    assert not words_differ("Redis cluster", "Redisclusters")
    assert words_differ("ECONNRESET", "ECONNREFUSED")
    assert words_differ("Redis cluster", "Redis client")
    assert words_differ("gauge.md", "gauge.go")
    assert not words_differ("Zürich", "Zurich")  # one letter in a word of six


@pytest.mark.parametrize("matching", [12, 70])
def test_candidates_for_resolution_are_the_ranked_ones(vault: Vault, matching: int) -> None:
    """Resolution takes FTS matches unranked when there are no more than the candidate
    limit (the same set), ranked otherwise; either way what the ranked lookup offers."""
    from memtrove.graph import entity_resolution

    for index in range(matching):
        ensure(vault, f"Pipeline stage{index} runner", "tool")
    ensure(vault, "Pipeline", "person")  # another bucket: never offered
    ensure(vault, "Pipelines runner", "tool")
    connection = vault._connection
    name = "Pipelined runners"
    ranked = entity_resolution._candidates(connection, name, "default")
    tech = entity_resolution._candidates(connection, name, "default", "tech")
    assert {entity.entity_id for entity in tech} == {entity.entity_id for entity in ranked}
    assert len(ranked) == min(matching + 2, entity_resolution.MAX_CANDIDATES)
    assert entity_resolution.resolve_entity(connection, name, "tool") == next(
        entity for entity in ranked if entity.name == "Pipelines runner"
    )


def test_counts_not_yet_written_break_ties(vault: Vault) -> None:
    from memtrove.graph import entity_resolution

    first, second = (
        ensure(vault, "Kafka Cluster A", "tool"),
        ensure(vault, "Kafka Cluster B", "tool"),
    )
    connection = vault._connection
    stored = entity_resolution.resolve_entity(connection, "Kafka Cluster", "tool")
    assert stored is not None and stored.entity_id == first.entity_id  # equal counts: by id
    pending = {second.entity_id: 3}
    chosen = entity_resolution.resolve_entity(connection, "Kafka Cluster", "tool", pending=pending)
    assert chosen is not None and chosen.entity_id == second.entity_id


@pytest.mark.parametrize(
    "name",
    [
        "Ünïcödé Ŝervice",
        "名前 サービス",
        "Robert'); DROP TABLE entity_nodes;--",
        'x" OR 1=1 --',
        "NEAR(a b) OR c*",
        "a" * 60,
        "-",
    ],
)
def test_hostile_names_are_stored_and_found_verbatim(vault: Vault, name: str) -> None:
    stored = ensure(vault, name, "concept")
    assert stored.name == name
    assert find_entity(vault._connection, name) is not None
    assert vault._connection.execute("SELECT COUNT(*) FROM entity_nodes").fetchone()[0] == 1


def test_find_entity_by_id_name_fuzzy_and_slug(vault: Vault) -> None:
    postgres = ensure(vault, "PostgreSQL", "tool")
    connection = vault._connection
    assert find_entity(connection, "default:tool:postgresql") == postgres
    assert find_entity(connection, "postgresql") == postgres
    assert find_entity(connection, "Postgres") == postgres
    assert find_entity(connection, "nothing like it") is None
    assert find_entity(connection, "   ") is None


def write_notes(folder: Path, count: int, common: str, rare: str) -> None:
    for index in range(count):
        extra = f" and {rare}" if index < 2 else ""
        write(folder, f"n{index}.md", f"# Note {index}\n\nWe use {common}{extra} here.\n")


def test_entity_edges_link_rare_entities_not_ubiquitous_ones(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write_notes(folder, 12, "Kubernetes", "Cassandra")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(folder, name="notes")
        vault.update()
        vault.knowledge.enrich_entities()
        rows = vault._connection.execute(
            "SELECT source_id, target_id, weight, metadata FROM memory_relations"
            " WHERE relation_type = 'entity'"
        ).fetchall()
        first, second = vault.get("notes/n0.md").doc_id, vault.get("notes/n1.md").doc_id
    assert sorted((a, b) for a, b, _, _ in rows) == [(first, second), (second, first)]
    assert rows[0][2] == pytest.approx(specificity(12, 2), abs=1e-4)
    assert "cassandra" in rows[0][3]
    assert specificity(12, 12) < ENTITY_EDGE_THRESHOLD < specificity(12, 2)


def test_cooccurrences_are_counted_once_per_document_and_replaced(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    write(folder, "a.md", "# A\n\nRedis and Kafka.\n")
    write(folder, "b.md", "# B\n\nRedis and Kafka again.\n")
    vault.add_collection(folder, name="notes")
    vault.update()
    vault.knowledge.enrich_entities()
    pairs = vault._connection.execute(
        "SELECT entity_a, entity_b, count FROM entity_cooccurrences"
    ).fetchall()
    assert pairs == [("default:tool:kafka", "default:tool:redis", 2)]
    doc = vault.get("notes/a.md").doc_id
    record_mentions(vault._connection, doc, [ExtractedEntity("Redis", "tool")])
    assert vault._connection.execute("SELECT count FROM entity_cooccurrences").fetchall() == [(1,)]
    record_mentions(vault._connection, vault.get("notes/b.md").doc_id, [])
    assert vault._connection.execute("SELECT COUNT(*) FROM entity_cooccurrences").fetchone() == (0,)
    assert vault._connection.execute("SELECT entity_id FROM entity_mentions").fetchall() == [
        ("default:tool:redis",)
    ]


def test_an_entity_no_longer_shared_takes_its_edge_with_it(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder, "a.md", "# A\n\nCassandra tuning.\n")
    write(folder, "b.md", "# B\n\nCassandra backups.\n")
    for index in range(4):
        write(folder, f"x{index}.md", f"# X{index}\n\nNothing named here.\n")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(folder, name="notes")
        vault.update()
        vault.knowledge.enrich_entities()

        def edges() -> int:
            row = vault._connection.execute(
                "SELECT COUNT(*) FROM memory_relations WHERE relation_type = 'entity'"
            ).fetchone()
            return int(row[0])

        assert edges() == 2
        write(folder, "b.md", "# B\n\nBackups of something else.\n")
        vault.update()
        vault.knowledge.extract_entities("notes/b.md")
        assert edges() == 0


def test_extraction_joins_a_transaction_the_caller_holds(tmp_path: Path) -> None:
    """Enrichment may record entities in the transaction it writes its own rows in."""
    from memtrove.graph.entities import extract_entities

    folder = tmp_path / "notes"
    write(folder, "a.md", "# A\n\nCassandra tuning.\n")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(folder, name="notes")
        vault.update()
        doc = vault.get("notes/a.md")
        connection = vault._connection
        with pytest.raises(RuntimeError, match="rolled back"), write_transaction(connection):
            extract_entities(connection, doc.doc_id, doc.title, doc.body)
            assert connection.execute("SELECT COUNT(*) FROM entity_mentions").fetchone() == (1,)
            raise RuntimeError("rolled back")
        assert connection.execute("SELECT COUNT(*) FROM entity_mentions").fetchone() == (0,)
        with write_transaction(connection):
            extract_entities(connection, doc.doc_id, doc.title, doc.body)
        assert connection.execute("SELECT COUNT(*) FROM entity_mentions").fetchone() == (1,)


# -- bulk runs: one Resolver and one LinkCache give what one document at a time gives -----------

BULK_NOTES = [
    ("Jane Smith", "person"),
    ("Jane", "person"),
    ("PostgreSQL", "tool"),
    ("Postgres", "service"),
    ("postgres", "concept"),
    ("Redis cluster", "tool"),
    ("Redis clusters", "tool"),
    ("Kafka", "tool"),
    ("Python 3", "tool"),
    ("Python 2", "tool"),
    ("Andrea", "person"),
    ("Andrea Rossi", "person"),
    ("Jane Doe", "person"),  # "Jane" is ambiguous from here on
    ("Andrea", "project"),
    ("C++", "tool"),
    ("C", "tool"),
]


def bulk_documents(tmp_path: Path, vault: Vault, count: int) -> list[int]:
    folder = tmp_path / "notes"
    for index in range(count):
        write(folder, f"n{index}.md", f"# Note {index}\n\nText {index}.\n")
    vault.add_collection(folder, name="notes")
    vault.update()
    return [vault.get(f"notes/n{index}.md").doc_id for index in range(count)]


def mentions_of(index: int) -> list[ExtractedEntity]:
    """Overlapping, repeated and varied names, differing from one document to the next."""
    chosen = [BULK_NOTES[(index * 3 + step) % len(BULK_NOTES)] for step in range(index % 7 + 1)]
    chosen.append(chosen[0])  # the same name twice in one document
    return [ExtractedEntity(name, kind) for name, kind in chosen]


def graph_state(connection: Connection) -> list[list[tuple[object, ...]]]:
    return [
        [tuple(row) for row in connection.execute(query)]
        for query in (
            "SELECT entity_id, entity_type, name, mention_count FROM entity_nodes ORDER BY 1",
            "SELECT entity_id, doc_id, mention_text FROM entity_mentions ORDER BY 1, 2",
            "SELECT entity_a, entity_b, count FROM entity_cooccurrences ORDER BY 1, 2",
            "SELECT source_id, target_id, relation_type, weight, metadata FROM memory_relations"
            " ORDER BY 1, 2, 3",
        )
    ]


def run_bulk(
    connection: Connection,
    doc_ids: list[int],
    rounds: list[dict[int, int]],
    *,
    deferred: bool = False,
    buffered: bool = False,
) -> None:
    """Each round records the given documents (doc -> which mentions) through one
    resolver, two documents per transaction (one of them twice), then links them.
    ``deferred``: co-occurrences counted for the run and written at its end; ``buffered``:
    edges written once at the end of linking."""
    resolver = Resolver(connection, deferred=deferred)
    for chosen in rounds:
        items = list(chosen.items())
        for start in range(0, len(items), 2):
            with write_transaction(connection):
                for doc_id, index in items[start : start + 2]:
                    record_mentions(connection, doc_id, mentions_of(index), resolver=resolver)
                if start == 0:  # the same document again, in the same transaction
                    doc_id, index = items[0]
                    record_mentions(connection, doc_id, mentions_of(index + 1), resolver=resolver)
                resolver.flush()
    with write_transaction(connection):
        resolver.finish()
    assert connection.execute("SELECT COUNT(*) FROM vault_state").fetchone()[0] == 0
    cache = LinkCache(buffered=buffered)
    documents = active_documents(connection)
    with write_transaction(connection):
        for doc_id in doc_ids:
            found = [
                str(row[0])
                for row in connection.execute(
                    "SELECT entity_id FROM entity_mentions WHERE doc_id = ?", (doc_id,)
                )
            ]
            link_shared_entities(connection, doc_id, found, documents=documents, cache=cache)
        cache.flush(connection)


def run_one_by_one(
    connection: Connection, doc_ids: list[int], rounds: list[dict[int, int]]
) -> None:
    for chosen in rounds:
        items = list(chosen.items())
        for start in range(0, len(items), 2):
            for doc_id, index in items[start : start + 2]:
                record_mentions(connection, doc_id, mentions_of(index))
            if start == 0:
                doc_id, index = items[0]
                record_mentions(connection, doc_id, mentions_of(index + 1))
    for doc_id in doc_ids:
        found = [
            str(row[0])
            for row in connection.execute(
                "SELECT entity_id FROM entity_mentions WHERE doc_id = ?", (doc_id,)
            )
        ]
        link_shared_entities(connection, doc_id, found)


def test_a_bulk_run_records_what_one_document_at_a_time_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memtrove.graph.entity_links

    # Two documents per entity: a pair of documents may then share different entities
    # from either side, and so be linked at different weights.
    monkeypatch.setattr(memtrove.graph.entity_links, "MAX_LINKED_DOCUMENTS", 2)
    states = []
    runs = (
        ("bulk", run_bulk),
        ("deferred", functools.partial(run_bulk, deferred=True, buffered=True)),
        ("single", run_one_by_one),
    )
    for name, run in runs:
        with Vault.open(tmp_path / f"{name}.sqlite", config_dir=tmp_path / name) as vault:
            doc_ids = bulk_documents(tmp_path / name, vault, 14)
            first = {doc_id: index for index, doc_id in enumerate(doc_ids)}
            again = {doc_id: index + 2 for index, doc_id in enumerate(doc_ids[::2])}  # re-runs
            run(vault._connection, doc_ids, [first, again])
            states.append(graph_state(vault._connection))
    bulk, deferred, single = states
    nodes, mentions, pairs, edges = bulk
    assert nodes and mentions and pairs and edges  # the run did write each table
    assert bulk == single
    assert deferred == single


def test_an_interrupted_deferred_run_is_recounted_by_the_next(tmp_path: Path, vault: Vault) -> None:
    """A run that stopped after writing mentions but before its co-occurrences leaves its
    pending mark; the next entity pass recounts every co-occurrence from the mentions."""
    from memtrove.graph.entity_resolution import repair_cooccurrences

    connection = vault._connection
    doc_ids = bulk_documents(tmp_path, vault, 6)
    run_bulk(connection, doc_ids, [{doc_id: i for i, doc_id in enumerate(doc_ids)}])
    counted = graph_state(connection)[2]
    assert counted and not repair_cooccurrences(connection)  # nothing to repair
    resolver = Resolver(connection, deferred=True)
    with write_transaction(connection):
        for index, doc_id in enumerate(doc_ids):
            record_mentions(connection, doc_id, mentions_of(index + 3), resolver=resolver)
        resolver.flush()  # the mentions are in; the process dies before finish()
    assert connection.execute("SELECT value FROM vault_state").fetchall() == [("pending",)]
    assert repair_cooccurrences(connection)
    assert connection.execute("SELECT COUNT(*) FROM vault_state").fetchone()[0] == 0
    by_doc: dict[int, list[str]] = {}
    for entity_id, doc_id in connection.execute("SELECT entity_id, doc_id FROM entity_mentions"):
        by_doc.setdefault(int(doc_id), []).append(str(entity_id))
    pairs = Counter(
        pair for ids in by_doc.values() for pair in itertools.combinations(sorted(ids), 2)
    )
    expected = [(a, b, count) for (a, b), count in sorted(pairs.items())]
    assert expected != counted
    assert graph_state(connection)[2] == expected


def test_a_resolver_looks_people_up_each_time(vault: Vault) -> None:
    """A first name resolved to the one full name it fits is not remembered: once another
    person of that first name exists, it is ambiguous, as for ensure_entity."""
    connection = vault._connection
    resolver = Resolver(connection)
    with write_transaction(connection):
        full = resolver.resolve("Russ Cox", "person")
        assert resolver.resolve("Russ", "person").entity_id == full.entity_id
        resolver.resolve("Russ Hammond", "person")
        assert resolver.resolve("Russ", "person").entity_id == "default:person:russ"
        assert resolver.resolve("Kafka", "tool") == resolver.resolve("kafka", "concept")
        resolver.flush()
