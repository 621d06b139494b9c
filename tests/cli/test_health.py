"""``doctor`` and ``rerank-health`` against the fake model server, healthy and broken."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrove.cli import app
from tests.fakes.model_server import ModelServer, refused_url


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("MEMTROVE_VAULT", str(tmp_path / "cli" / "vault.sqlite"))
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", str(tmp_path / "cli" / "config"))
    return CliRunner()


@pytest.fixture
def served(
    cli: CliRunner, example_copy: Path, model_server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> CliRunner:
    """The example vault embedded by the fake server, every model role pointed at it."""
    for role in ("EMBED", "LLM", "RERANK"):
        monkeypatch.setenv(f"MEMTROVE_{role}_URL", model_server.url)
    invoke(cli, "bootstrap", str(example_copy), "--name", "demo")
    return cli


def invoke(cli: CliRunner, *args: str, code: int = 0) -> str:
    result = cli.invoke(app, list(args))
    assert result.exit_code == code, (result.output, result.stderr)
    assert "Traceback" not in result.output
    return result.stdout


def doctor_json(cli: CliRunner, code: int) -> dict[str, dict[str, str]]:
    """``doctor --json`` run with the expected exit code; its checks by name."""
    report = json.loads(invoke(cli, "doctor", "--json", code=code))
    assert report["ok"] is (code == 0)
    return {check["name"]: check for check in report["checks"]}


def test_doctor_healthy_with_every_service(served: CliRunner) -> None:
    checks = doctor_json(served, 0)
    assert {check["status"] for check in checks.values()} == {"ok"}
    assert "64-d" in checks["embedder"]["detail"]
    assert "8 of 8 pairs" in checks["reranker"]["detail"]
    assert "answered" in checks["llm"]["detail"]
    out = invoke(served, "doctor")
    assert "all 23 checks passed" in out and "collection demo" in out


def test_doctor_without_services_says_what_is_skipped(cli: CliRunner, example_copy: Path) -> None:
    invoke(cli, "bootstrap", str(example_copy), "--skip-embed")
    checks = doctor_json(cli, 0)
    assert checks["embeddings"]["status"] == "warn" and checks["embeddings"]["fix"] == (
        "`memtrove embed`"
    )
    assert checks["llm"]["detail"].startswith("not configured (stage skipped)")
    assert checks["reranker"]["detail"].startswith("not configured (stage skipped)")
    assert "wordllama:l2_supercat (in process), 256-d" in checks["embedder"]["detail"]


@pytest.mark.parametrize(
    ("endpoint", "mode", "check", "words"),
    [
        ("embeddings", "nan", "embedder", "NaN"),
        ("embeddings", "http500", "embedder", "HTTP 500"),
        ("embeddings", "degenerate", "embedder", "zero vector"),
        ("embeddings", "wrong_dimensions", "embedding space", "32-d"),
        ("chat", "http500", "llm", "HTTP 500"),
        ("chat", "degenerate", "llm", "empty text"),
        ("rerank", "degenerate", "reranker", "degenerate"),
        ("rerank", "nan", "reranker", "non-finite"),
        ("rerank", "malformed_json", "reranker", "malformed JSON"),
    ],
)
def test_doctor_broken_service_fails_with_the_fix(
    served: CliRunner,
    model_server: ModelServer,
    endpoint: str,
    mode: str,
    check: str,
    words: str,
) -> None:
    model_server.set_mode(endpoint, mode)
    checks = doctor_json(served, 1)
    failed = [name for name, found in checks.items() if found["status"] == "fail"]
    assert failed == [check], checks
    assert words in checks[check]["detail"]
    assert checks[check]["fix"]
    out = invoke(served, "doctor", code=1)
    assert "fix: " in out and "1 failed" in out


def test_doctor_reports_an_unreachable_service(
    served: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = refused_url()
    monkeypatch.setenv("MEMTROVE_RERANK_URL", url)
    checks = doctor_json(served, 1)
    assert "unreachable" in checks["reranker"]["detail"]
    assert f"start the service at {url}" in checks["reranker"]["fix"]


def test_doctor_flags_a_model_switch(served: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMTROVE_EMBED_URL")
    checks = doctor_json(served, 1)
    assert checks["embedding space"]["status"] == "fail"
    assert "http:embedding (64-d)" in checks["embedding space"]["detail"]
    assert "memtrove embed --force" in checks["embedding space"]["fix"]


def test_doctor_without_a_vault_does_not_create_one(cli: CliRunner, tmp_path: Path) -> None:
    out = invoke(cli, "doctor", code=1)
    assert "no vault at" in out and "memtrove bootstrap" in out
    assert not (tmp_path / "cli" / "vault.sqlite").exists()
    assert "embedder" in out  # the services are still checked


def test_doctor_on_a_corrupt_vault(cli: CliRunner, tmp_path: Path) -> None:
    vault = tmp_path / "cli" / "vault.sqlite"
    vault.parent.mkdir(parents=True)
    vault.write_bytes(b"not a database at all" * 200)
    checks = doctor_json(cli, 1)
    assert "cannot open vault" in checks["vault"]["detail"]
    assert "move the file aside" in checks["vault"]["fix"]


def test_doctor_on_a_vault_path_the_system_refuses(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name too long to stat was an unexpected OSError."""
    monkeypatch.setenv("MEMTROVE_VAULT", str(tmp_path / ("d" * 300) / "vault.sqlite"))
    checks = doctor_json(cli, 1)
    assert "File name too long" in checks["vault"]["detail"]


