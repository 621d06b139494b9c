"""``POST /warm/{method}`` and ``POST /warm/hook/{name}`` in-process: the server side of the
warm path answers what the caller would have computed itself, or refuses so it does."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memtrove import ModelSettings, Vault
from memtrove.api import create_app
from memtrove.hooks.runner import main as run_hook
from memtrove.warm import encode_payload
from tests.api.conftest import TOKEN, local_client
from tests.conftest import EXAMPLES, where
from tests.hooks.conftest import FIXTURES

QUERY = "refresh token"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples indexed and embedded once per module (then closed, ready to copy)."""
    root = tmp_path_factory.mktemp("warm-template")
    with Vault.open(
        root / "vault.sqlite", config_dir=root / "config", models=ModelSettings()
    ) as vault:
        vault.add_collection(EXAMPLES, name="demo")
        vault.update()
        vault.embed()
    return root


def copy_of(template: Path, target: Path) -> Path:
    shutil.copytree(template, target)
    return target


@pytest.fixture
def served(template: Path, tmp_path: Path) -> Iterator[Vault]:
    """Copy A of the template: the vault the app serves."""
    root = copy_of(template, tmp_path / "a")
    with Vault.open(root / "vault.sqlite", config_dir=root / "config") as vault:
        yield vault


@pytest.fixture
def client(served: Vault) -> Iterator[TestClient]:
    with local_client(create_app(served)) as test_client:
        yield test_client


def caller_env(vault: Vault, home: Path, **extra: str) -> dict[str, str]:
    """What a hook or CLI process of ``vault`` sends (see memtrove.warm.forwarded_env)."""
    return {
        "MEMTROVE_VAULT": str(where(vault)),
        "MEMTROVE_CONFIG_DIR": str(vault.config_file.parent),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        **extra,
    }


def as_pairs(results: list[dict[str, Any]]) -> list[tuple[str, float]]:
    return [(result["docid"], result["score"]) for result in results]


def assert_same_ranking(results: list[dict[str, Any]], expected: Any) -> None:
    """Same documents in the same order, same scores: recency moves a just-written
    document's score in the sixth decimal between two calls a moment apart."""
    assert [r["docid"] for r in results] == [r.docid for r in expected]
    assert [r["score"] for r in results] == pytest.approx([r.score for r in expected], abs=1e-4)


def test_search_matches_the_vault(
    client: TestClient, served: Vault, isolated_environment: Path
) -> None:
    body = {"query": QUERY, "env": caller_env(served, isolated_environment)}
    answer = client.post("/warm/search", json=body)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    expected = served.search(QUERY)
    assert len(expected) > 0 and data["stages"] == expected.stages == ["bm25"]
    assert_same_ranking(data["results"], expected)
    assert [r["doc_id"] for r in data["results"]] == [r.doc_id for r in expected]
    assert all(r["content"] is None for r in data["results"])  # search never carries bodies
    assert data["results"][0]["path"].startswith("decisions/0004-jwt")


def test_search_options_are_the_cli_arguments(
    client: TestClient, served: Vault, isolated_environment: Path
) -> None:
    env = caller_env(served, isolated_environment)
    body = {"query": QUERY, "env": env, "limit": 2, "collections": ["demo"], "min_score": 0.1}
    data = client.post("/warm/vsearch", json=body).json()
    expected = served.vsearch(QUERY, limit=2, collections=["demo"], min_score=0.1)
    assert_same_ranking(data["results"], expected)
    assert data["stages"] == ["vector"] and len(data["results"]) == 2
    refused = client.post("/warm/search", json={"query": "x", "env": env, "since": "notadate"})
    assert refused.status_code == 400 and "since" in refused.json()["error"]


def test_query_with_compact_false_carries_content(
    client: TestClient, served: Vault, isolated_environment: Path
) -> None:
    body = {"query": QUERY, "env": caller_env(served, isolated_environment), "compact": False}
    answer = client.post("/warm/query", json=body)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    expected = served.query(QUERY, compact=False)
    assert_same_ranking(data["results"], expected)
    assert [r["content"] for r in data["results"]] == [r.content for r in expected]
    assert all(isinstance(r["content"], str) and r["content"] for r in data["results"])
    assert data["stages"] == expected.stages and data["skipped"] == expected.skipped
    compact = client.post("/warm/query", json={**body, "compact": True}).json()
    assert all(r["content"] is None for r in compact["results"])


def test_an_unknown_method_is_404(
    client: TestClient, served: Vault, isolated_environment: Path
) -> None:
    body = {"query": QUERY, "env": caller_env(served, isolated_environment)}
    missing = client.post("/warm/nope", json=body)
    assert missing.status_code == 404
    assert set(missing.json()) == {"error"} and "nope" in missing.json()["error"]


