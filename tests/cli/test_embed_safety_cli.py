"""The geometry canary through the CLI: ``embed`` (``--force-geometry``, ``--force
--recalibrate-canary``), the taint that ``doctor`` and ``status`` report, and ``doctor``'s
re-validation of stored vectors; on SQLite and PostgreSQL, with the loopback fake embedding
service playing a server whose model changes under the same name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memtrove.cli import app
from tests.conftest import ENGINES, write
from tests.fakes.model_server import ModelServer
from tests.postgres_server import vault_schema

NOTES = {
    "bread.md": "# Sourdough\n\nFeed the starter flour and water, then bake the loaf hot.\n",
    "herons.md": "# Herons\n\nA grey heron stood by the canal at dawn, hunting fish.\n",
    "deploy.md": "# Deploys\n\nDeploy on Tuesdays after the release script tags the commit.\n",
}


@pytest.fixture(params=ENGINES)
def cli(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    model_server: ModelServer,
) -> Iterator[CliRunner]:
    """A CLI whose vault (SQLite file or PostgreSQL schema) indexes three notes, with the
    fake service as its embedder."""
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MEMTROVE_EMBED_URL", model_server.url)
    notes = tmp_path / "notes"
    for name, text in NOTES.items():
        write(notes, name, text)

    def ready() -> CliRunner:
        runner = CliRunner()
        run(runner, "bootstrap", str(notes), "--name", "notes", "--skip-embed")
        return runner

    if request.param == "sqlite":
        monkeypatch.setenv("MEMTROVE_VAULT", str(tmp_path / "vault.sqlite"))
        yield ready()
        return
    with vault_schema() as location:
        monkeypatch.setenv("MEMTROVE_VAULT", location)
        yield ready()


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


def embed_json(cli: CliRunner, *args: str, code: int = 0) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run(cli, "embed", "--json", *args, code=code))
    return data


def checks(cli: CliRunner) -> dict[str, dict[str, str]]:
    """doctor's checks by name (whatever its exit status)."""
    result = cli.invoke(app, ["doctor", "--json"])
    assert "Traceback" not in result.output + result.stderr
    report = json.loads(result.stdout)
    assert result.exit_code == (0 if report["ok"] else 1)
    return {check["name"]: check for check in report["checks"]}


def status(cli: CliRunner) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run(cli, "status", "--json"))
    return data


def test_the_first_run_calibrates_and_later_runs_compare(cli: CliRunner) -> None:
    first = embed_json(cli)
    assert first["fragments"] > 0 and first["errors"] == []
    assert first["canary"]["passed"] and first["canary"]["baseline"] is None
    assert set(first["canary"]["margins"]) == {"pair", "echo", "terminus", "truncation"}
    assert min(first["canary"]["margins"].values()) >= 0.10
    second = embed_json(cli)
    assert second["canary"]["passed"] and second["canary"]["baseline"] is not None
    assert min(second["canary"]["drift"].values()) > 0.9999  # the same service, unchanged
    found = checks(cli)
    assert found["geometry taint"]["status"] == "ok"
    assert found["geometry canary"]["status"] == "ok"
    assert found["stored vectors"]["status"] == "ok"
    assert "sampled vectors re-embedded" in found["stored vectors"]["detail"]
    assert status(cli)["geometry_taint"] is None


def test_a_changed_geometry_is_refused_and_taints_the_vault(
    cli: CliRunner, model_server: ModelServer, tmp_path: Path
) -> None:
    embed_json(cli)
    vectors = status(cli)["vectors"]
    model_server.geometry = "another build"  # same model name, other vectors
    write(tmp_path / "notes", "kites.md", "# Kites\n\nA red kite circled over the hill.\n")
    run(cli, "update")
    message = error(cli, "embed")
    assert "geometry changed" in message and "drifted" in message
    assert "--force-geometry" in message and "--force --recalibrate-canary" in message
    assert status(cli)["vectors"] == vectors  # nothing written
    taint = status(cli)["geometry_taint"]
    assert taint is not None and "no vector was written" in taint
    assert "TAINTED" in run(cli, "status")
    found = checks(cli)
    assert found["geometry taint"]["status"] == "fail"
    assert found["geometry canary"]["status"] == "fail"
    assert "drifted" in found["geometry canary"]["detail"]
    # The stored vectors no longer match what the service makes of their text.
    assert found["stored vectors"]["status"] == "fail"
    assert "differ from a fresh embedding" in found["stored vectors"]["detail"]
    # The service comes back as it was: a plain run passes and clears the taint, since no
    # vector was written under it.
    model_server.geometry = ""
    assert embed_json(cli)["fragments"] > 0
    assert status(cli)["geometry_taint"] is None
    assert checks(cli)["geometry taint"]["status"] == "ok"


def test_force_geometry_writes_and_recalibrating_clears(
    cli: CliRunner, model_server: ModelServer, tmp_path: Path
) -> None:
    embed_json(cli)
    model_server.geometry = "another build"
    write(tmp_path / "notes", "kites.md", "# Kites\n\nA red kite circled over the hill.\n")
    run(cli, "update")
    accepted = embed_json(cli, "--force-geometry", code=1)
    assert accepted["fragments"] > 0 and not accepted["canary"]["passed"]
    assert accepted["geometry_taint"] and "--force-geometry" in accepted["geometry_taint"]
    taint = status(cli)["geometry_taint"]
    assert taint is not None and "vectors were written" in taint
    # A refused run cannot make vectors written under the taint sound again.
    error(cli, "embed")
    assert "vectors were written" in status(cli)["geometry_taint"]
    assert "--force" in checks(cli)["geometry taint"]["fix"]
    # Recalibrating needs a full re-embed.
    assert "needs --force" in error(cli, "embed", "--recalibrate-canary")
    rebuilt = embed_json(cli, "--force", "--recalibrate-canary")
    assert (
        rebuilt["forced"] and rebuilt["canary"]["passed"] and rebuilt["canary"]["baseline"] is None
    )
    assert rebuilt["errors"] == [] and rebuilt["geometry_taint"] is None
    assert status(cli)["geometry_taint"] is None
    # The new baseline is the one compared with from now on.
    again = embed_json(cli)
    assert again["canary"]["passed"] and min(again["canary"]["drift"].values()) > 0.9999
    found = checks(cli)
    assert {
        found[name]["status"] for name in ("geometry taint", "geometry canary", "stored vectors")
    } == {"ok"}


def test_a_collapsed_model_is_refused_without_any_baseline(
    cli: CliRunner, model_server: ModelServer
) -> None:
    model_server.blur = 0.97  # every text points almost the same way
    message = error(cli, "embed")
    assert "margin" in message and "nothing was written" in message
    assert status(cli)["vectors"] == 0
    # Recalibrating judges the probes on their own margins: it is refused too.
    assert "margin" in error(cli, "embed", "--force", "--recalibrate-canary")
    model_server.blur = 0.0
    assert embed_json(cli)["canary"]["passed"]
    assert status(cli)["geometry_taint"] is None