def test_doctor_with_a_bad_model_setting(
    cli: CliRunner, example_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    invoke(cli, "bootstrap", str(example_copy), "--skip-embed")
    monkeypatch.setenv("MEMTROVE_EMBED_DIMENSIONS", "many")
    checks = doctor_json(cli, 1)
    assert "MEMTROVE_EMBED_DIMENSIONS" in checks["config"]["detail"]


def test_rerank_health_healthy(served: CliRunner) -> None:
    out = invoke(served, "rerank-health")
    assert "verdict   healthy" in out and "how do I rotate the refresh token" in out
    report = json.loads(invoke(served, "rerank-health", "--json"))
    assert report["healthy"] is True and report["verdict"] == "healthy"
    assert len(report["pairs"]) == 8
    assert all(pair["relevant_score"] > pair["irrelevant_score"] for pair in report["pairs"])


def test_rerank_health_accepts_logits(served: CliRunner, model_server: ModelServer) -> None:
    model_server.set_mode("rerank", "logits")
    assert json.loads(invoke(served, "rerank-health", "--json"))["verdict"] == "healthy"


def test_rerank_health_degenerate_exits_1(served: CliRunner, model_server: ModelServer) -> None:
    model_server.set_mode("rerank", "degenerate")
    out = invoke(served, "rerank-health", code=1)
    assert "degenerate" in out and "fix:" in out
    report = json.loads(invoke(served, "rerank-health", "--json", code=1))
    assert report["verdict"] == "degenerate" and report["fix"]


@pytest.mark.parametrize("mode", ["http500", "empty_list", "short_list"])
def test_rerank_health_broken_service_exits_1(
    served: CliRunner, model_server: ModelServer, mode: str
) -> None:
    model_server.set_mode("rerank", mode)
    report = json.loads(invoke(served, "rerank-health", "--json", code=1))
    assert report["verdict"] == "error" and report["fix"]


def test_rerank_health_timeout(served: CliRunner, model_server: ModelServer) -> None:
    model_server.slow_seconds = 1.0
    model_server.set_mode("rerank", "slow")
    report = json.loads(invoke(served, "rerank-health", "--json", "--timeout-ms", "200", code=1))
    assert report["verdict"] == "error" and "timed out" in report["detail"].lower()


def test_rerank_health_without_a_reranker(cli: CliRunner) -> None:
    result = cli.invoke(app, ["rerank-health"])
    assert result.exit_code == 1
    assert result.stderr == "memtrove: error: no reranker configured: set MEMTROVE_RERANK_URL\n"
    report = json.loads(invoke(cli, "rerank-health", "--json", code=1))
    assert report["configured"] is False and report["verdict"] == "not configured"


def test_the_cli_imports_no_http_client_until_a_probe_needs_it() -> None:
    """doctor's probes need httpx; every other command (and hooks) must not pay for it."""
    code = "import sys, memtrove.cli.application; print('httpx' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_doctor_names_settings_the_hooks_and_lanes_would_not_take(
    served: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """They passed every check: hooks only log a bad value, the lanes stop on one, and a
    bad redaction pattern stops `update`."""
    assert doctor_json(served, 0)["settings"]["status"] == "ok"
    monkeypatch.setenv("MEMTROVE_PROFILE", "bogus")
    monkeypatch.setenv("MEMTROVE_ENABLE_CONSOLIDATION", "maybe")
    config = tmp_path / "cli" / "config" / "config.yaml"
    config.write_text(
        config.read_text(encoding="utf-8") + "redaction:\n  patterns: ['([unclosed']\n",
        encoding="utf-8",
    )
    detail = doctor_json(served, 1)["settings"]["detail"]
    assert "unknown MEMTROVE_PROFILE 'bogus'" in detail
    assert "MEMTROVE_ENABLE_CONSOLIDATION must be true or false, not 'maybe'" in detail
    assert "redaction" in detail


def test_doctor_recommends_serve_when_the_hooks_run_cold(tmp_path: Path) -> None:
    from memtrove.cli.agents import SERVE_HINT

    env = {"MEMTROVE_VAULT": str(tmp_path / "v.sqlite"), "MEMTROVE_CONFIG_DIR": str(tmp_path)}
    runner = CliRunner()
    assert runner.invoke(app, ["init"], env=env).exit_code == 0
    before = json.loads(runner.invoke(app, ["doctor", "--json"], env=env).output)
    (warm,) = [c for c in before["checks"] if c["name"] == "warm path"]
    assert warm["status"] == "ok" and "no memtrove hooks" in warm["detail"]
    assert runner.invoke(app, ["setup", "hooks"], env=env).exit_code == 0
    result = runner.invoke(app, ["doctor", "--json"], env=env)
    assert result.exit_code == 0  # a warning, not a failure
    (warm,) = [c for c in json.loads(result.output)["checks"] if c["name"] == "warm path"]
    assert warm["status"] == "warn" and warm["fix"] == SERVE_HINT.removeprefix("Tip: ")
    assert "56 ms instead of 92 ms" in warm["fix"]


def claude_checks(runner: CliRunner, env: dict[str, str]) -> dict[str, dict[str, str]]:
    result = runner.invoke(app, ["doctor", "--json"], env=env)
    assert result.exit_code == 0, result.output  # never a failure: warnings at most
    checks = json.loads(result.output)["checks"]
    return {c["name"]: c for c in checks if c["name"] in ("claude hooks", "claude mcp")}


def test_doctor_checks_claude_codes_registration(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """Read from $HOME/.claude/settings.json and $HOME/.claude.json, as setup writes them."""
    home = isolated_environment
    env = {"MEMTROVE_VAULT": str(tmp_path / "v.sqlite"), "MEMTROVE_CONFIG_DIR": str(tmp_path)}
    runner = CliRunner()
    assert runner.invoke(app, ["init"], env=env).exit_code == 0
    checks = claude_checks(runner, env)
    assert {c["status"] for c in checks.values()} == {"ok"}
    assert "Claude Code is not set up" in checks["claude hooks"]["detail"]

    (home / ".claude").mkdir()
    (home / ".claude.json").write_text('{"mcpServers": {"other": {"command": "x"}}}')
    checks = claude_checks(runner, env)
    assert checks["claude hooks"]["status"] == "warn"
    assert checks["claude hooks"]["fix"] == "`memtrove setup hooks`"
    assert checks["claude mcp"]["status"] == "warn"
    assert (
        "no mcpServers.memtrove in " + str(home / ".claude.json") in checks["claude mcp"]["detail"]
    )

    assert runner.invoke(app, ["setup", "hooks"], env=env).exit_code == 0
    assert runner.invoke(app, ["setup", "mcp"], env=env).exit_code == 0
    checks = claude_checks(runner, env)
    assert checks["claude hooks"]["status"] == "ok", checks
    assert checks["claude mcp"]["status"] == "ok", checks
    assert "memtrove hooks registered" in checks["claude hooks"]["detail"]

    # registered for another vault: both say so and how to point them here
    other = {**env, "MEMTROVE_VAULT": str(tmp_path / "other.sqlite")}
    assert runner.invoke(app, ["init"], env=other).exit_code == 0
    checks = claude_checks(runner, other)
    assert checks["claude hooks"]["status"] == checks["claude mcp"]["status"] == "warn"
    assert (
        f"open {(tmp_path / 'v.sqlite').resolve()}, not this vault"
        in (checks["claude hooks"]["detail"])
    )
    assert "--vault" in checks["claude mcp"]["fix"]

    # a hook removed by hand, and an MCP command that is gone
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    del settings["hooks"]["PreCompact"]
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    claude = json.loads((home / ".claude.json").read_text())
    claude["mcpServers"]["memtrove"]["command"] = str(tmp_path / "gone" / "memtrove")
    (home / ".claude.json").write_text(json.dumps(claude))
    checks = claude_checks(runner, env)
    assert "missing precompact-extract (PreCompact)" in checks["claude hooks"]["detail"]
    assert "which is not there" in checks["claude mcp"]["detail"]

    # a file Claude Code cannot read either: named, with the line
    (home / ".claude.json").write_text("{broken")
    checks = claude_checks(runner, env)
    assert checks["claude mcp"]["status"] == "warn"
    assert "is not valid JSON (line 1" in checks["claude mcp"]["detail"]
