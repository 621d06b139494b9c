"""Filling the MCP front's stored answers ahead of the first client (``setup mcp``).

One ``memtrove mcp`` process per protocol version the SDK negotiates by handshake runs
``initialize`` and ``tools/list`` (in parallel), so even the first session Claude Code opens
after an install is answered without waiting for the SDK to import. Standard library only:
the versions come from the caller.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

__all__ = ["prime_answers"]

PRIME_TIMEOUT = 60.0


def _prime_one(version: str, env: Mapping[str, str]) -> bool:
    process = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=dict(env),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        initialize: dict[str, object] = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "memtrove-setup", "version": "1"},
            },
        }
        process.stdin.write((json.dumps(initialize) + "\n").encode())
        process.stdin.flush()
        if "result" not in json.loads(process.stdout.readline() or b"{}"):
            return False
        follow_up: tuple[dict[str, object], ...] = (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
        for message in follow_up:
            process.stdin.write((json.dumps(message) + "\n").encode())
            process.stdin.flush()
        return "result" in json.loads(process.stdout.readline() or b"{}")
    except (OSError, ValueError):
        return False
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=PRIME_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def prime_answers(versions: Sequence[str], env: Mapping[str, str]) -> int:
    """Run the handshake once per version; returns how many succeeded."""
    with ThreadPoolExecutor(max_workers=max(1, len(versions))) as pool:
        return sum(pool.map(lambda version: _prime_one(version, env), versions))
