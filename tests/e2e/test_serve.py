"""``memtrove serve`` as users run it: a real server process on an ephemeral port, driven
over HTTP with httpx (and with a raw socket for what httpx will not send: ``..`` as typed,
a missing or repeated Host header)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import EXAMPLES

TOKEN = "e2e-token-6f1c0b"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
URL_LINE = re.compile(r"memtrove: serving (http://\S+) ")


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                return self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
        return self.process.returncode


def base_env(home: Path) -> dict[str, str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("MEMTROVE_")}
    return {
        **clean,
        "HOME": str(home),
        "MEMTROVE_VAULT": str(home / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(home / "config"),
    }


def start(env: dict[str, str], *args: str, log: Path, command: str = "serve") -> Server:
    """Start ``memtrove serve ARGS`` (or ``command``: ``ui`` serves too) and wait for the
    URL line on stderr."""
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "memtrove", command, *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = URL_LINE.search(log.read_text(encoding="utf-8", errors="replace"))
        if match:
            return Server(process, match.group(1), log)
        if process.poll() is not None:
            raise AssertionError(f"serve exited {process.returncode}: {log.read_text()}")
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"serve printed no URL: {log.read_text()}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault of examples/vault, indexed and embedded by the real CLI."""
    folder = tmp_path_factory.mktemp("serve")
    result = subprocess.run(
        [sys.executable, "-m", "memtrove", "bootstrap", str(EXAMPLES), "--name", "demo"],
        env=base_env(folder),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[Server]:
    env = {**base_env(home), "MEMTROVE_API_TOKEN": TOKEN}
    running = start(env, "--port", "0", log=home / "serve.log")
    yield running
    assert running.stop() == 0
    log = running.log.read_text()
    assert "Traceback" not in log
    assert "INFO" not in log  # no access log, and no INFO lines once the model has loaded


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def test_the_token_is_required(http: httpx.Client) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": f"Basic {TOKEN}"}):
        refused = http.get("/health", headers=headers)
        assert refused.status_code == 401 and set(refused.json()) == {"error"}
        assert http.post("/search", json={"query": "x"}, headers=headers).status_code == 401
    health = http.get("/health", headers=BEARER)
    assert health.status_code == 200
    assert health.json()["status"] == "ok" and health.json()["documents"] == 30


def test_search_works(http: httpx.Client) -> None:
    found = http.post("/search", json={"query": "refresh token", "limit": 3}, headers=BEARER)
    assert found.status_code == 200
    body = found.json()
    assert body["mode"] == "keyword" and body["count"] == 3
    assert "0004-jwt" in body["results"][0]["path"]
    semantic = http.post(
        "/search", json={"query": "photos too large to upload", "mode": "semantic"}, headers=BEARER
    ).json()  # loads the embedded model on this first vector request
    assert semantic["stages"] == ["vector"] and semantic["count"] == 10
    retrieved = http.post("/retrieve", json={"query": "how do we rotate tokens"}, headers=BEARER)
    assert retrieved.json()["mode"] == "query" and retrieved.json()["count"] > 0
    causal = http.post("/retrieve", json={"query": "why were users logged out"}, headers=BEARER)
    assert causal.json()["mode"] == "causal" and causal.json()["count"] > 0


def test_an_unknown_docid_is_404(http: httpx.Client) -> None:
    missing = http.get("/documents/abcdef", headers=BEARER)
    assert missing.status_code == 404 and "abcdef" in missing.json()["error"]
    docid = http.post("/search", json={"query": "refresh token"}, headers=BEARER).json()["results"][
        0
    ]["docid"]
    found = http.get(f"/documents/{docid}", headers=BEARER).json()
    assert found["docid"] == docid and found["body_length"] > 0


def test_path_traversal_is_refused(http: httpx.Client, server: Server) -> None:
    for path in ("/documents/..%2F..%2Fetc%2Fpasswd", "/documents/%2Fetc%2Fpasswd"):
        answer = http.get(path, headers=BEARER)
        assert answer.status_code == 400 and "root:" not in answer.text
    for pattern in ("../../etc/passwd", "/etc/passwd", "demo/../../../etc/passwd"):
        answer = http.get("/documents", params={"pattern": pattern}, headers=BEARER)
        assert answer.status_code == 400 and "root:" not in answer.text
    # httpx normalises "..", so send the request line exactly as an attacker would
    status, raw = _raw_get(server.url, "/documents/../../etc/passwd")
    assert status in (400, 404) and b"root:" not in raw


def test_docs_are_served(http: httpx.Client) -> None:
    docs = http.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    schema = http.get("/openapi.json").json()
    assert {"/search", "/retrieve", "/documents/{docid}", "/export"} <= set(schema["paths"])


def test_concurrent_requests(http: httpx.Client) -> None:
    queries = ["refresh token", "thumbnail worker", "postgresql", "upload chunks"] * 6

    def search(query: str) -> int:
        return http.post("/search", json={"query": query}, headers=BEARER).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(search, queries)) == {200}


