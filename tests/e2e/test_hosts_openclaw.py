"""``memtrove setup openclaw`` (real processes, HOME and OPENCLAW_STATE_DIR in tmp) and the
plugin it installs, driven by node as OpenClaw's plugin host drives it: ``register(api)``
with a stand-in api, then its event handlers and tools against a real ``memtrove serve``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_serve import TOKEN, Server, base_env, start

TOOLS = ["memtrove_search", "memtrove_get", "memtrove_session_log", "memtrove_timeline",
         "memtrove_similar"]  # fmt: skip
PROMPT = "Why did the thumbnail worker run out of memory after the pyvips switch?"
SESSION = "openclaw-5be2"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "openclaw"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def setup(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", "setup", "openclaw", *arguments],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def env(isolated_environment: Path, tmp_path: Path) -> dict[str, str]:
    """The test's HOME (tests/conftest.py), its own vault, OpenClaw's state in tmp_path."""
    return {**base_env(isolated_environment), "OPENCLAW_STATE_DIR": str(tmp_path / "oc-state")}


def test_install_keeps_the_config_backs_it_up_and_remove_undoes_it(
    env: dict[str, str],
) -> None:
    state = Path(env["OPENCLAW_STATE_DIR"])
    state.mkdir()
    original = {
        "gateway": {"port": 18789},
        "plugins": {"allow": ["telegram"], "slots": {"contextEngine": "memtrove"},
                    "entries": {"telegram": {"enabled": True}}},
    }  # fmt: skip
    config = state / "openclaw.json"
    config.write_text(json.dumps(original), encoding="utf-8")
    done = setup(env)
    assert done.returncode == 0, done.stderr
    data = json.loads(config.read_text())
    plugins = data["plugins"]
    assert data["gateway"] == {"port": 18789} and plugins["entries"]["telegram"] == {
        "enabled": True
    }
    assert plugins["allow"] == ["telegram", "memtrove"]
    assert plugins["slots"] == {"contextEngine": "legacy", "memory": "memtrove"}
    entry = plugins["entries"]["memtrove"]
    assert entry["enabled"] is True and Path(entry["config"]["memtroveBin"]).name == "memtrove"
    assert entry["config"]["env"]["MEMTROVE_VAULT"] == env["MEMTROVE_VAULT"]
    backups = list(state.glob("openclaw.json.memtrove-backup*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == original
    folder = state / "extensions" / "memtrove"
    manifest = json.loads((folder / "openclaw.plugin.json").read_text())
    assert manifest["id"] == "memtrove" and manifest["kind"] == "memory"
    assert manifest["contracts"]["tools"] == TOOLS  # OpenClaw drops tools not declared here
    package = json.loads((folder / "package.json").read_text())
    assert package["openclaw"]["extensions"] == ["./index.js"]
    again = setup(env)
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert len(list(state.glob("openclaw.json.memtrove-backup*"))) == 1
    removed = setup(env, "--remove")
    assert removed.returncode == 0, removed.stderr
    assert not folder.exists()
    after = json.loads(config.read_text())["plugins"]
    assert "memtrove" not in after["entries"] and after["allow"] == ["telegram"]
    assert after["slots"] == {"contextEngine": "legacy"}


def test_without_a_state_dir_it_uses_home(env: dict[str, str]) -> None:
    del env["OPENCLAW_STATE_DIR"]
    done = setup(env)
    assert done.returncode == 0, done.stderr
    home = Path(env["HOME"])
    assert (home / ".openclaw" / "extensions" / "memtrove" / "index.js").is_file()
    assert json.loads((home / ".openclaw" / "openclaw.json").read_text())["plugins"]["slots"] == {
        "memory": "memtrove"
    }
    # examples/openclaw/openclaw.json shows what setup writes (the command's path aside)
    written = json.loads((home / ".openclaw" / "openclaw.json").read_text())
    written["plugins"]["entries"]["memtrove"]["config"].pop("env", None)
    written["plugins"]["entries"]["memtrove"]["config"]["memtroveBin"] = "memtrove"
    assert written == json.loads((EXAMPLE / "openclaw.json").read_text())
    assert setup(env, "--remove").returncode == 0
    assert setup(env, "--remove").returncode == 0  # nothing left to remove is no error


@pytest.mark.parametrize(
    "text",
    ['{\n  // JSON5: a comment\n  plugins: {},\n}\n', "[1, 2]", '{"plugins": []}',
     '{"plugins": {"slots": "memory"}}', "\ufeff\x00\xff"],
)  # fmt: skip
def test_a_config_it_cannot_edit_is_never_touched(env: dict[str, str], text: str) -> None:
    state = Path(env["OPENCLAW_STATE_DIR"])
    state.mkdir()
    (state / "openclaw.json").write_text(text, encoding="utf-8")
    for arguments in ([], ["--remove"]):
        done = setup(env, *arguments)
        if not arguments:  # installing refuses; removing finds nothing of ours or refuses too
            assert done.returncode == 1
        if done.returncode:
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("memtrove: error: "), done.stderr
        assert (state / "openclaw.json").read_text(encoding="utf-8") == text
        assert not (state / "extensions").exists()
        assert not list(state.glob("*.memtrove-backup*"))


def test_a_plugin_folder_memtrove_did_not_write_is_left_alone(env: dict[str, str]) -> None:
    folder = Path(env["OPENCLAW_STATE_DIR"]) / "extensions" / "memtrove"
    folder.mkdir(parents=True)
    (folder / "index.js").write_text("// someone else's\n", encoding="utf-8")
    for arguments in ([], ["--remove"]):
        done = setup(env, *arguments)
        assert (folder / "index.js").read_text() == "// someone else's\n"
        assert done.returncode == (1 if not arguments else 0), done.stderr
    assert "not installed by memtrove" in done.stdout


# ---- the installed plugin, driven by node -----------------------------------------------

# OpenClaw's plugin api as the plugin uses it: register(api) with api.pluginConfig, api.on(name,
# handler, options), api.registerTool(tool, {name}), api.registerMemoryCapability(...);
# handlers get (event, ctx): session_start ({sessionId}, {sessionId}), before_prompt_build
# ({prompt, messages}, {sessionId, workspaceDir}) answering {prependContext}, agent_end
# ({messages, success}, {sessionId}); a tool's execute(callId, params) answers {content}.
DRIVER = """
const [pluginPath, config, prompt, session] = process.argv.slice(1);
const plugin = (await import(pluginPath)).default;
const handlers = {}, tools = {}, capabilities = [];
plugin.register({
  pluginConfig: JSON.parse(config),
  logger: { info() {}, warn() {}, error() {}, debug() {} },
  on: (name, handler) => { handlers[name] = handler; },
  registerTool: (tool, options) => { tools[options.name] = tool; },
  registerMemoryCapability: (capability) => capabilities.push(capability),
});
await handlers.session_start({ sessionId: session }, { sessionId: session });
const built = await handlers.before_prompt_build(
  { prompt, messages: [] }, { sessionId: session, workspaceDir: process.cwd() });