def test_another_vault_or_other_models_is_409(
    client: TestClient, served: Vault, isolated_environment: Path, tmp_path: Path
) -> None:
    env = caller_env(served, isolated_environment)
    other = {**env, "MEMTROVE_VAULT": str(tmp_path / "other.sqlite")}
    refused = client.post("/warm/search", json={"query": QUERY, "env": other})
    assert refused.json() == {"error": "another vault is served here"}  # neither path named
    assert refused.status_code == 409 and str(tmp_path) not in refused.text
    assert client.post("/warm/search", json={"query": QUERY, "env": {}}).status_code == 409
    for name, value in (
        ("MEMTROVE_EMBED_URL", "http://127.0.0.1:9/v1"),
        ("MEMTROVE_RERANK_URL", "http://127.0.0.1:9/v1"),
        ("MEMTROVE_EMBED_MODEL", "another"),
    ):
        models = {**env, name: value}
        refused = client.post("/warm/search", json={"query": QUERY, "env": models})
        assert refused.status_code == 409, name
        assert "model settings" in refused.json()["error"]
        hook = client.post(
            "/warm/hook/context-surfacing", json={"payload": encode_payload(b"{}"), "env": models}
        )
        assert hook.status_code == 409, name


def test_credentials_alone_do_not_conflict(
    client: TestClient, served: Vault, isolated_environment: Path
) -> None:
    env = caller_env(
        served, isolated_environment, MEMTROVE_LLM_API_KEY="sk-1", MEMTROVE_EMBED_API_KEY="sk-2"
    )
    answer = client.post("/warm/search", json={"query": QUERY, "env": env})
    assert answer.status_code == 200, answer.text
    assert as_pairs(answer.json()["results"]) == [
        (r.docid, round(r.score, 6)) for r in served.search(QUERY)
    ]


def in_process(raw: bytes, vault: Vault, env: dict[str, str]) -> dict[str, Any]:
    """What ``memtrove hook context-surfacing`` prints for ``vault`` without a server."""
    out = io.BytesIO()
    code = run_hook(
        ["context-surfacing"],
        stdin=io.BytesIO(raw),
        stdout=out,
        vault=where(vault),
        config_dir=vault.config_file.parent,
        env=env,
        watchdog=False,
    )
    assert code == 0
    text = out.getvalue().decode("ascii")
    assert text.count("\n") == 1, text
    answer: dict[str, Any] = json.loads(text)
    return answer


@pytest.mark.parametrize("fixture", ["user_prompt_submit.json", "user_prompt_submit_greeting.json"])
def test_the_hook_answers_as_the_hook_process_would(
    client: TestClient,
    served: Vault,
    template: Path,
    tmp_path: Path,
    isolated_environment: Path,
    fixture: str,
) -> None:
    raw = (FIXTURES / fixture).read_bytes()
    env = caller_env(served, isolated_environment)
    answer = client.post(
        "/warm/hook/context-surfacing", json={"payload": encode_payload(raw), "env": env}
    )
    assert answer.status_code == 200, answer.text
    assert set(answer.json()) == {"answer"}
    root = copy_of(template, tmp_path / "b")
    with Vault.open(root / "vault.sqlite", config_dir=root / "config") as other:
        expected = in_process(raw, other, caller_env(other, isolated_environment))
        other_turns = other.sessions.turn_index(json.loads(raw)["session_id"])
    assert answer.json()["answer"] == expected
    assert expected["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = expected["hookSpecificOutput"]["additionalContext"]
    assert ("<vault-context>" in context) is (fixture == "user_prompt_submit.json")
    # the after-work (the context_usage row) ran on the served vault as it does in-process
    assert served.sessions.turn_index(json.loads(raw)["session_id"]) == other_turns == 1


def test_the_hook_fails_open_and_checks_its_payload(
    client: TestClient, served: Vault, isolated_environment: Path
) -> None:
    env = caller_env(served, isolated_environment)
    for bad in ("not base64!", "QUJ", "caf\u00e9"):
        refused = client.post("/warm/hook/context-surfacing", json={"payload": bad, "env": env})
        assert refused.status_code == 400, bad
        assert refused.json() == {"error": "payload must be base64"}
    raw = (FIXTURES / "user_prompt_submit.json").read_bytes()
    unknown = client.post("/warm/hook/nope", json={"payload": encode_payload(raw), "env": env})
    assert unknown.status_code == 200
    assert unknown.json() == {"answer": {"continue": True, "suppressOutput": False}}
    log = (isolated_environment / ".cache" / "memtrove" / "hooks.log").read_text()
    assert "unknown hook 'nope'" in log
    malformed = client.post(
        "/warm/hook/context-surfacing", json={"payload": encode_payload(b"\xff{"), "env": env}
    )
    assert malformed.status_code == 200
    assert malformed.json()["answer"]["hookSpecificOutput"]["additionalContext"] == ""


def test_a_token_is_required_when_set(served: Vault, isolated_environment: Path) -> None:
    body = {"query": QUERY, "env": caller_env(served, isolated_environment)}
    hook = {"payload": encode_payload(b"{}"), "env": body["env"]}
    with local_client(create_app(served, token=TOKEN)) as client:
        assert client.post("/warm/search", json=body).status_code == 401
        assert client.post("/warm/hook/context-surfacing", json=hook).status_code == 401
        wrong = {"Authorization": "Bearer nope"}
        assert client.post("/warm/search", json=body, headers=wrong).status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert client.post("/warm/search", json=body, headers=bearer).status_code == 200
        answered = client.post("/warm/hook/context-surfacing", json=hook, headers=bearer)
        assert answered.status_code == 200 and "answer" in answered.json()
