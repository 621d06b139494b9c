"""Secrets never reach the vault file, its side files or the agent's context: real
``memtrove`` processes index notes holding keys, answer hooks about them, remember them
and save pre-compaction state; then every byte the vault left on disk is searched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtrove.vault import Vault

SECRETS = {
    "aws": "AKIAQ3EGUQ7LAZ3KXR5N",
    "github": "ghp_R2d2C3poBb8Ewok5Han9Solo7Leia4LukeX",
    "slack webhook": "https://hooks.slack.com/services/T0LANTERN/B0FISH12/q1w2e3r4t5y6u7i8o9p0",
    "redis": "redis://:Wr3nchP1ck@cache.internal:6379/0",
    "hf": "hf_LanternfishStagingTokenAbCdEf0123456789",
    "webhook": "whsec_Lanternfish9x8y7z6w5v4u3t2s1",
    "pem body": "MIIEpAIBAAKCAQEAlanternfishkeybodyline0001",
    "env password": "hunter2-lanternfish-prod",
    "auth token": "9944b09199c62bcf9418ad846dd0e4bb",
}
# What must survive: the secret's value goes, the part that carries meaning stays.
REDIS_PASSWORD = "Wr3nchP1ck"
SLACK_PATH = "T0LANTERN/B0FISH12/q1w2e3r4t5y6u7i8o9p0"

NOTE = f"""---
title: Lanternfish staging credentials
---
# Lanternfish staging credentials

The staging deploy for lanternfish needs these; rotate them after the migration.

- S3 uploads use access key {SECRETS["aws"]}.
- The release bot pushes with {SECRETS["github"]}.
- Alerts post to {SECRETS["slack webhook"]}.
- Sessions live in {SECRETS["redis"]}.
- Model pulls use {SECRETS["hf"]} and billing webhooks are signed with {SECRETS["webhook"]}.

```
LANTERNFISH_DB_PASSWORD={SECRETS["env password"]}
curl -H "Authorization: Token {SECRETS["auth token"]}" https://api.lanternfish.dev
```

The deploy key, cut short when it was pasted:

-----BEGIN RSA PRIVATE KEY-----
{SECRETS["pem body"]}
"""


def _env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    return {
        **clean,
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "MEMTROVE_VAULT": str(tmp_path / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "config"),
        "MEMTROVE_SERVER": "off",
    }


def _memtrove(
    env: dict[str, str], *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        input=stdin,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert b"Traceback" not in done.stderr, done.stderr
    return done


def _leaks(text: str) -> list[str]:
    found = [name for name, secret in SECRETS.items() if secret in text]
    return (
        found
        + (["redis password"] if REDIS_PASSWORD in text else [])
        + (["slack path"] if SLACK_PATH in text else [])
    )


def _files_under(*folders: Path) -> list[Path]:
    return [
        path
        for folder in folders
        if folder.exists()
        for path in folder.rglob("*")
        if path.is_file()
    ]


@pytest.mark.slow
def test_no_secret_is_stored_or_injected_anywhere(tmp_path: Path) -> None:
    env = _env(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "staging-credentials.md").write_text(NOTE, encoding="utf-8")
    (notes / "unrelated.md").write_text("# Lunch\n\nTacos on Friday.\n", encoding="utf-8")
    assert _memtrove(env, "collection", "add", str(notes), "--name", "ops").returncode == 0
    assert _memtrove(env, "update").returncode == 0

    # What the agent is given: the hook's context, search and get.
    prompt = f"which access key do lanternfish S3 uploads use? my token is {SECRETS['github']}"
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n",
        encoding="utf-8",
    )
    payload = {
        "session_id": "s-secrets",
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    hook = _memtrove(env, "hook", "context-surfacing", stdin=json.dumps(payload).encode())
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Lanternfish staging credentials" in context  # the note is found ...
    assert "[REDACTED:" in context
    assert _leaks(context) == []  # ... without its secrets
    searched = _memtrove(env, "search", "lanternfish staging credentials", "--json")
    got = _memtrove(env, "get", "ops/staging-credentials.md")
    assert got.returncode == 0 and "cache.internal:6379" in got.stdout.decode()
    assert _leaks(searched.stdout.decode() + got.stdout.decode()) == []

    # Writes by the agent: remember, and the pre-compaction state of a session that pasted keys.
    remembered = _memtrove(env, "remember", "staging-db", "-", stdin=NOTE.encode())
    assert remembered.returncode == 0, remembered.stderr
    memory_dir = tmp_path / "home" / ".claude" / "projects" / "-lanternfish" / "memory"
    memory_dir.mkdir(parents=True)
    session = memory_dir.parent / "session.jsonl"
    turns = [
        {"type": "user", "message": {"role": "user", "content": f"deploy with {SECRETS['hf']}"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"We decided to use {SECRETS['redis']} for sessions."}]}},
    ]  # fmt: skip
    session.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    precompact = {"session_id": "s-secrets", "transcript_path": str(session), "cwd": str(tmp_path),
                  "hook_event_name": "PreCompact", "trigger": "auto"}  # fmt: skip
    assert (
        _memtrove(
            env, "hook", "precompact-extract", stdin=json.dumps(precompact).encode()
        ).returncode
        == 0
    )

    # Every byte left on disk: the vault and its WAL, config, caches, logs, the state file.
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    leaks = {}
    for path in _files_under(tmp_path / "cache", tmp_path / "config", memory_dir, tmp_path):
        if path.parent == notes or path in (transcript, session):
            continue  # the user's own files are never rewritten
        found = _leaks(path.read_bytes().decode("utf-8", errors="replace"))
        if found:
            leaks[str(path.relative_to(tmp_path))] = found
    assert leaks == {}


def test_redact_command_reports_then_rewrites_a_vault_that_stored_secrets(tmp_path: Path) -> None:
    env = _env(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "staging-credentials.md").write_text(NOTE, encoding="utf-8")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="ops", redact=False)  # as a vault from before
        vault.update()
    config = tmp_path / "config" / "config.yaml"
    config.write_text(config.read_text().replace("redact: false", "redact: true"))

    dry = _memtrove(env, "redact")
    assert dry.returncode == 0 and b"ops/staging-credentials.md" in dry.stdout
    assert b"memtrove redact --apply" in dry.stdout and _leaks(dry.stdout.decode()) == []
    doctor = _memtrove(env, "doctor", "--json")
    secrets = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "secrets")
    assert secrets["status"] == "warn"
    applied = _memtrove(env, "redact", "--apply", "--json")
    assert applied.returncode == 0 and json.loads(applied.stdout)["applied"] is True
    after = json.loads(_memtrove(env, "redact", "--json").stdout)
    assert after["total"] == 0
    assert _leaks((tmp_path / "vault.sqlite").read_bytes().decode("utf-8", errors="replace")) == []
    assert (notes / "staging-credentials.md").read_text(encoding="utf-8") == NOTE  # untouched