const second = await handlers.before_prompt_build(
  { prompt: "ok", messages: [] }, { sessionId: session });
const text = async (name, params) => (await tools[name].execute("call-1", params)).content[0].text;
const search = await text("memtrove_search", { query: "pyvips thumbnail worker memory" });
const docid = /#([0-9a-f]{6,})/.exec(search)[1];
const said = [
  { role: "user", content: prompt },
  { role: "assistant", content: [{ type: "text", text: "pyvips kept 16 jobs; we decided to cap its cache." }] },
  { role: "user", content: "Also fix the retry loop in the uploader." },
  { role: "assistant", content: "Done: fixed uploader/retry.py. Next: load-test the import." },
];
await handlers.agent_end({ messages: said, success: true }, { sessionId: session });
console.log(JSON.stringify({
  tools: Object.keys(tools), capabilities: capabilities.length,
  handlers: Object.keys(handlers).sort(), built, second: second ?? null, search,
  get: await text("memtrove_get", { docid }),
  sessions: await text("memtrove_session_log", { limit: 10 }),
  timeline: await text("memtrove_timeline", { docid, before: 2, after: 2 }),
  similar: await text("memtrove_similar", { docid, limit: 3 }),
  missing: await text("memtrove_get", { docid: "../../etc" }),
}));
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Server]]:
    from tests.conftest import EXAMPLES

    home = tmp_path_factory.mktemp("openclaw")
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


@needs_node
def test_the_installed_plugin_surfaces_captures_and_answers_its_tools(
    served: tuple[Path, Server], tmp_path: Path
) -> None:
    home, server = served
    env = {**base_env(home), "OPENCLAW_STATE_DIR": str(tmp_path / "state")}
    assert setup(env).returncode == 0
    folder = tmp_path / "state" / "extensions" / "memtrove"
    checked = subprocess.run(["node", "--check", str(folder / "index.js")], capture_output=True)
    assert checked.returncode == 0, checked.stderr
    entry = json.loads((tmp_path / "state" / "openclaw.json").read_text())["plugins"]["entries"]
    config = {**entry["memtrove"]["config"], "servePort": int(server.url.rsplit(":", 1)[1])}
    node_env = {**env, "MEMTROVE_API_TOKEN": TOKEN}
    done = subprocess.run(
        ["node", "--input-type=module", "-e", DRIVER, (folder / "index.js").as_uri(),
         json.dumps(config), PROMPT, SESSION],
        env=node_env, cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    manifest = json.loads((folder / "openclaw.plugin.json").read_text())
    assert out["tools"] == manifest["contracts"]["tools"] == TOOLS and out["capabilities"] == 1
    assert {"agent_end", "before_compaction", "before_prompt_build", "session_start"} <= set(
        out["handlers"]
    )
    context = out["built"]["prependContext"]
    assert context.startswith("<vault-session>") and "<vault-context>" in context
    assert "thumbnail-worker-memory-leak" in context
    assert out["second"] is None  # a short prompt, and the bootstrap only once
    # each tool's text shows the fields it reads from the REST answers: no "undefined"
    for name in ("search", "get", "sessions", "timeline", "similar"):
        assert "undefined" not in out[name] and "failed" not in out[name].lower(), out[name]
    assert out["search"].startswith("Found ") and "[problem]" in out["search"]
    assert "Modified: 20" in out["get"] and "Collection: demo" in out["get"]
    assert f"{SESSION[:8]} - 1 prompts" in out["sessions"]
    assert "-> " in out["timeline"] and "(similarity: " in out["similar"]
    assert out["missing"].startswith("Document not found")
    logged = subprocess.run(
        [sys.executable, "-m", "memtrove", "log", "--json"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert logged.returncode == 0, logged.stderr
    assert SESSION in logged.stdout and "handoff" in logged.stdout  # agent_end ran the Stop hooks


def test_no_machine_paths_in_the_shipped_plugin() -> None:
    import memtrove

    shipped = Path(memtrove.__file__).parent / "agents"
    for path in [*shipped.rglob("*.js"), *shipped.rglob("*.json"), *shipped.rglob("*.md")]:
        text = path.read_text(encoding="utf-8")
        assert "/home/" not in text and "/work/" not in text and os.sep + "tmp" not in text, path
