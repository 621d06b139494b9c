"""``embed``, ``vsearch``, ``query`` and ``update --embed`` / ``bootstrap`` embedding, in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove import Vault
from memtrove.cli import app
from memtrove.cli.retrieval import run_embed
from tests.conftest import RESULT_FIELDS, write
from tests.fakes.model_server import ModelServer, refused_url

DEGRADED = ("scoreBasis", "degraded", "degradedReason", "degradedLegs")


def run(cli: CliRunner, *args: str, code: int = 0) -> str:
    result = cli.invoke(app, list(args))
    assert result.exit_code == code, (result.output, result.stderr)
    assert "Traceback" not in result.output + result.stderr
    return result.stdout


def error(cli: CliRunner, *args: str) -> str:
    """The one-line error of a command that must exit 1."""
    result = cli.invoke(app, list(args))
    assert result.exit_code == 1, (result.output, result.stderr)
    assert result.stderr.startswith("memtrove: error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output + result.stderr
    return result.stderr


@pytest.fixture
def indexed(cli: CliRunner, example_copy: Path) -> CliRunner:
    """The example vault indexed, not embedded."""
    run(cli, "bootstrap", str(example_copy), "--name", "demo", "--skip-embed")
    return cli


def test_bootstrap_embeds_unless_skipped(cli: CliRunner, example_copy: Path) -> None:
    out = run(cli, "bootstrap", str(example_copy), "--name", "demo")
    assert "+30 ~0 =0 -0" in out
    assert "embedded 310 fragments of 30 documents" in out
    assert "(wordllama:l2_supercat, 256-d)" in out
    out = run(cli, "bootstrap", str(example_copy), "--name", "demo")
    assert "already covers" in out and "nothing to embed" in out
    other = example_copy.parent / "other"
    write(other, "a.md", "# A note\n\nabout herons")
    out = run(cli, "bootstrap", str(other), "--skip-embed")
    assert "+1 ~0 =0 -0" in out and "fragments" not in out


def test_embed_is_incremental(indexed: CliRunner, example_copy: Path) -> None:
    report = json.loads(run(indexed, "embed", "--json"))
    assert report["documents"] == 30 and report["fragments"] == 310
    assert report["space"] == "wordllama:l2_supercat (256-d)" and report["errors"] == []
    assert report["summary"].startswith("embedded 310 fragments of 30 documents in ")
    assert "nothing to embed" in run(indexed, "embed")
    write(example_copy, "notes/new-heron.md", "# Heron sightings\n\nA grey heron by the canal.")
    out = run(indexed, "update", "--embed")
    assert "+1 ~0 =30 -0" in out and "embedded 1 fragment of 1 document" in out
    data = json.loads(run(indexed, "update", "--embed", "--json"))
    assert data["summary"] == "+0 ~0 =31 -0" and data["embed"]["fragments"] == 0
    assert "embed" not in json.loads(run(indexed, "update", "--json"))


def test_embed_force_re_embeds_everything(indexed: CliRunner) -> None:
    run(indexed, "embed")
    report = json.loads(run(indexed, "embed", "--force", "--json"))
    assert report["forced"] is True and report["fragments"] == 310


def test_a_model_switch_is_refused_until_forced(
    indexed: CliRunner, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(indexed, "embed")
    monkeypatch.setenv("MEMTROVE_EMBED_URL", model_server.url)
    message = error(indexed, "embed")
    assert "wordllama:l2_supercat (256-d)" in message and "http:embedding (64-d)" in message
    assert "memtrove embed --force" in message
    assert "--force" in error(indexed, "vsearch", "refresh token")
    out = run(indexed, "embed", "--force")
    assert "embedded 310 fragments of 30 documents" in out and "(http:embedding, 64-d)" in out
    hits = json.loads(run(indexed, "vsearch", "refresh", "token", "--json"))["results"]
    assert hits and set(hits[0]) == RESULT_FIELDS


def test_update_embed_failure_is_one_line_and_keeps_the_update(
    indexed: CliRunner, example_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(example_copy, "notes/another.md", "# Another\n\nbody text")
    monkeypatch.setenv("MEMTROVE_EMBED_URL", refused_url())
    message = error(indexed, "update", "--embed")
    assert "unreachable" in message and "the index itself is up to date" in message
    monkeypatch.delenv("MEMTROVE_EMBED_URL")
    assert "+0 ~0 =31 -0" in run(indexed, "update")
    result = indexed.invoke(app, ["update", "--embed", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["embed"]["documents"] == 31


def test_update_embed_json_reports_the_embed_error(
    indexed: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTROVE_EMBED_URL", refused_url())
    result = indexed.invoke(app, ["update", "--embed", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["summary"] == "+0 ~0 =30 -0" and "unreachable" in data["embed"]["error"]


def test_vsearch_needs_vectors_then_searches(indexed: CliRunner) -> None:
    assert "run `memtrove embed`" in error(indexed, "vsearch", "refresh token")
    run(indexed, "embed")
    payload = json.loads(run(indexed, "vsearch", "refresh", "token", "rotation", "--json"))
    assert set(payload) == {"query", "results", "stages", "skipped", "warnings", *DEGRADED}
    assert payload["query"] == "refresh token rotation" and payload["stages"] == ["vector"]
    assert payload["scoreBasis"] == "vector-cosine"
    assert len(payload["results"]) == 10 and set(payload["results"][0]) == RESULT_FIELDS
    decisions = json.loads(run(indexed, "vsearch", "token", "-t", "decision", "--json"))
    assert {r["content_type"] for r in decisions["results"]} == {"decision"}
    assert json.loads(run(indexed, "vsearch", "x", "-c", "nope", "--json"))["results"] == []
    assert json.loads(run(indexed, "vsearch", "token", "--min-score", "0.99", "--json")) == {
        "query": "token",
        "results": [],
        "stages": ["vector"],
        "skipped": {},
        "warnings": [],
        "scoreBasis": "vector-cosine",
        "degraded": True,  # every hit scored under the floor: the answer says so
        "degradedReason": "min-score",
        "degradedLegs": [],
    }
    human = run(indexed, "vsearch", "thumbnail worker memory leak", "-n", "2")
    assert " 1. " in human and " 2. " in human and " 3. " not in human


def test_query_json_and_human_output(indexed: CliRunner) -> None:
    run(indexed, "embed")
    payload = json.loads(run(indexed, "query", "why", "did", "logouts", "happen", "--json"))
    assert set(payload) == {"query", "results", "stages", "skipped", "warnings", *DEGRADED}
    assert payload["stages"][:2] == ["bm25", "vector"] and "composite" in payload["stages"]
    assert payload["scoreBasis"] == "composite" and payload["degraded"] is False
    assert set(payload["skipped"]) == {"expansion", "rerank"}
    assert set(payload["results"][0]) == RESULT_FIELDS
    human = run(indexed, "query", "refresh token rotation", "-n", "3")
    assert " 1. " in human and "stages: bm25 > vector" in human
    assert "skipped expansion: no LLM configured" in human
    full = json.loads(run(indexed, "query", "refresh token", "-n", "1", "--full", "--json"))
    assert full["results"][0]["content"]
    plain = json.loads(run(indexed, "query", "refresh token", "--no-diverse", "--json"))
    assert "mmr" not in plain["stages"]
    steered = json.loads(
        run(indexed, "query", "tokens", "--intent", "mobile logouts", "--json", "-c", "demo")
    )
    assert "bypass" not in steered["stages"] and steered["results"]
    narrow = run(indexed, "query", "thumbnails", "--candidate-limit", "5", "-n", "1")
    assert " 1. " in narrow and " 2. " not in narrow


def test_query_with_every_model_service(
    indexed: CliRunner, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("EMBED", "LLM", "RERANK"):
        monkeypatch.setenv(f"MEMTROVE_{name}_URL", model_server.url)
    run(indexed, "embed")
    payload = json.loads(run(indexed, "query", "mobile clients logged out", "--json"))
    assert {"expansion", "rerank"} <= set(payload["stages"]) and payload["skipped"] == {}


def test_query_warnings_go_to_stderr(
    indexed: CliRunner, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTROVE_RERANK_URL", model_server.url)
    model_server.set_mode("rerank", "degenerate")
    result = indexed.invoke(app, ["query", "refresh token logouts", "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert "rerank" in payload["skipped"]
    for warning in payload["warnings"]:  # rate-limited per process: may already have been shown
        assert f"memtrove: warning: {warning}" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("vsearch",),
        ("query",),
        ("query", "x", "--candidate-limit", "0"),
        ("vsearch", "x", "-n", "0"),
    ],
)
def test_usage_errors_exit_2(cli: CliRunner, args: tuple[str, ...]) -> None:
    assert cli.invoke(app, list(args)).exit_code == 2


def test_bad_filters_are_one_line_errors(indexed: CliRunner) -> None:
    assert "unknown content type" in error(indexed, "query", "x", "-t", "bogus")
    assert "ISO date" in error(indexed, "vsearch", "x", "--since", "yesterday")


def test_progress_bar_on_a_terminal(
    tmp_path: Path, example_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(example_copy, name="demo")
        vault.update()
        report = run_embed(vault, show_progress=True)
    assert report.fragments == 310


def test_failed_embeds_are_reported_and_exit_1(
    indexed: CliRunner, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTROVE_EMBED_URL", model_server.url)
    monkeypatch.setenv("MEMTROVE_EMBED_DIMENSIONS", "64")  # no probe: batches are the first calls
    model_server.set_mode("embeddings", "nan")
    result = indexed.invoke(app, ["embed"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "returned a non-finite value (NaN)" in result.stderr
    model_server.set_mode("embeddings", "ok")
    assert "embedded 310 fragments of 30 documents" in run(indexed, "embed")
