"""Entity extraction: the heuristic, the quality filters, and the LLM against the loopback
fake model server (good answers, truncated JSON, markdown fences, garbage, timeouts)."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove.db.connection import Connection
from memtrove.graph.entities import (
    ExtractedEntity,
    extract_entities,
    filter_entities,
    heuristic_entities,
    parse_entity_answer,
)
from memtrove.models.openai_compat import HttpLLM
from memtrove.vault import Vault
from tests.conftest import write
from tests.fakes.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
PROPOSALS = ROOT.parent / "shared" / "bench" / "prose" / "go-proposals"

BODY = """# Cache layer

Author: Jane Smith

We moved the session store from Postgres to Redis on Kubernetes, after @bob measured
`SessionStore.Get` under load. The Platform Team owns it; see GitHub for the code.
Run `go test -race` and read `config.yaml` before deploying.
"""


def names(entities: list[ExtractedEntity]) -> set[str]:
    return {entity.name for entity in entities}


@pytest.fixture
def documents(tmp_path: Path) -> Iterator[Vault]:
    folder = tmp_path / "notes"
    write(folder, "cache.md", BODY)
    write(folder, "other.md", "# Other\n\nRedis again, and Kubernetes.\n")
    opened = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    opened.add_collection(folder, name="notes")
    opened.update()
    yield opened
    opened.close()


# When a run saw something is the clock's, not the graph's: a rerun a second later may move
# it, and a digest with it would fail on a busy machine.
CLOCK_COLUMNS = ("last_seen", "last_cooccurred")


def digest(connection: Connection) -> str:
    hasher = hashlib.sha256()
    for table in ("entity_nodes", "entity_mentions", "entity_cooccurrences", "memory_relations"):
        columns = [
            str(row[1])
            for row in connection.execute(f"PRAGMA table_info({table})")
            if row[1] not in CLOCK_COLUMNS
        ]
        listed = ", ".join(columns)
        for row in connection.execute(f"SELECT {listed} FROM {table} ORDER BY 1, 2"):
            hasher.update(repr(tuple(row)).encode())
    return hasher.hexdigest()


# -- the heuristic -------------------------------------------------------------------------------


def test_the_heuristic_finds_people_tools_handles_and_identifiers() -> None:
    found = names(heuristic_entities("Cache layer", BODY))
    assert {"Jane Smith", "PostgreSQL", "Redis", "Kubernetes", "GitHub", "@bob"} <= found
    assert {"SessionStore.Get", "Platform Team", "go test", "config.yaml"} <= found
    assert "Cache layer" not in found  # headings are labels
    kinds = {e.name: e.entity_type for e in heuristic_entities("Cache layer", BODY)}
    assert kinds["Jane Smith"] == "person" and kinds["@bob"] == "person"
    assert kinds["PostgreSQL"] == "tool" and kinds["GitHub"] == "service"


def test_the_heuristic_leaves_verbs_code_and_links_alone() -> None:
    text = (
        "Let's go and make it work. See [the docs](https://github.com/x/Redis-Thing).\n"
        "```\nclass Hidden: pass  # Kubernetes in code\n```\nContact me@example.com.\n"
    )
    found = names(heuristic_entities("Notes", text))
    assert "Go" not in found and "Make" not in found
    assert "Kubernetes" not in found  # only in a code block
    assert "Hidden" in found  # a declared type is a code identifier
    assert not any("example" in name for name in found)


@pytest.mark.parametrize(
    "text",
    ["", "\x00\x01\x02", "é" * 10_000, "`" * 5000, "A " * 20_000, "'; DROP TABLE x; --"],
)
def test_the_heuristic_survives_hostile_text(text: str) -> None:
    kept, _ = filter_entities(heuristic_entities(text[:100], text), text[:100])
    assert all(0 < len(entity.name) <= 60 for entity in kept)


def test_the_heuristic_meets_its_measured_floors_on_labelled_proposals() -> None:
    """Floors a little under the measured figures (bench_entities.py: P .845, R .782)."""
    if not PROPOSALS.is_dir():
        pytest.skip("the go-proposals sample is not on this machine")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_entities
    finally:
        sys.path.pop(0)
    result = bench_entities.measure(PROPOSALS, bench_entities.load_labels())
    assert result["documents"] >= 15
    assert result["precision"] >= 0.80, result["precision"]
    assert result["recall"] >= 0.75, result["recall"]
    # The held-out sample (never tuned on): floors under its measured P .705 / R .544.
    heldout = bench_entities.measure(PROPOSALS, bench_entities.load_labels(bench_entities.HELDOUT))
    assert heldout["documents"] == 10
    assert not set(heldout["per_document"]) & set(result["per_document"])
    assert heldout["precision"] >= 0.65, heldout["precision"]
    assert heldout["recall"] >= 0.50, heldout["recall"]


# -- filters -------------------------------------------------------------------------------------


def test_filters_reject_titles_long_names_placeholders_and_bad_locations() -> None:
    candidates = [
        ExtractedEntity("Adopt PostgreSQL for billing", "concept"),  # the title, nearly
        ExtractedEntity("Adopt PostgreSQL for biling", "concept"),
        ExtractedEntity("x" * 61, "concept"),
        ExtractedEntity("Background", "concept"),
        ExtractedEntity("{{name}}", "person"),
        ExtractedEntity("<your name>", "person"),
        ExtractedEntity("TODO", "project"),
        ExtractedEntity("the place where the servers we rent live", "location"),
        ExtractedEntity("Berlin", "location"),
        ExtractedEntity("10.0.0.12", "location"),
        ExtractedEntity("vm-prod-3", "location"),
        ExtractedEntity("Stripe", "spaceship"),  # not in the vocabulary
        ExtractedEntity("Stripe", "service"),
        ExtractedEntity("   ", "tool"),
        ExtractedEntity("bad\x07name", "tool"),
    ]
    kept, rejected = filter_entities(candidates, "Adopt PostgreSQL for billing")
    assert names(kept) == {"Berlin", "10.0.0.12", "vm-prod-3", "Stripe"}
    assert rejected == len(candidates) - 4
    assert [e.entity_type for e in kept if e.name == "Stripe"] == ["service"]


def test_parse_reads_arrays_fences_and_wrapped_objects() -> None:
    fenced = '```json\n[{"name": "Redis", "type": "Tool"}]\n```'
    assert parse_entity_answer(fenced) == [ExtractedEntity("Redis", "tool")]
    wrapped = 'Sure! {"entities": [{"name": "Ann  Lee", "type": "person"}, 7, {"name": 3}]}'
    assert parse_entity_answer(wrapped) == [ExtractedEntity("Ann Lee", "person")]
    assert parse_entity_answer('[{"name": "Redis", "type": "tool"}') is None  # truncated
    assert parse_entity_answer("I cannot help with that.") is None
    assert parse_entity_answer('["a", "b"]') == []


# -- the LLM, through the fake server ------------------------------------------------------------


def llm_of(server: ModelServer, timeout: float = 5.0) -> HttpLLM:
    return HttpLLM(server.url, timeout=timeout)


def test_a_good_llm_answer_is_used_and_filtered(
    documents: Vault, model_server: ModelServer
) -> None:
    answer = [
        {"name": "Redis", "type": "tool"},
        {"name": "Jane Smith", "type": "person"},
        {"name": "Cache layer", "type": "concept"},  # the title
        {"name": "Atlantis data centre of the north", "type": "location"},
    ]
    model_server.set_chat_reply(json.dumps(answer))
    doc = documents.get("notes/cache.md")
    result = extract_entities(
        documents._connection, doc.doc_id, doc.title, doc.body, llm_of(model_server)
    )
    assert result.source == "llm" and result.error is None
    assert {name for _, name, _ in result.entities} == {"Redis", "Jane Smith"}
    assert result.rejected == 2
    prompt = model_server.requests_to("chat")[0].body["messages"][0]["content"]
    assert "person, project, service, tool, concept, org, location" in prompt


@pytest.mark.parametrize(
    "reply",
    [
        '[{"name": "Redis", "type": "tool"}, {"name": "Jane',  # truncated JSON
        "Here are the entities: Redis, Jane Smith.",  # garbage
        '{"entities": "none"}',
    ],
)
def test_an_unreadable_llm_answer_falls_back_to_the_heuristic(
    documents: Vault, model_server: ModelServer, reply: str
) -> None:
    model_server.set_chat_reply(reply)
    doc = documents.get("notes/cache.md")
    result = extract_entities(
        documents._connection, doc.doc_id, doc.title, doc.body, llm_of(model_server)
    )
    assert result.source == "heuristic" and result.error
    assert {"Redis", "Jane Smith", "Kubernetes"} <= {name for _, name, _ in result.entities}


def test_a_fenced_llm_answer_is_read(documents: Vault, model_server: ModelServer) -> None:
    model_server.set_chat_reply('```json\n[{"name": "Kubernetes", "type": "service"}]\n```')
    doc = documents.get("notes/cache.md")
    result = extract_entities(
        documents._connection, doc.doc_id, doc.title, doc.body, llm_of(model_server)
    )
    assert result.source == "llm"
    assert [name for _, name, _ in result.entities] == ["Kubernetes"]


@pytest.mark.parametrize("mode", ["slow", "http500", "malformed_json", "empty_list"])
def test_a_failing_llm_leaves_nothing_half_written(
    documents: Vault, model_server: ModelServer, mode: str
) -> None:
    """Fail-open: the heuristic's entities are written whole, in one transaction."""
    model_server.slow_seconds = 1.5
    model_server.set_mode("chat", mode)
    doc = documents.get("notes/cache.md")
    result = extract_entities(
        documents._connection, doc.doc_id, doc.title, doc.body, llm_of(model_server, 0.3)
    )
    assert result.source == "heuristic" and result.error
    heuristic = extract_entities(documents._connection, doc.doc_id, doc.title, doc.body)
    assert sorted(heuristic.entities) == sorted(result.entities)


