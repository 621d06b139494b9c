"""The Hermes memory provider (examples/hermes/memtrove_provider) against a real
``memtrove serve`` on loopback, with the token, and real ``memtrove`` processes for its
session hooks. Hermes itself is not needed: the provider falls back to a plain base class."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.e2e.test_serve import TOKEN, Server, base_env, start

PROVIDER = Path(__file__).resolve().parents[2] / "examples" / "hermes" / "memtrove_provider"
PROMPT = "Why did the thumbnail worker run out of memory after the pyvips switch?"
SESSION = "hermes-7c1d"


def load_provider() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memtrove_provider", PROVIDER / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Server]]:
    import subprocess

    from tests.conftest import EXAMPLES

    home = tmp_path_factory.mktemp("hermes")
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", "bootstrap", str(EXAMPLES), "--name", "demo"],
        env=base_env(home), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    server = start({**base_env(home), "MEMTROVE_API_TOKEN": TOKEN}, "--port", "0",
                   log=home / "serve.log")  # fmt: skip
    yield home, server
    assert server.stop() == 0
    assert "Traceback" not in server.log.read_text()


@pytest.fixture
def provider(
    served: tuple[Path, Server], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Any]:
    home, server = served
    for name, value in base_env(home).items():
        if name.startswith("MEMTROVE_"):
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEMTROVE_BIN", str(Path(sys.executable).parent / "memtrove"))
    monkeypatch.setenv("MEMTROVE_SERVE_PORT", server.url.rsplit(":", 1)[1].rstrip("/"))
    monkeypatch.setenv("MEMTROVE_API_TOKEN", TOKEN)
    made = load_provider().MemtroveProvider()
    yield made
    made.shutdown()


def call(provider: Any, tool: str, args: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(provider.handle_tool_call(tool, args))
    return answer


def test_a_session_bootstraps_prefetches_and_ends_with_a_handoff(
    provider: Any, tmp_path: Path
) -> None:
    assert provider.is_available() and provider.name == "memtrove"
    provider.initialize(SESSION, hermes_home=str(tmp_path), agent_context="primary")
    assert "memtrove_retrieve" in provider.system_prompt_block()
    provider.queue_prefetch(PROMPT, session_id=SESSION)
    context = provider.prefetch(PROMPT, session_id=SESSION)
    assert context.startswith("<vault-session>") and "<vault-context>" in context
    assert "thumbnail-worker-memory-leak" in context
    assert provider.prefetch(PROMPT, session_id=SESSION) == ""  # consumed once
    provider.sync_turn(PROMPT, "pyvips kept 16 jobs; we decided to cap its cache at 64 MB.")
    provider.sync_turn("Also fix the retry loop in the uploader please.",
                       "Done: fixed uploader/retry.py. Next: load-test the bulk import.")  # fmt: skip
    provider.on_session_end([])
    sessions = call(provider, "memtrove_session_log", {"limit": 10})["sessions"]
    ours = next(s for s in sessions if s["session_id"] == SESSION)
    # the fields the reference product's plugins read (clawmem inventory, section 3)
    assert ours["prompt_count"] == ours["turns"] == 1 and ours["started_at"]
    assert ours["handoff_path"]


def test_the_tools_answer_with_the_plugin_field_names(provider: Any, tmp_path: Path) -> None:
    provider.initialize("hermes-tools", hermes_home=str(tmp_path))
    found = call(provider, "memtrove_retrieve", {"query": "pyvips thumbnail worker memory"})
    assert found["count"] >= 1
    first = found["results"][0]
    for name in ("docid", "path", "title", "score", "snippet", "contentType", "modifiedAt"):
        assert name in first, name
    assert first["contentType"] == first["content_type"]
    document = call(provider, "memtrove_get", {"docid": first["docid"]})
    for name in ("docid", "path", "title", "collection", "modifiedAt", "body", "bodyLength"):
        assert name in document, name
    assert document["bodyLength"] == len(document["body"])
    timeline = call(provider, "memtrove_timeline", {"docid": first["docid"], "before": 2})
    assert timeline["anchor"]["docid"] == first["docid"] and timeline["anchor"]["modifiedAt"]
    assert 1 <= len(timeline["before"]) + len(timeline["after"]) <= 7
    assert all({"modifiedAt", "title", "collection"} <= set(e) for e in timeline["before"])
    similar = call(provider, "memtrove_similar", {"docid": first["docid"], "limit": 3})
    assert 1 <= len(similar["similar"]) <= 3
    assert all({"title", "path", "score"} <= set(s) for s in similar["similar"])
    rest_call = load_provider().rest_call
    health = rest_call(provider._port, "GET", "/health")
    assert health["needsEmbedding"] == health["needs_embedding"] >= 0
    assert health["hasVectors"] is health["has_vectors"] is True
    whole = rest_call(provider._port, "POST", "/search", {"query": "pyvips", "compact": False})
    assert whole["results"] and all(r["body"] == r["content"] for r in whole["results"])


@pytest.mark.parametrize(
    ("tool", "args"),
    [("memtrove_retrieve", {}), ("memtrove_retrieve", {"query": "   "}),
     ("memtrove_get", {"docid": "../../etc/passwd"}), ("memtrove_get", {}),
     ("memtrove_timeline", {"docid": "zzzzzz", "before": "lots"}),
     ("memtrove_similar", {"docid": "%00", "limit": 10**30}), ("memtrove_nope", {"docid": "a"}),
     ("memtrove_session_log", {"limit": True}), ("memtrove_get", None)],
)  # fmt: skip
def test_hostile_tool_calls_answer_an_error_object(provider: Any, tool: str, args: Any) -> None:
    answer = call(provider, tool, args)
    assert isinstance(answer, dict)
    assert "error" in answer or tool == "memtrove_session_log"


def test_without_the_token_or_the_server_the_tools_say_so(
    provider: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTROVE_API_TOKEN", "wrong-token")
    provider.initialize("hermes-auth")
    assert set(call(provider, "memtrove_session_log", {})) == {"error"}
    monkeypatch.setenv("MEMTROVE_SERVE_PORT", "1")
    provider.initialize("hermes-down")
    assert "not reachable" in call(provider, "memtrove_session_log", {})["error"]


def test_a_subagent_reads_but_never_writes(provider: Any, tmp_path: Path) -> None:
    provider.initialize("hermes-sub", hermes_home=str(tmp_path), agent_context="subagent")
    provider.sync_turn(PROMPT, "an answer")
    provider.on_session_end([])
    assert not (tmp_path / "memtrove").exists()
    provider.queue_prefetch(PROMPT)
    assert "<vault-context>" in provider.prefetch(PROMPT)
