"""Embedding, vector search, the query pipeline and the health checks as users run them:
real ``memtrove`` processes against a real vault and the loopback fake model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.model_server import ModelServer, refused_url


def memtrove(*args: str, env: dict[str, str], code: int = 0) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("MEMTROVE_")}
    return {
        **clean,
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
    }


def served(env: dict[str, str], server: ModelServer, *roles: str) -> dict[str, str]:
    return {**env, **{f"MEMTROVE_{role}_URL": server.url for role in roles}}


def test_bootstrap_embed_vsearch_query(env: dict[str, str], example_copy: Path) -> None:
    out = memtrove("bootstrap", str(example_copy), "--name", "demo", env=env).stdout
    assert "+30 ~0 =0 -0" in out
    assert "embedded 310 fragments of 30 documents" in out and "256-d" in out
    again = memtrove("embed", "--json", env=env).stdout
    assert json.loads(again)["fragments"] == 0
    assert "nothing to embed" in memtrove("embed", env=env).stdout

    found = json.loads(memtrove("vsearch", "thumbnail worker memory", "--json", env=env).stdout)
    assert found["stages"] == ["vector"] and found["results"]
    assert any("thumbnail" in hit["path"] for hit in found["results"][:3])
    answer = json.loads(
        memtrove(
            "query", "why", "were", "mobile", "users", "logged", "out", "--json", env=env
        ).stdout
    )
    assert set(answer) == {
        "query", "results", "stages", "skipped", "warnings", "scoreBasis",
        "degraded", "degradedReason", "degradedLegs",
    }  # fmt: skip
    assert answer["degraded"] is False and answer["scoreBasis"] == "composite"
    assert "vector" in answer["stages"] and "rerank" in answer["skipped"]
    assert "refresh-token-race" in " ".join(hit["path"] for hit in answer["results"][:3])


def test_a_model_switch_is_refused_then_forced(
    env: dict[str, str], example_copy: Path, model_server: ModelServer
) -> None:
    memtrove("bootstrap", str(example_copy), "--name", "demo", env=env)
    switched = served(env, model_server, "EMBED")
    refused = memtrove("embed", env=switched, code=1)
    assert refused.stderr.count("\n") == 1 and refused.stderr.startswith("memtrove: error: ")
    assert "--force" in refused.stderr and "http:embedding (64-d)" in refused.stderr
    assert not model_server.requests_to("embeddings") or all(
        len(request.body["input"]) == 1 for request in model_server.requests_to("embeddings")
    )  # at most the dimension probe: nothing was re-embedded
    forced = json.loads(memtrove("embed", "--force", "--json", env=switched).stdout)
    assert forced["forced"] and forced["fragments"] == 310 and forced["documents"] == 30
    assert forced["space"] == "http:embedding (64-d)"
    assert json.loads(memtrove("vsearch", "refresh token", "--json", env=switched).stdout)[
        "results"
    ]
    back = memtrove("vsearch", "refresh token", env=env, code=1)
    assert "memtrove embed --force" in back.stderr


def test_doctor_and_rerank_health_healthy_then_broken(
    env: dict[str, str], example_copy: Path, model_server: ModelServer
) -> None:
    everything = served(env, model_server, "EMBED", "LLM", "RERANK")
    memtrove("bootstrap", str(example_copy), "--name", "demo", env=everything)
    healthy = memtrove("doctor", env=everything).stdout
    assert "all 23 checks passed" in healthy
    assert "verdict   healthy" in memtrove("rerank-health", env=everything).stdout

    model_server.set_mode("embeddings", "nan")
    broken = memtrove("doctor", env=everything, code=1).stdout
    assert "fail  embedder" in broken and "NaN" in broken
    assert "fix: check that" in broken and "MEMTROVE_EMBED_MODEL" in broken
    model_server.set_mode("embeddings", "ok")

    model_server.set_mode("chat", "http500")
    report = json.loads(memtrove("doctor", "--json", env=everything, code=1).stdout)
    failed = [check for check in report["checks"] if check["status"] == "fail"]
    assert [check["name"] for check in failed] == ["llm"] and failed[0]["fix"]
    model_server.set_mode("chat", "ok")

    model_server.set_mode("rerank", "degenerate")
    assert "degenerate" in memtrove("doctor", env=everything, code=1).stdout
    health = json.loads(memtrove("rerank-health", "--json", env=everything, code=1).stdout)
    assert health["verdict"] == "degenerate" and len(health["pairs"]) == 8


def test_doctor_with_nothing_listening(env: dict[str, str], example_copy: Path) -> None:
    memtrove("bootstrap", str(example_copy), "--name", "demo", "--skip-embed", env=env)
    url = refused_url()
    nowhere = {**env, "MEMTROVE_RERANK_URL": url, "MEMTROVE_LLM_URL": url}
    out = memtrove("doctor", env=nowhere, code=1).stdout
    assert out.count("unreachable") == 2 and f"fix: start the service at {url}" in out
    assert "warn  embeddings" in out and "fix: `memtrove embed`" in out
    health = memtrove("rerank-health", env=nowhere, code=1).stdout
    assert "verdict   error" in health and "unreachable" in health


def test_rerank_health_without_a_reranker(env: dict[str, str]) -> None:
    result = memtrove("rerank-health", env=env, code=1)
    assert result.stderr == "memtrove: error: no reranker configured: set MEMTROVE_RERANK_URL\n"