def test_rerunning_replaces_a_documents_mentions(documents: Vault) -> None:
    first = documents.knowledge.extract_entities("notes/cache.md")
    state = digest(documents._connection)
    again = documents.knowledge.extract_entities("notes/cache.md")
    assert sorted(again.entities) == sorted(first.entities)
    assert digest(documents._connection) == state
    counts = dict(
        documents._connection.execute("SELECT name, mention_count FROM entity_nodes").fetchall()
    )
    assert counts["Redis"] == 1


def test_enrich_entities_covers_every_document_once(documents: Vault) -> None:
    report = documents.knowledge.enrich_entities()
    assert report["documents"] == 2 and report["heuristic"] == 2 and report["llm"] == 0
    assert documents.knowledge.enrich_entities()["documents"] == 0  # nothing lacks entities now
    assert documents.knowledge.enrich_entities(everything=True)["documents"] == 2
    counts = dict(
        documents._connection.execute("SELECT name, mention_count FROM entity_nodes").fetchall()
    )
    assert counts["Redis"] == 2 and counts["Kubernetes"] == 2


def test_the_vault_uses_its_configured_llm_and_survives_losing_it(
    tmp_path: Path, model_server: ModelServer
) -> None:
    from memtrove.models.registry import ModelSettings
    from tests.fakes.model_server import refused_url

    folder = tmp_path / "notes"
    write(folder, "cache.md", BODY)
    write(folder, "other.md", "# Other\n\nRedis again, and Kubernetes.\n")
    model_server.set_chat_reply('[{"name": "Redis", "type": "tool"}]')
    settings = ModelSettings(llm_url=model_server.url)
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=settings) as vault:
        vault.add_collection(folder, name="notes")
        vault.update()
        report = vault.knowledge.enrich_entities()
        assert (report["llm"], report["heuristic"], report["llm_failures"]) == (2, 0, 0)
        assert report["entity_edges"] == 2  # two documents share Redis: linked both ways
        assert vault.knowledge.enrich_entities(everything=True, use_llm=False)["heuristic"] == 2
    lost = ModelSettings(llm_url=refused_url())
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=lost) as vault:
        report = vault.knowledge.enrich_entities(everything=True)
        assert (report["llm"], report["heuristic"], report["llm_failures"]) == (0, 2, 2)
        assert "Kubernetes" in {
            name for _, name, _ in vault.knowledge.extract_entities("notes/other.md").entities
        }


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400), st.text(max_size=80))
def test_any_text_extracts_without_error(body: str, title: str) -> None:
    kept, rejected = filter_entities(heuristic_entities(title, body), title)
    assert rejected >= 0
    assert all(0 < len(e.name) <= 60 and e.name == e.name.strip() for e in kept)


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=80).filter(lambda name: name.strip()))
def test_any_name_resolves_and_is_found_again(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    from memtrove.db.connection import write_transaction
    from memtrove.graph.entity_resolution import ensure_entity, find_entity

    folder = tmp_path_factory.mktemp("names")
    with Vault.open(folder / "v.sqlite", config_dir=folder / "c") as vault:
        with write_transaction(vault._connection):
            stored = ensure_entity(vault._connection, name, "concept")
        assert find_entity(vault._connection, name) is not None or not name.split()
        assert stored.entity_id.startswith("default:concept:")
