"""A large enrichment without an LLM finds notes and entities, and works out entity edges,
in a helper process: the vault it leaves is the one this process alone leaves, and a helper
that fails at any point only hands the rest back."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memtrove import Vault
from memtrove.graph import amem, amem_ahead, amem_entities
from memtrove.graph.amem_notes import Vocabulary
from memtrove.graph.entity_links import link_rows
from memtrove.index import workers
from memtrove.models.registry import ModelSettings
from tests.conftest import write
from tests.fakes.model_server import ModelServer

TOOLS = ["Kafka", "Redis", "PostgreSQL", "Grafana", "Prometheus", "Terraform", "Kubernetes"]
PEOPLE = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"]
DOCUMENTS = 60


def notes(folder: Path) -> Path:
    for index in range(DOCUMENTS):
        tools = ", ".join(TOOLS[(index + step) % len(TOOLS)] for step in range(3))
        write(
            folder,
            f"n{index:03d}.md",
            f"---\ntags: [ops, q{index % 4}]\n---\n# Incident {index} of the queue\n\n"
            f"{PEOPLE[index % len(PEOPLE)]} moved the `queue_{index % 9}` worker to {tools}; "
            f"see `services/billing/{index % 5}.toml` and @oncall{index % 3}.\n\n"
            f"Latency of the cache dropped after the {TOOLS[index % 7]} upgrade.\n",
        )
        # fixed times: which documents are "the most recent" naming an entity is the same
        # in every vault these notes go into
        os.utime(folder / f"n{index:03d}.md", (1_700_000_000 + index, 1_700_000_000 + index))
    return folder


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper for any run, on any machine; batches of 8 documents, chunks of 16 linked."""
    monkeypatch.setattr(amem_ahead, "AHEAD_DOCUMENTS", 1)
    monkeypatch.setattr(amem, "_BATCH", 8)
    monkeypatch.setattr(amem_entities, "_LINK_BATCH", 16)
    monkeypatch.setattr(amem_entities, "BULK_DOCUMENTS", 10)  # the deferred bulk path
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)


def state(vault: Vault) -> str:
    hasher = hashlib.sha256()
    for query in (
        "SELECT id, amem_keywords, amem_tags, amem_context FROM documents ORDER BY id",
        "SELECT source_id, target_id, relation_type, weight, metadata FROM memory_relations "
        "ORDER BY 1, 2, 3",
        "SELECT entity_id, entity_type, name, mention_count FROM entity_nodes ORDER BY 1",
        "SELECT entity_id, doc_id, mention_text FROM entity_mentions ORDER BY 1, 2",
        "SELECT entity_a, entity_b, count FROM entity_cooccurrences ORDER BY 1, 2",
        "SELECT doc_id, input_hash FROM entity_enrichment_state ORDER BY 1",
    ):
        rows = [tuple(row) for row in vault._connection.execute(query)]
        assert rows or "memory_relations" in query or "amem" in query
        hasher.update(repr(rows).encode())
    return hasher.hexdigest()


def enriched(root: Path, server: ModelServer) -> tuple[str, Any]:
    settings = ModelSettings(embed_url=server.url, llm_url=None)
    with Vault.open(root / "v.sqlite", config_dir=root / "config", models=settings) as vault:
        vault.add_collection(notes(root / "notes"), name="notes")
        vault.update()
        vault.embed()
        report = vault.enrichment.enrich(force=True, use_llm=False)
        return state(vault), (report.documents, report.entities, dict(report.links))


