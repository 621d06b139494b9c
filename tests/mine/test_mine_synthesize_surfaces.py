"""``synthesize`` on the MCP ``mine`` tool and ``POST /mine``, against the loopback fake model
server: facts saved after the import, a garbage answer counted (the import stays), and a
dry run refused (the tool's default is a dry run; synthesis writes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove import ModelSettings, Vault
from memtrove.api import create_app
from memtrove.errors import InvalidQueryError
from memtrove.mcp.mine_server import mine
from tests.api.conftest import JSON, local_client
from tests.fakes.model_server import ModelServer

CHAT = (
    "User: shall we use OAuth for the login page?\n"
    "Assistant: Yes, OAuth with PKCE; the session lives in Postgres.\n"
    "User: And where do the vectors go?\n"
    "Assistant: sqlite-vec, cosine distance, in the same file.\n"
)
FACTS = [{"title": "Use OAuth.", "contentType": "decision", "facts": ["Login uses OAuth."]}]


@pytest.fixture
def setup(tmp_path: Path, model_server: ModelServer) -> Iterator[tuple[Vault, Path]]:
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "auth.txt").write_text(CHAT, encoding="utf-8")
    model_server.set_chat_reply(lambda prompt: json.dumps(FACTS) if "OAuth" in prompt else "[]")
    settings = ModelSettings(llm_url=model_server.url)
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=settings) as vault:
        yield vault, exports


def _saved(vault: Vault) -> list[str]:
    rows = vault._connection.execute(
        "SELECT title FROM documents WHERE collection = '_memtrove' "
        "AND path LIKE 'synthesized/%' AND active = 1"
    ).fetchall()
    return [str(row[0]) for row in rows]


def test_the_mcp_tool_imports_then_synthesizes(setup: tuple[Vault, Path]) -> None:
    vault, exports = setup
    with pytest.raises(InvalidQueryError, match="dry_run=false"):
        mine(vault, str(exports), "chats", "auto", True, None, True)
    assert vault._connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0
    text, data = mine(vault, str(exports), "chats", "auto", False, None, True, 5)
    assert data["written"] == 2
    synthesis = data["synthesis"]
    assert (synthesis["docsScanned"], synthesis["factsSaved"], synthesis["llm"]) == (2, 1, True)
    assert synthesis["docsWithNoFacts"] == 1
    assert _saved(vault) == ["Use OAuth."]
    assert "wrote 2" in text and "\n" in text
    # a rerun writes no exchange and synthesizes the collection's again: the same path
    _, again = mine(vault, str(exports), "chats", "auto", False, None, True, 5)
    assert again["written"] == 0 and _saved(vault) == ["Use OAuth."]


def test_the_rest_route_synthesizes_and_counts_a_garbage_answer(
    setup: tuple[Vault, Path], model_server: ModelServer
) -> None:
    vault, exports = setup
    with local_client(create_app(vault)) as client:
        both = client.post(
            "/mine", json={"path": str(exports), "synthesize": True, "dry_run": True}, headers=JSON
        )
        assert both.status_code == 400 and "not with dry_run" in both.json()["error"]
        model_server.set_chat_reply("this is not JSON at all {")
        answer = client.post(
            "/mine",
            json={"path": str(exports), "collection": "chats", "synthesize": True},
            headers=JSON,
        )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["written"] == 2  # the import stays
        assert (body["synthesis"]["llmFailures"], body["synthesis"]["factsSaved"]) == (2, 0)
        limit = client.post(
            "/mine",
            json={"path": str(exports), "synthesize": True, "synthesis_max_docs": -1},
            headers=JSON,
        )
        assert limit.status_code == 422
    assert _saved(vault) == []
