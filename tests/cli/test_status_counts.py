"""``memtrove status``: unembedded documents, whether vectors exist, logged sessions; and the
session-start hook recording the session with the host it runs on (``memtrove log``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from memtrove.cli import app
from tests.conftest import write

PAYLOAD = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"


def run(cli: CliRunner, *args: str) -> str:
    result = cli.invoke(app, list(args))
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def session_start(tmp_path: Path) -> dict[str, object]:
    """``memtrove hook session-start`` in its own process, on a recorded payload."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")},
        "MEMTROVE_VAULT": str(tmp_path / "cli" / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "cli" / "config"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", "hook", "session-start"],
        input=(PAYLOAD / "session_start_startup.json").read_bytes(),
        capture_output=True,
        env=env,
        timeout=60,
        check=True,
    )
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_status_counts_unembedded_vectors_and_sessions(cli: CliRunner, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write(notes, "a.md", "# Ospreys\n\nOspreys dive feet first.\n")
    write(notes, "b.md", "# Herons\n\nHerons wait in the shallows.\n")
    run(cli, "collection", "add", str(notes), "--name", "birds")
    run(cli, "update")
    status = json.loads(run(cli, "status", "--json"))
    assert (status["unembedded"], status["has_vectors"], status["vectors"]) == (2, False, 0)
    assert status["sessions"] == 0
    text = run(cli, "status")
    assert "vectors     0: run `memtrove embed`, 2 documents unembedded\n" in text
    assert "sessions    0 logged\n" in text

    run(cli, "embed")
    answer = session_start(tmp_path)
    assert "hookSpecificOutput" in answer
    status = json.loads(run(cli, "status", "--json"))
    assert status["unembedded"] == 0 and status["has_vectors"] is True and status["vectors"] > 0
    assert status["sessions"] == 1
    text = run(cli, "status")
    assert "documents unembedded" not in text and "sessions    1 logged\n" in text

    [logged] = json.loads(run(cli, "log", "--json"))
    assert logged["session_id"] == "5d1c2c8e-6f0b-4c5e-9a52-0c4f1d9a7e11"
    assert logged["machine"] == socket.gethostname()
    session_start(tmp_path)  # the same session starting again (resume) stays one row
    assert json.loads(run(cli, "status", "--json"))["sessions"] == 1
