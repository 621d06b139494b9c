"""``memtrove mine`` end to end: the command as a real process (a dry run, the import, a
rerun, --json, --backfill-dates, usage errors, search -c and collection list over the mined
collection), the ``mine`` and ``import_status`` MCP tools over stdio with the official
client, and ``POST /mine`` on a running ``memtrove serve``."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.mcp_calls import call_tools
from tests.e2e.test_serve import Server, base_env, start
from tests.mine.sessions import claude_line

session_line = functools.partial(claude_line, session="e2e-session", hour="2025-04-02T09")

TOKEN = "mine-e2e-token-7c41"
CLAWMEM = Path(__file__).resolve().parents[3] / "shared" / "bench" / "clawmem-vault"


def memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mine")
    exports = folder / "exports"
    exports.mkdir()
    (exports / "e2e-session.jsonl").write_text(
        "\n".join(
            [
                session_line("u1", None, "user", "Which queue should the billing worker use?", 0),
                session_line(
                    "a1", "u1", "assistant", "The durable billing queue, with retries.", 1
                ),
                session_line("u2", "a1", "user", "And what is the retry limit for invoices?", 2),
                session_line(
                    "a2", "u2", "assistant", "Five attempts, then the dead letter queue.", 3
                ),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    (exports / "chat.txt").write_text(
        "User: What did we pick for the search index?\nAssistant: SQLite FTS5 in the vault.\n"
        "User: And for vectors?\nAssistant: sqlite-vec, cosine distance, in the same file.\n",
        encoding="utf-8",
    )
    (exports / "notes.md").write_text("# Not a chat\n\nJust a note.\n", encoding="utf-8")
    return folder


def test_the_command(home: Path) -> None:
    env = base_env(home)
    exports = str(home / "exports")
    dry = memtrove(env, "mine", exports, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    answer = json.loads(dry.stdout)
    assert (answer["dryRun"], answer["written"], answer["exchanges"]) == (True, 4, 4)
    assert answer["unrecognised"] == ["notes.md"]
    assert answer["formats"]["claude-code"] == {"files": 1, "conversations": 1, "exchanges": 2}
    assert answer["formats"]["text"] == {"files": 1, "conversations": 1, "exchanges": 2}

    first = memtrove(env, "mine", exports)
    assert first.returncode == 0, first.stderr
    assert "wrote 4, unchanged 0" in first.stdout and "unrecognised: 1 files" in first.stdout
    again = json.loads(memtrove(env, "mine", exports, "--json").stdout)
    assert (again["written"], again["unchanged"]) == (0, 4)

    found = memtrove(env, "search", "retry limit invoices", "-c", "conversations", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    results = hits["results"] if isinstance(hits, dict) else hits
    assert results and results[0]["title"] == "And what is the retry limit for invoices?"
    listed = memtrove(env, "collection", "list", "--json")
    assert {"name": "conversations", "documents": 4} in [
        {"name": c["name"], "documents": c["documents"]} for c in json.loads(listed.stdout)
    ]

    backfill = memtrove(env, "mine", exports, "--backfill-dates", "--json")
    assert backfill.returncode == 0, backfill.stderr
    assert json.loads(backfill.stdout)["undated"] == 2  # the plain-text exchanges have no time

    for bad, code, message in (
        (["--format", "fax"], 2, "--format must be one of"),
        (["--apply"], 2, "--apply goes with --backfill-dates"),
        (["--since", "yesterday-ish"], 1, "is not a date"),
        (["-c", "Not A Name"], 1, "invalid collection name"),
    ):
        failed = memtrove(env, "mine", exports, *bad)
        assert failed.returncode == code and message in failed.stderr, failed.stderr
        assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr
    missing = memtrove(env, "mine", str(home / "nowhere"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr


MINE = CLAWMEM.parent / "mine"


@pytest.mark.skipif(not (MINE / "codex").is_dir(), reason="no recorded exports here")
def test_clawmems_format_names_read_as_ours(home: Path) -> None:
    """``--format codex-cli`` and ``plain-text`` (ClawMem's names) read what ``codex`` and
    ``text`` read, on the recorded real exports."""
    env = base_env(home)
    for folder, theirs, ours in (
        ("codex", "codex-cli", "codex"),
        ("plain-text", "plain-text", "text"),
    ):
        counted = []
        for name in (theirs, ours):
            done = memtrove(
                env, "mine", str(MINE / folder), "--format", name, "--dry-run", "--json"
            )
            assert done.returncode == 0, done.stderr
            counted.append(json.loads(done.stdout))
        assert counted[0]["exchanges"] == counted[1]["exchanges"] > 0
        assert counted[0]["formats"] == counted[1]["formats"] and ours in counted[0]["formats"]


@pytest.mark.skipif(not (CLAWMEM / "index.sqlite").is_file(), reason="no ClawMem vault here")
def test_import_clawmem_refuses_a_name_taken_by_another_folder(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nSpring release.\n", encoding="utf-8")
    added = memtrove(env, "collection", "add", str(notes), "--name", "goprop")
    assert added.returncode == 0, added.stderr
    refused = memtrove(env, "import", "clawmem", str(CLAWMEM))
    assert refused.returncode == 1, refused.stderr
    assert "'goprop'" in refused.stderr and "--rename goprop=goprop-clawmem" in refused.stderr
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    bad = memtrove(env, "import", "clawmem", str(CLAWMEM), "--rename", "goprop")
    assert bad.returncode == 2 and "--rename takes OLD=NEW" in bad.stderr
    renamed = memtrove(
        env, "import", "clawmem", str(CLAWMEM), "--rename", "goprop=goprop-clawmem", "--json"
    )
    assert renamed.returncode == 0, renamed.stderr
    assert json.loads(renamed.stdout)["documents"]["added"] == 38


def test_the_mcp_tools(home: Path, tmp_path: Path) -> None:
    exports = str(home / "exports")
    listed, answers = call_tools(
        base_env(home),
        {
            "dry": ("mine", {"path": exports, "collection": "mcp-chats"}),
            "write": ("mine", {"path": exports, "collection": "mcp-chats", "dry_run": False}),
            "status": ("import_status", {"collection": "mcp-chats"}),
            "search": ("search", {"query": "billing queue retries", "collection": "mcp-chats"}),
            "bad": ("mine", {"path": exports, "format": "fax"}),
            "missing": ("mine", {"path": ""}),
            "limit": ("import_status", {"limit": 0}),
            "synth_dry": ("mine", {"path": exports, "synthesize": True}),
            "synth": (
                "mine",
                {"path": exports, "collection": "mcp-synth", "dry_run": False, "synthesize": True},
            ),
        },
        tmp_path / "stderr.txt",
    )
    assert {"mine", "import_status"} <= listed
    dry = answers["dry"].structured_content
    assert dry["dryRun"] is True and dry["written"] == 4
    write = answers["write"].structured_content
    assert (write["dryRun"], write["written"]) == (False, 4)
    status = answers["status"].structured_content
    assert [run["written"] for run in status["runs"]] == [4]  # the dry run is not recorded
    assert {"name": "mcp-chats", "source": exports} in status["collections"]
    assert not answers["search"].is_error, answers["search"].content[0].text
    synth = answers["synth"].structured_content
    assert synth["written"] == 4 and synth["synthesis"]["llm"] is False  # no LLM: imports only
    assert "dry_run=false" in answers["synth_dry"].content[0].text
    for name in ("bad", "missing", "limit", "synth_dry"):
        result = answers[name]
        assert result.is_error and "\n" not in result.content[0].text, name
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[Server]:
    running = start(
        {**base_env(home), "MEMTROVE_API_TOKEN": TOKEN}, "--port", "0", log=home / "serve.log"
    )
    yield running
    assert running.stop() == 0
    assert "Traceback" not in running.log.read_text()


def test_the_rest_route(home: Path, server: Server) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    exports = str(home / "exports")
    with httpx.Client(base_url=server.url, timeout=60, headers=headers) as http:
        answer = http.post("/mine", json={"path": exports, "collection": "rest-chats"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["written"] == 4
        runs = http.get("/mine/runs", params={"limit": 5}).json()
        assert runs["runs"][0]["collection"] == "rest-chats"
        missing = http.post("/mine", json={"path": str(home / "nowhere")})
        assert missing.status_code == 400 and "does not exist" in missing.json()["error"]
        for refused in ("x" * 100_000, "/a" * 3000):  # the system's refusal is the user's error
            too_long = http.post("/mine", json={"path": refused, "dry_run": True})
            assert too_long.status_code == 400, too_long.text[:300]
            assert "File name too long" in too_long.json()["error"]
            assert len(too_long.json()["error"]) < 300
        bad = http.post("/mine", json={"path": exports, "format": "fax"})
        assert bad.status_code == 400 and "unknown format" in bad.json()["error"]
        assert http.post("/mine", json={"path": exports, "extra": 1}).status_code == 422
        synth = http.post(
            "/mine", json={"path": exports, "collection": "rest-synth", "synthesize": True}
        )
        assert synth.status_code == 200, synth.text
        assert synth.json()["synthesis"]["llm"] is False and synth.json()["written"] == 4
        both = http.post("/mine", json={"path": exports, "synthesize": True, "dry_run": True})
        assert both.status_code == 400 and "not with dry_run" in both.json()["error"]
        assert httpx.post(server.url + "/mine", json={"path": exports}).status_code == 401