def test_the_helper_enriches_exactly_what_this_process_would(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_batches: None,
    model_server: ModelServer,
) -> None:
    answers: list[str] = []
    receive = workers.Helper.receive

    def counted(helper: workers.Helper, valid: Any) -> Any:
        answer = receive(helper, valid)
        answers.append(type(answer).__name__)
        return answer

    monkeypatch.setattr(workers.Helper, "receive", counted)
    helped = enriched(tmp_path / "helped", model_server)
    # every batch after the first was found by the helper, every chunk linked by it
    assert answers == ["dict"] * (DOCUMENTS // 8) + ["tuple"] * 4
    monkeypatch.setenv("MEMTROVE_INDEX_WORKERS", "0")
    alone = enriched(tmp_path / "alone", model_server)
    assert helped == alone
    assert helped[1][0] == DOCUMENTS and helped[1][1] > DOCUMENTS


# A helper that finds like the real one but stops answering after the first link chunk.
HALF_HELPER = """
import pickle, sys
from memtrove.graph.amem_ahead import find
from memtrove.graph.amem_notes import Vocabulary
from memtrove.graph.entity_links import link_rows
vocabulary, entities = None, False
while True:
    message = pickle.load(sys.stdin.buffer)
    if message[0] == "vocabulary":
        vocabulary, entities = Vocabulary.restore(message[1]), message[2]
        continue
    if message[0] == "batch":
        answer = {d: find(t, x, g, vocabulary, entities) for d, t, x, g in message[1]}
    else:
        _, documents, naming, extracted, chunk = message
        written, rows, count = {}, [], 0
        for doc_id, ids in extracted[:chunk]:
            links, edges = link_rows(doc_id, ids, documents, naming, written)
            count, rows = count + links, rows + edges
        answer = (count, rows)
    pickle.dump(answer, sys.stdout.buffer)
    sys.stdout.buffer.flush()
    if message[0] == "link":
        sys.exit(0)
"""


@pytest.mark.parametrize(
    "program",
    ["import sys; sys.exit(3)", "print('not pickle')", "import time; time.sleep(0.2)", HALF_HELPER],
    ids=["exits", "garbage", "silent", "stops-linking"],
)
def test_a_helper_that_fails_leaves_the_work_to_this_process(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_batches: None,
    model_server: ModelServer,
    program: str,
) -> None:
    monkeypatch.setenv("MEMTROVE_INDEX_WORKERS", "0")
    expected = enriched(tmp_path / "alone", model_server)
    monkeypatch.delenv("MEMTROVE_INDEX_WORKERS")
    package = str(Path(amem.__file__).resolve().parents[2])

    def dud(module: str) -> workers.Helper:
        return workers.Helper(
            subprocess.Popen(
                [sys.executable, "-c", f"import sys; sys.path.insert(0, {package!r})\n{program}"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        )

    monkeypatch.setattr(workers.Helper, "start", dud)
    assert enriched(tmp_path / "dud", model_server) == expected


def test_the_helper_loop_answers_batches_and_links() -> None:
    vocabulary = Vocabulary.restore(({"queue": 3, "kafka": 1}, 10))
    texts = [
        (1, "Queue", "# Queue\n\nThe `queue_worker` moved to Kafka; Ada Lovelace approved.", None),
        (2, "Other", "Nothing to see: plain words only.", '["x"]'),
    ]
    naming = {"e:a": (3, [1, 2, 3]), "e:b": (2, [2, 1])}
    extracted = [(1, ["e:a", "e:b"]), (2, ["e:a"]), (3, [])]
    requests = io.BytesIO()
    for message in (
        ("vocabulary", vocabulary.snapshot(), True),
        ("batch", texts),
        ("link", 10, naming, extracted, 2),
    ):
        pickle.dump(message, requests)
    requests.seek(0)
    answers = io.BytesIO()
    amem_ahead.serve(requests, answers)
    answers.seek(0)
    found = pickle.load(answers)
    here = Vocabulary.restore(vocabulary.snapshot())
    assert found == {
        doc_id: amem_ahead.find(title, text, tags, here, True)
        for doc_id, title, text, tags in texts
    }
    assert found[1][1] is not None and found[1][1][0]  # entities were found
    written: dict[tuple[int, int], float] = {}
    first = [link_rows(d, ids, 10, naming, written) for d, ids in extracted[:2]]
    last = link_rows(3, [], 10, naming, written)
    chunks = [pickle.load(answers), pickle.load(answers)]
    assert chunks[0][0] == sum(n for n, _ in first) > 0
    assert [row[:3] for row in chunks[0][1]] == [row[:3] for _, rows in first for row in rows]
    assert chunks[1] == (last[0], last[1])
    with pytest.raises(EOFError):
        pickle.load(answers)
