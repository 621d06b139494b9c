"""The console's graph explorer in-process: a document's neighbourhood and causal chain, an
entity's facts with their validity windows, ``as of`` a date."""

from __future__ import annotations

from fastapi.testclient import TestClient

from memtrove import Vault
from tests.api.conftest import JWT_NOTE

POSTMORTEM = "demo/problems/2026-09-10-refresh-token-race-logouts.md"


def test_a_document_shows_its_causal_chain(client: TestClient, demo: Vault) -> None:
    demo.graph.relate(POSTMORTEM, JWT_NOTE, "causal")
    start = demo.get(POSTMORTEM)
    page = client.get(f"/ui/graph?ref=%23{start.docid}")
    assert page.status_code == 200
    chain = page.text.split("<h2>Causal chain</h2>", 1)[1].split("</ol>", 1)[0]
    assert demo.get(JWT_NOTE).title in chain and "led to" in chain
    data = client.get(f"/ui/graph.json?ref=%23{start.docid}&types=causal").json()
    assert {edge["type"] for edge in data["edges"]} == {"causal"}
    assert {node["kind"] for node in data["nodes"]} == {"document"}


def test_an_entity_shows_its_facts_as_of_a_date(client: TestClient, demo: Vault) -> None:
    demo.knowledge.add_triple(
        "Lanternfish", "uses", "Redis", valid_from="2025-01-01", valid_to="2025-12-31"
    )
    demo.knowledge.add_triple("Lanternfish", "uses", "Valkey", valid_from="2026-01-01")
    demo.knowledge.add_triple("Lanternfish", "prefers", "<script>alert(1)</script>")
    page = client.get("/ui/graph?entity=Lanternfish")
    assert page.status_code == 200
    rows = page.text.split('class="facts"', 1)[1].split("</table>", 1)[0]
    assert "Redis" in rows and "Valkey" in rows and "2025-12-31" in rows
    assert "<script>alert" not in page.text and "&lt;script&gt;alert(1)" in page.text
    past = client.get("/ui/graph?entity=Lanternfish&as_of=2025-06-01").text
    past_rows = past.split('class="facts"', 1)[1].split("</table>", 1)[0]
    assert "Redis" in past_rows and "Valkey" not in past_rows
    data = client.get("/ui/graph.json?entity=Lanternfish").json()
    kinds = {node["title"]: node["kind"] for node in data["nodes"]}
    assert kinds["Lanternfish"] == "entity" and kinds["Valkey"] == "entity"
    assert kinds["<script>alert(1)</script>"] == "value"  # JSON data, drawn as text
    labels = [edge["label"] for edge in data["edges"]]
    assert "uses (2025-01-01 to 2025-12-31)" in labels and "uses (2026-01-01 to now)" in labels


def test_unknown_names_and_bad_dates_are_one_line_errors(client: TestClient) -> None:
    assert "No entity matches" in client.get("/ui/graph?entity=Nobody").text
    unknown = client.get("/ui/graph.json?entity=Nobody")
    assert unknown.status_code == 400 and set(unknown.json()) == {"error"}
    assert client.get("/ui/graph.json").status_code == 400
    assert client.get("/ui/graph?entity=x&as_of=yesterday").status_code == 422
    assert client.get("/ui/graph?ref=demo/none.md").status_code == 404