def test_limits_and_unknown_fields(http: httpx.Client) -> None:
    too_many = http.post("/search", json={"query": "x", "limit": 500}, headers=BEARER)
    assert too_many.status_code == 422 and "limit" in too_many.json()["error"]
    extra = http.post("/search", json={"query": "x", "colection": "demo"}, headers=BEARER)
    assert extra.status_code == 422 and "colection" in extra.json()["error"]
    huge = http.post("/search", json={"query": "x" * 2_000_000}, headers=BEARER)
    assert huge.status_code == 413


def test_an_explicit_port_and_a_clean_stop(home: Path, tmp_path: Path) -> None:
    port = free_port()
    running = start(base_env(home), "--port", str(port), log=tmp_path / "serve.log")
    assert running.url == f"http://127.0.0.1:{port}"
    assert "no MEMTROVE_API_TOKEN" in running.log.read_text()
    assert httpx.get(f"{running.url}/collections", timeout=30).json()["count"] == 1
    assert running.stop(signal.SIGINT) == 0
    assert "Traceback" not in running.log.read_text()


def test_a_public_host_needs_a_token(home: Path) -> None:
    for host in ("0.0.0.0", "::", "192.0.2.10"):
        refused = subprocess.run(
            [sys.executable, "-m", "memtrove", "serve", "--host", host, "--port", "0"],
            env=base_env(home),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert refused.returncode == 1
        assert refused.stderr.count("\n") == 1
        assert refused.stderr.startswith("memtrove: error: refusing to serve on")
        assert "MEMTROVE_API_TOKEN" in refused.stderr


def test_a_port_in_use_is_one_line(home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = subprocess.run(
            [sys.executable, "-m", "memtrove", "serve", "--port", str(port)],
            env=base_env(home),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith(f"memtrove: error: cannot listen on 127.0.0.1:{port}")


def _raw_get(url: str, path: str) -> tuple[int, bytes]:
    host = url.removeprefix("http://")  # with the port: the Host check reads it
    return _raw(url, f"GET {path} HTTP/1.1", [f"Host: {host}", f"Authorization: Bearer {TOKEN}"])


def _raw(url: str, request_line: str, headers: list[str]) -> tuple[int, bytes]:
    """Send one request exactly as given; (status, the whole answer)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        lines = [request_line, *headers, "Connection: close"]
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    return int(raw.split(b" ", 2)[1]), raw


# -- only the owner drives it ------------------------------------------------------------------


def test_a_rebinding_host_is_refused(http: httpx.Client, server: Server) -> None:
    port = server.url.rsplit(":", 1)[1]
    other = int(port) + 1 if int(port) < 65535 else int(port) - 1
    for host in (
        "evil.example",
        f"evil.example:{port}",
        f"127.0.0.1.evil.example:{port}",
        "localhost",  # port 80: another origin than this server's
        f"127.0.0.1:{other}",
        f"[::1]:{other}",
    ):
        refused = http.get("/export", headers={**BEARER, "Host": host})
        assert refused.status_code == 421 and set(refused.json()) == {"error"}, host
        assert "documents" not in refused.text
    for host in (f"LOCALHOST:{port}", f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        assert http.get("/collections", headers={**BEARER, "Host": host}).status_code == 200
    auth = f"Authorization: Bearer {TOKEN}"
    for headers in ([auth], [auth, "Host: "], [auth, "Host: 127.0.0.1", "Host: evil.example"]):
        status, raw = _raw(server.url, "GET /export HTTP/1.1", headers)
        assert status in (400, 421) and b'"documents"' not in raw, raw[:200]
    status, raw = _raw(server.url, "GET /export HTTP/1.0", [auth])  # HTTP/1.0: no Host at all
    assert status == 421 and b'"documents"' not in raw


def test_simple_posts_change_nothing(http: httpx.Client) -> None:
    docid = http.post("/search", json={"query": "refresh token"}, headers=BEARER).json()["results"][
        0
    ]["docid"]
    for content_type in (
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=b",
        "application/jsonx",
    ):
        headers = {**BEARER, "Content-Type": content_type}
        for action in ("forget", "pin", "snooze"):
            refused = http.post(f"/documents/{docid}/{action}", content=b"{}", headers=headers)
            assert refused.status_code == 415 and set(refused.json()) == {"error"}
        assert http.post("/reindex", content=b"{}", headers=headers).status_code == 415
    untouched = http.get(f"/documents/{docid}", headers=BEARER).json()
    assert untouched["active"] and not untouched["pinned"] and not untouched["snoozed_until"]
    missing = http.post(f"/documents/{docid}/pin", headers=BEARER)  # no Content-Type at all
    assert missing.status_code == 415
    json_type = {**BEARER, "Content-Type": "application/json; charset=utf-8"}
    pinned = http.post(f"/documents/{docid}/pin", headers=json_type)  # body-less, JSON type
    assert pinned.status_code == 200 and pinned.json()["pinned"] is True
    unpinned = http.post(f"/documents/{docid}/pin", json={"unpin": True}, headers=BEARER)
    assert unpinned.json()["pinned"] is False


def test_foreign_origins_are_refused(http: httpx.Client, server: Server) -> None:
    for origin in ("http://evil.example", "null", "http://localhost:1"):
        refused = http.get("/export", headers={**BEARER, "Origin": origin})
        assert refused.status_code == 403 and "documents" not in refused.text
        posted = http.post("/search", json={"query": "x"}, headers={**BEARER, "Origin": origin})
        assert posted.status_code == 403
    site = http.get("/export", headers={**BEARER, "Sec-Fetch-Site": "cross-site"})
    assert site.status_code == 403
    own = http.get("/export", headers={**BEARER, "Origin": server.url})
    assert own.status_code == 200
    records = [json.loads(line) for line in own.text.splitlines()]
    assert records[0]["counts"]["documents"] == 30
    assert sum(record.get("type") == "documents" for record in records) == 30
    assert not [name for name in own.headers if name.startswith("access-control-")]


def test_error_answers_name_no_path(http: httpx.Client, home: Path) -> None:
    answers = [
        http.get("/export", headers={"Host": "evil.example"}),
        http.get("/export"),
        http.get(f"/documents{home}", headers=BEARER),
        http.get("/documents", params={"pattern": str(home / "vault.sqlite")}, headers=BEARER),
        http.post("/search", json={"query": "x", "since": str(home)}, headers=BEARER),
        http.post("/reindex", json={"collection": str(home)}, headers=BEARER),
        http.post(
            "/warm/search",
            json={"query": "x", "env": {"MEMTROVE_VAULT": str(home / "other.sqlite")}},
            headers=BEARER,
        ),
        http.post("/search", content=b"{", headers={**BEARER, "Content-Type": "text/plain"}),
    ]
    for answer in answers:
        assert answer.status_code >= 400 and set(answer.json()) == {"error"}, answer.text
        assert str(home) not in answer.text and tempfile.gettempdir() not in answer.text
    assert answers[6].json() == {"error": "another vault is served here"}


def test_allowed_hosts_from_the_option_and_the_environment(home: Path, tmp_path: Path) -> None:
    env = {**base_env(home), "MEMTROVE_ALLOWED_HOSTS": " other.example , 192.0.2.7,"}
    running = start(env, "--port", "0", "--allow-host", "Memory.Example", log=tmp_path / "s.log")
    try:
        with httpx.Client(base_url=running.url, timeout=30) as client:
            port = running.url.rsplit(":", 1)[1]
            for name in ("memory.example", "other.example", "192.0.2.7", "localhost"):
                host = f"{name}:{port}"
                assert client.get("/collections", headers={"Host": host}).status_code == 200
            for host in ("evil.example", "sub.memory.example", "memory.example:1"):
                assert client.get("/collections", headers={"Host": host}).status_code == 421
    finally:
        assert running.stop() == 0


@pytest.mark.parametrize(
    ("option", "setting"), [(["--allow-host", "*"], ""), ([], "ok.example,http://x.example")]
)
def test_a_bad_allowed_host_is_one_line(home: Path, option: list[str], setting: str) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "memtrove", "serve", "--port", "0", *option],
        env={**base_env(home), "MEMTROVE_ALLOWED_HOSTS": setting},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("memtrove: error: allowed hosts: not a host name")


def test_cors_origins_are_ignored_with_a_warning(home: Path, tmp_path: Path) -> None:
    env = {**base_env(home), "MEMTROVE_CORS_ORIGINS": "http://localhost:5173"}
    running = start(env, "--port", "0", log=tmp_path / "s.log")
    try:
        assert "MEMTROVE_CORS_ORIGINS is ignored" in running.log.read_text()
        origin = {"Origin": "http://localhost:5173"}
        answer = httpx.get(f"{running.url}/collections", headers=origin, timeout=30)
        assert answer.status_code == 403 and "access-control-allow-origin" not in answer.headers
    finally:
        assert running.stop() == 0


def test_serve_hosts_the_lanes_when_asked_and_drains_them_at_stop(tmp_path: Path) -> None:
    """With MEMTROVE_ENABLE_CONSOLIDATION set, the server ticks the light lane (a team's
    hosts share it through the vault's lease) and releases its lease when it stops."""
    from memtrove import Vault

    env = base_env(tmp_path) | {
        "MEMTROVE_ENABLE_CONSOLIDATION": "true",
        "MEMTROVE_CONSOLIDATION_INTERVAL": "100",
    }
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config"):
        pass
    server = start(env, "--port", "0", log=tmp_path / "serve.log")

    def ticks() -> int:
        with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
            return len(vault.consolidation.maintenance_runs(lane="light", limit=100))

    try:
        deadline = time.monotonic() + 60
        while ticks() == 0:
            assert time.monotonic() < deadline, server.log.read_text()
            time.sleep(0.1)
        assert "hosting the light lane" in server.log.read_text()
    finally:
        assert server.stop() == 0
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        leases = vault._connection.execute("SELECT COUNT(*) FROM worker_leases").fetchone()[0]
        assert leases == 0
