"""The opencode plugin (examples/opencode/memtrove.js) driven by node as opencode drives it:
its hooks called with opencode-shaped arguments, a stand-in for opencode's SDK client, and
real ``memtrove`` processes behind them. opencode itself is not needed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memtrove.vault import Vault
from tests.hooks.conftest import (  # noqa: F401  (fixtures)
    hook_env,
    surfacing_vault,
    template_vault,
)

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "opencode" / "memtrove.js"
PROMPT = "Why did the thumbnail worker run out of memory after the pyvips switch?"
SESSION = "ses_7f3a2c91d0e4"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

# What opencode hands the plugin (the @opencode-ai/plugin Hooks interface): chat.message gets
# ({sessionID, agent, model, messageID}, {message, parts}); experimental.chat.system.transform
# gets ({sessionID}, {system: string[]}); event gets {event: {type, properties}};
# client.session.messages({path: {id}}) answers {data: [{info: {role}, parts}]}.
DRIVER = """
const [plugin, prompt, session, messages] = process.argv.slice(1);
const { MemtrovePlugin } = await import(plugin);
const client = { session: { messages: async () => ({ data: JSON.parse(messages) }) } };
const hooks = await MemtrovePlugin({ client, directory: process.cwd(), project: {}, worktree: "" });
await hooks["chat.message"](
  { sessionID: session, agent: "build", messageID: "msg_1" },
  { message: { id: "msg_1", role: "user" },
    parts: [{ type: "text", text: prompt }, { type: "text", text: "<x/>", synthetic: true }] },
);
const output = { system: ["You are opencode."] };
await hooks["experimental.chat.system.transform"]({ sessionID: session }, output);
const other = { system: [] };
await hooks["experimental.chat.system.transform"]({ sessionID: "ses_other" }, other);
await hooks.event({ event: { type: "session.idle", properties: { sessionID: session } } });
await hooks.event({ event: { type: "file.edited", properties: {} } });
console.log(JSON.stringify({ system: output.system, other: other.system }));
"""


def conversation() -> list[dict[str, Any]]:
    said = [
        ("user", PROMPT),
        ("assistant", "The worker kept 16 pyvips jobs alive and the operation cache grew; "
                      "we decided to cap pyvips' cache and lower max_jobs to 4."),
        ("user", "Good. Write that down and also fix the retry loop in the uploader."),
        ("assistant", "Done: capped the cache in worker/settings.py and fixed the retry loop "
                      "in uploader/retry.py. Next step: load-test the bulk import again."),
    ]  # fmt: skip
    return [
        {"info": {"role": role, "id": f"msg_{n}"}, "parts": [{"type": "text", "text": text}]}
        for n, (role, text) in enumerate(said)
    ]


def drive(env: dict[str, str], cwd: Path, messages: list[dict[str, Any]]) -> dict[str, Any]:
    done = subprocess.run(
        ["node", "--input-type=module", "-e", DRIVER, PLUGIN.as_uri(), PROMPT, SESSION,
         json.dumps(messages)],
        env=env, cwd=cwd, capture_output=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


def node_env(hook_env: dict[str, str], **extra: str) -> dict[str, str]:  # noqa: F811
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    memtrove = Path(sys.executable).parent / "memtrove"
    return {**clean, **hook_env, "MEMTROVE_BIN": str(memtrove), **extra}


def test_the_plugin_file_is_valid_javascript() -> None:
    done = subprocess.run(["node", "--check", str(PLUGIN)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()


def test_a_turn_surfaces_context_and_idle_writes_the_handoff(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    answer = drive(node_env(hook_env), tmp_path, conversation())
    added = answer["system"][1:]
    assert answer["system"][0] == "You are opencode." and len(added) == 1
    assert "<vault-context>" in added[0] and "thumbnail-worker-memory-leak" in added[0]
    assert "<vault-session>" in added[0]  # the first turn of the session also bootstraps it
    assert "<x/>" not in added[0] and answer["other"] == []  # per session, synthetic parts out
    with Vault.open(hook_env["MEMTROVE_VAULT"], config_dir=hook_env["MEMTROVE_CONFIG_DIR"]) as v:
        sessions = {s.session_id: s for s in v.sessions.session_log(10)}
    assert sessions[SESSION].turns == 1  # the surfaced prompt was counted for the session
    assert sessions[SESSION].handoff_path  # session.idle ran handoff-generator on the transcript


def test_hostile_messages_and_a_missing_memtrove_fail_open(
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    hostile: list[Any] = [None, 7, {"info": None}, {"info": {"role": "user"}, "parts": "x"},
                          {"info": {"role": "system"}, "parts": [{"type": "text", "text": "a"}]}]  # fmt: skip
    answer = drive(node_env(hook_env), tmp_path, hostile)
    assert "<vault-context>" in answer["system"][1]  # the turn itself still surfaced
    missing = node_env(hook_env, MEMTROVE_BIN=str(tmp_path / "no-such-memtrove"))
    answer = drive(missing, tmp_path, conversation())
    assert answer == {"system": ["You are opencode."], "other": []}
