"""The document page in-process: entities and facts, recall history, the file link, and
the restore, confidence and type actions, on a real vault of the example notes."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.console.document import RECALL_ROWS
from tests.api.conftest import JWT_NOTE
from tests.console.conftest import change_headers, section_from

HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


def _section(page: str, heading: str) -> str:
    """The HTML of the page's section under ``heading`` (its id)."""
    return section_from(page, f'id="{heading}"')


def test_entities_are_shown_with_their_current_facts(
    client: TestClient, demo: Vault, docid: str
) -> None:
    empty = client.get(f"/ui/doc?ref=%23{docid}").text
    assert "No entities recorded" in _section(empty, "entities-heading")
    demo.knowledge.extract_entities(JWT_NOTE, use_llm=False)
    demo.graph.add_fact("JWT", "uses", object_literal="RS256")
    demo.graph.add_fact("JWT", "uses", object_literal="HS256", valid_to="2001-01-01")
    demo.graph.add_fact("JWT", "depends_on", object_literal=HOSTILE)
    section = _section(client.get(f"/ui/doc?ref=%23{docid}").text, "entities-heading")
    names = [entity.name for entity in demo.knowledge.document_entities(JWT_NOTE)]
    assert "JWT" in names and "OAuth 2.0" in names
    assert '<a href="/ui/graph?entity=JWT">JWT</a>' in section
    assert '<a href="/ui/graph?entity=OAuth%202.0">OAuth 2.0</a>' in section
    assert "RS256" in section and "HS256" not in section  # current facts only
    assert "<script>" not in section and "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert '<th scope="row">' in section


def test_the_recall_history_lists_each_injection(
    client: TestClient, demo: Vault, docid: str
) -> None:
    assert "Never injected" in client.get(f"/ui/doc?ref=%23{docid}").text
    doc_id = demo.get(JWT_NOTE).doc_id
    demo.sessions.log_context_usage(
        "session-one", "context-surfacing", injected=[(doc_id, 0.9)], estimated_tokens=100,
        query_text="q",
    )  # fmt: skip
    demo.sessions.log_context_usage(
        HOSTILE, "context-surfacing", injected=[(doc_id, 0.7)], query_text="why " + HOSTILE
    )
    section = _section(client.get(f"/ui/doc?ref=%23{docid}").text, "recall-heading")
    assert "Injected 2 times in 2 sessions" in section
    assert '<a href="/ui/sessions/session-one"' in section
    assert section.index("0.70") < section.index("0.90")  # newest first
    assert "not judged" in section
    assert "<script>" not in section and "<img" not in section
    assert "why &lt;script&gt;" in section
    history = demo.sessions.recall_history(JWT_NOTE)
    assert (history.injected, history.sessions, history.referenced) == (2, 2, 0)
    assert [event.session_id for event in history.events] == [HOSTILE, "session-one"]


def test_the_recall_history_is_capped(client: TestClient, demo: Vault, docid: str) -> None:
    doc_id = demo.get(JWT_NOTE).doc_id
    for turn in range(RECALL_ROWS + 3):
        demo.sessions.log_context_usage(
            "long-session", "context-surfacing", injected=[(doc_id, 0.5)], turn_index=turn
        )
    section = _section(client.get(f"/ui/doc?ref=%23{docid}").text, "recall-heading")
    assert f"Injected {RECALL_ROWS + 3} times in 1 session" in section
    assert f"The latest {RECALL_ROWS} are listed" in section
    assert section.count('href="/ui/sessions/long-session"') == RECALL_ROWS


def test_restore_brings_a_forgotten_document_back(
    client: TestClient, demo: Vault, docid: str
) -> None:
    headers = change_headers(client)
    assert 'data-action="restore"' not in client.get(f"/ui/doc?ref=%23{docid}").text
    assert client.post("/ui/actions/forget", json={"ref": JWT_NOTE}, headers=headers).is_success
    assert JWT_NOTE.removeprefix("demo/") not in [r.path for r in demo.search("refresh token")]
    page = client.get(f"/ui/doc?ref=%23{docid}").text
    assert 'data-action="restore"' in page and "Not shown for an inactive document" in page
    restored = client.post("/ui/actions/restore", json={"ref": f"#{docid}"}, headers=headers)
    assert restored.status_code == 200 and restored.json()["document"]["active"] is True
    assert demo.get(JWT_NOTE).active
    assert demo.search("refresh token")[0].path == JWT_NOTE.removeprefix("demo/")
    again = client.post("/ui/actions/restore", json={"ref": JWT_NOTE}, headers=headers)
    assert again.status_code == 200  # an active document: nothing to do


def test_confidence_and_type_edits_persist(client: TestClient, demo: Vault, docid: str) -> None:
    headers = change_headers(client)
    page = client.get(f"/ui/doc?ref=%23{docid}").text
    assert 'data-action="confidence" data-input="confidence-input"' in page
    assert 'data-action="type" data-input="type-input"' in page
    set_confidence = client.post(
        "/ui/actions/confidence", json={"ref": JWT_NOTE, "confidence": 0.35}, headers=headers
    )
    assert set_confidence.status_code == 200
    assert set_confidence.json()["document"]["confidence"] == 0.35
    set_type = client.post(
        "/ui/actions/type", json={"ref": JWT_NOTE, "type": "research"}, headers=headers
    )
    assert set_type.status_code == 200 and set_type.json()["document"]["content_type"] == "research"
    document = demo.get(JWT_NOTE)
    assert (document.confidence, document.content_type) == (0.35, "research")
    assert '<option value="research" selected>' in client.get(f"/ui/doc?ref=%23{docid}").text
    refused = [
        ("confidence", {"confidence": 1.5}),
        ("confidence", {"confidence": -1}),
        ("confidence", {"confidence": "0.5"}),
        ("confidence", {"confidence": True}),
        ("confidence", {"confidence": None}),
        ("confidence", {}),
        ("type", {"type": "observation"}),
        ("type", {"type": HOSTILE * 100}),
        ("type", {"type": ["note"]}),
        ("type", {}),
    ]
    for action, value in refused:
        answer = client.post(
            f"/ui/actions/{action}", json={"ref": JWT_NOTE, **value}, headers=headers
        )
        assert answer.status_code == 400, value
        error = answer.json()
        assert set(error) == {"error"} and "\n" not in error["error"], value
        assert len(error["error"]) < 400
    document = demo.get(JWT_NOTE)
    assert (document.confidence, document.content_type) == (0.35, "research")


def test_a_folder_document_links_to_its_file(
    client: TestClient, demo: Vault, docid: str, example_copy: Path
) -> None:
    page = client.get(f"/ui/doc?ref=%23{docid}").text
    target = (example_copy / JWT_NOTE.removeprefix("demo/")).absolute().as_uri()
    assert f'href="{target}" rel="noreferrer"' in page
    memory = demo.memory.remember("hostile " + HOSTILE, "An agent memory, not a file.").entry
    internal = client.get(f"/ui/doc?ref=%23{memory.docid}")
    assert internal.status_code == 200
    assert "file://" not in internal.text and "Open file" not in internal.text
    assert "<script>alert" not in internal.text
