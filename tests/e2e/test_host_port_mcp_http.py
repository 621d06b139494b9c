"""``mcp --http`` takes only its own origin: a loopback name with its own port, no other
port (the SDK's default took any ``localhost:*``), no other host."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.test_mcp_stdio import environment, free_port

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    root = tmp_path_factory.mktemp("http")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "memtrove", "mcp", "--http", "--port", str(port)],
        env=environment(root),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "memtrove mcp --http did not start"
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def _post(port: int, headers: dict[str, str]) -> int:
    answer = httpx.post(
        f"http://127.0.0.1:{port}/mcp",
        content=json.dumps(INITIALIZE),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        timeout=30,
    )
    return answer.status_code


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:{other}",
        "http://127.0.0.1:{other}",
        "http://[::1]:{other}",
        "http://localhost",
        "http://evil.example:{port}",
        "https://localhost:{other}",
        "null",
    ],
)
def test_a_foreign_origin_is_403(served: int, origin: str) -> None:
    other = served + 1 if served < 65535 else served - 1
    assert _post(served, {"Origin": origin.format(port=served, other=other)}) == 403


@pytest.mark.parametrize(
    "origin", ["http://localhost:{port}", "http://127.0.0.1:{port}", "http://[::1]:{port}", None]
)
def test_the_own_origin_under_any_loopback_name_is_served(served: int, origin: str | None) -> None:
    headers = {} if origin is None else {"Origin": origin.format(port=served)}
    assert _post(served, headers) == 200


@pytest.mark.parametrize("host", ["localhost:{other}", "127.0.0.1:{other}", "evil.example:{port}"])
def test_a_host_with_another_port_is_421(served: int, host: str) -> None:
    other = served + 1 if served < 65535 else served - 1
    assert _post(served, {"Host": host.format(port=served, other=other)}) == 421
