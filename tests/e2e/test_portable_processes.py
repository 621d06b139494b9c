"""Export, import and ``import clawmem`` as users run them: real ``memtrove`` processes on
real vault files, and ``GET /export`` from a running ``memtrove serve``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import EXAMPLES
from tests.e2e.test_serve import base_env, start

CLAWMEM = Path(__file__).resolve().parents[3] / "shared" / "bench" / "clawmem-vault"


def memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _ok(env: dict[str, str], *args: str) -> str:
    result = memtrove(env, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _without_time(text: str) -> list[str]:
    lines = text.splitlines()
    header = json.loads(lines[0])
    del header["exported_at"]
    return [json.dumps(header, sort_keys=True), *lines[1:]]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("portable")
    env = base_env(home)
    _ok(env, "bootstrap", str(EXAMPLES), "--name", "demo", "--skip-embed")
    _ok(
        env,
        "remember",
        "deploy rule",
        "Deploy on Wednesdays after the freeze.",
        "--store",
        "global",
    )
    return home


def test_export_then_import_into_a_new_vault(source: Path, tmp_path: Path) -> None:
    env = base_env(source)
    report = json.loads(_ok(env, "export", str(tmp_path / "vault.jsonl"), "--json"))
    assert report["records"] > 60
    target = {**base_env(tmp_path), "MEMTROVE_VAULT": str(tmp_path / "new.sqlite")}
    imported = json.loads(
        _ok(target, "import", str(tmp_path / "vault.jsonl"), "--map", f"demo={EXAMPLES}", "--json")
    )
    assert imported["records"]["documents"] == 31 and imported["collections_added"] == ["demo"]
    for query in ("refresh token race", "deploy wednesdays"):
        assert _ok(target, "search", query, "--json") == _ok(env, "search", query, "--json")

    again = memtrove(target, "import", str(tmp_path / "vault.jsonl"))
    assert again.returncode == 1 and again.stdout == ""
    assert again.stderr.count("\n") == 1 and "already holds data" in again.stderr
    merged = json.loads(_ok(target, "import", str(tmp_path / "vault.jsonl"), "--merge", "--json"))
    assert not any(merged["added"].values())  # everything in the file is there already

    data = (tmp_path / "vault.jsonl").read_bytes()
    (tmp_path / "cut.jsonl").write_bytes(data[: len(data) * 2 // 3])
    fresh = {**target, "MEMTROVE_VAULT": str(tmp_path / "fresh.sqlite")}
    cut = memtrove(fresh, "import", str(tmp_path / "cut.jsonl"))
    line = data[: len(data) * 2 // 3].count(b"\n") + 1
    assert cut.returncode == 1 and cut.stderr.count("\n") == 1
    assert cut.stderr.startswith(f"memtrove: error: line {line}: not valid JSON")
    assert json.loads(_ok(fresh, "status", "--json"))["documents"] == 0

    usage = memtrove(fresh, "import", str(tmp_path / "vault.jsonl"), "extra")
    assert usage.returncode == 2 and usage.stderr.startswith("memtrove: error: usage:")


def test_rest_export_streams_the_same_lines(source: Path, tmp_path: Path) -> None:
    env = base_env(source)
    _ok(env, "export", str(tmp_path / "cli.jsonl"))
    server = start(env, "--port", "0", log=tmp_path / "serve.log")
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            answer = client.get("/export")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/x-ndjson")
    finally:
        assert server.stop() == 0
    assert _without_time(answer.text) == _without_time((tmp_path / "cli.jsonl").read_text())


@pytest.mark.skipif(not (CLAWMEM / "index.sqlite").is_file(), reason="no ClawMem vault here")
def test_import_clawmem_twice(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    first = json.loads(_ok(env, "import", "clawmem", str(CLAWMEM), "--json"))
    assert first["documents"]["added"] == 38 and first["records"]["recall_events"] == 3
    assert "documents.normalized_hash" in first["not_mapped"]
    text = _ok(env, "import", "clawmem", str(CLAWMEM))
    assert text.startswith(f"imported from {CLAWMEM / 'index.sqlite'}: documents +0 ~0 =38")
    hits = json.loads(_ok(env, "search", "Spring Initializr dependencies", "--json"))
    assert hits["results"][0]["collection"] == "chats"
    missing = memtrove(env, "import", "clawmem", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "no ClawMem vault" in missing.stderr
