"""The warm path's pieces in-process: the server file, the raw-socket client, the forwarded
environment and payloads, and the vault changes it relies on (vector_version, readers)."""

from __future__ import annotations

import binascii
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import sqlean

from memtrove import ModelSettings, Vault
from memtrove.retrieval.vector_matrix import VectorMatrix
from memtrove.warm import (
    WarmServer,
    WarmUnavailable,
    decode_payload,
    encode_payload,
    find_server,
    forwarded_env,
    publish,
    server_file,
    withdraw,
)
from tests.conftest import EXAMPLES

JWT_NOTE = "demo/decisions/0004-jwt-access-and-rotating-refresh-tokens.md"


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "memtrove"


@pytest.fixture
def vault_path(tmp_path: Path) -> Path:
    return tmp_path / "v.sqlite"


def dead_pid() -> int:
    """The pid of a process that has finished (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=30)
    return process.pid


def write_server_file(cache: Path, vault_path: Path, **fields: Any) -> Path:
    path = Path(server_file(cache, vault_path))
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"host": "127.0.0.1", "port": 1, "pid": os.getpid(), "vault": str(vault_path)}
    path.write_text(json.dumps(document | fields), encoding="utf-8")
    return path


# -- the server file ---------------------------------------------------------------------------


def test_publish_then_find(cache: Path, vault_path: Path) -> None:
    path = publish(cache, vault_path, "127.0.0.1", 4567, token_required=True)
    crc = binascii.crc32(str(vault_path).encode())
    assert Path(path) == cache / "servers" / f"{crc:08x}-v.sqlite.json"
    assert [p.name for p in (cache / "servers").iterdir()] == [Path(path).name]  # no temp left
    server = find_server(cache, vault_path, {})
    assert server is not None
    assert (server.host, server.port, server.pid) == ("127.0.0.1", 4567, os.getpid())
    assert server.vault == str(vault_path) and server.token_required is True
    publish(cache, vault_path, "127.0.0.1", 4568, token_required=False)  # a newer server
    newer = find_server(cache, vault_path, {})
    assert newer is not None and newer.port == 4568 and newer.token_required is False


def test_find_server_returns_none_without_a_usable_server(cache: Path, vault_path: Path) -> None:
    assert find_server(cache, vault_path, {}) is None  # no file at all
    path = write_server_file(cache, vault_path, pid=dead_pid())
    assert find_server(cache, vault_path, {}) is None
    write_server_file(cache, vault_path, vault=str(vault_path.parent / "other.sqlite"))
    assert find_server(cache, vault_path, {}) is None
    for corrupt in ("{not json", "[]", '{"host": "127.0.0.1"}', '{"port": "x", "pid": 1}', ""):
        path.write_text(corrupt, encoding="utf-8")
        assert find_server(cache, vault_path, {}) is None, corrupt
    write_server_file(cache, vault_path)
    assert find_server(cache, vault_path, {}) is not None
    for value in ("off", "OFF", " 0 ", "false", "no"):
        assert find_server(cache, vault_path, {"MEMTROVE_SERVER": value}) is None, value


def test_memtrove_server_off_in_the_process_environment(
    cache: Path, vault_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish(cache, vault_path, "127.0.0.1", 4567, token_required=False)
    assert find_server(cache, vault_path) is not None
    monkeypatch.setenv("MEMTROVE_SERVER", "off")
    assert find_server(cache, vault_path) is None


def test_withdraw_removes_only_our_own_file(cache: Path, vault_path: Path) -> None:
    path = publish(cache, vault_path, "127.0.0.1", 4567, token_required=False)
    withdraw(path)
    assert not os.path.exists(path)
    withdraw(path)  # already gone: nothing to do, nothing raised
    theirs = write_server_file(cache, vault_path, pid=os.getpid() + 1_000_000)
    withdraw(str(theirs))
    assert theirs.exists()
    theirs.write_text("{corrupt", encoding="utf-8")
    withdraw(str(theirs))
    assert theirs.exists()


# -- what a caller sends -----------------------------------------------------------------------


def test_forwarded_env_keeps_settings_and_drops_credentials() -> None:
    env = {
        "MEMTROVE_PROFILE": "deep",
        "MEMTROVE_VAULT": "/v.sqlite",
        "XDG_CACHE_HOME": "/cache",
        "HOME": "/home/me",
        "CLAUDE_CONFIG_DIR": "/claude",
        "MEMTROVE_LLM_API_KEY": "sk-secret",
        "MEMTROVE_EMBED_API_KEY": "sk-secret",
        "MEMTROVE_API_TOKEN": "token-secret",
        "PATH": "/usr/bin",
        "OPENAI_API_KEY": "sk-other",
    }
    assert forwarded_env(env) == {
        "MEMTROVE_PROFILE": "deep",
        "MEMTROVE_VAULT": "/v.sqlite",
        "XDG_CACHE_HOME": "/cache",
        "HOME": "/home/me",
        "CLAUDE_CONFIG_DIR": "/claude",
    }


def test_payloads_round_trip_and_garbage_is_a_value_error() -> None:
    for raw in (b"", b'{"prompt": "hi"}', bytes(range(256)), "caf\u00e9".encode("latin-1")):
        text = encode_payload(raw)
        assert text.isascii() and "\n" not in text
        assert decode_payload(text) == raw
    for garbage in ("not base64!", "QUJD=QUJD", "QUJ", "caf\u00e9"):
        with pytest.raises(ValueError):
            decode_payload(garbage)
    assert issubclass(binascii.Error, ValueError)


# -- WarmServer.post against a stdlib server ---------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    chunks: list[bytes] = field(default_factory=list)  # non-empty: send it chunked


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True
    reply: Reply
    seen: list[tuple[str, dict[str, str], bytes]]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _StubServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append((self.path, dict(self.headers.items()), body))
        reply = self.server.reply
        if reply.chunks:
            self.close_connection = True
            framed = b"".join(
                f"{len(chunk):x};ext=1\r\n".encode() + chunk + b"\r\n" for chunk in reply.chunks
            )
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + framed + b"0\r\n\r\n"
            )
            return
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def stub() -> Iterator[_StubServer]:
    """A tiny HTTP server on 127.0.0.1 answering every POST with ``stub.reply``."""
    server = _StubServer(("127.0.0.1", 0), _Handler)
    server.reply = Reply()
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def client_of(stub: _StubServer) -> WarmServer:
    return WarmServer("127.0.0.1", stub.server_address[1], os.getpid(), "/v.sqlite", False)


def test_post_returns_the_json_answer(stub: _StubServer) -> None:
    stub.reply = Reply(body=json.dumps({"answer": {"continue": True}, "n": 1}).encode())
    body = {"query": "refresh token", "env": {"HOME": "/h\u00e9"}}
    answer = client_of(stub).post("/warm/search", body, token="s3cret", timeout=10)
    assert answer == {"answer": {"continue": True}, "n": 1}
    path, headers, sent = stub.seen[-1]
    assert path == "/warm/search" and json.loads(sent) == body and sent.isascii()
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["Content-Type"] == "application/json"
    client_of(stub).post("/warm/search", body, token=None, timeout=10)
    assert "Authorization" not in stub.seen[-1][1]


@pytest.mark.parametrize("status", [500, 409, 401, 404])
def test_an_error_status_is_unavailable_with_its_message(stub: _StubServer, status: int) -> None:
    stub.reply = Reply(status=status, body=json.dumps({"error": f"no luck {status}"}).encode())
    with pytest.raises(WarmUnavailable) as raised:
        client_of(stub).post("/warm/query", {"query": "x"}, token=None, timeout=10)
    assert str(raised.value) == f"HTTP {status}: no luck {status}"
    assert raised.value.timed_out is False


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b""])
def test_a_200_without_a_json_object_is_unavailable(stub: _StubServer, body: bytes) -> None:
    stub.reply = Reply(body=body)
    with pytest.raises(WarmUnavailable, match="HTTP 200"):
        client_of(stub).post("/warm/query", {"query": "x"}, token=None, timeout=10)


def test_a_chunked_answer_is_parsed(stub: _StubServer) -> None:
    document = json.dumps({"results": [{"docid": "abc123"}], "stages": ["bm25"]}).encode()
    stub.reply = Reply(chunks=[document[:7], document[7:20], document[20:]])
    answer = client_of(stub).post("/warm/search", {"query": "x"}, token=None, timeout=10)
    assert answer == json.loads(document)


def test_a_refused_connection_is_unavailable_not_timed_out() -> None:
    with socket.socket() as bound:  # bound, never listening: connections are refused
        bound.bind(("127.0.0.1", 0))
        server = WarmServer("127.0.0.1", bound.getsockname()[1], os.getpid(), "/v", False)
        with pytest.raises(WarmUnavailable) as raised:
            server.post("/warm/search", {"query": "x"}, token=None, timeout=5)
    assert raised.value.timed_out is False
    assert "ConnectionRefusedError" in str(raised.value)


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as silent:  # the kernel accepts; nobody ever reads or answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        server = WarmServer("127.0.0.1", silent.getsockname()[1], os.getpid(), "/v", False)
        with pytest.raises(WarmUnavailable) as raised:
            server.post("/warm/search", {"query": "x"}, token=None, timeout=0.3)
    assert raised.value.timed_out is True
    assert "no answer within 0.3 s" in str(raised.value)


# -- the vault: vector_version and reader connections -----------------------------------------


@pytest.fixture
def examples(tmp_path: Path) -> Iterator[Vault]:
    """The example notes indexed (not embedded) with the embedded wordllama model set."""
    opened = Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=ModelSettings())
    opened.add_collection(EXAMPLES, name="demo")
    opened.update()
    yield opened
    opened.close()


def vector_version(vault: Vault) -> int:
    row = vault._connection.execute("SELECT version FROM vector_version").fetchone()
    return int(row[0])


def test_vector_version_moves_with_vectors_only(examples: Vault) -> None:
    """The stamp takes a new random value at every change of the vectors, never an old one."""
    before = vector_version(examples)
    report = examples.embed()
    assert report.fragments > 0
    embedded = vector_version(examples)
    assert embedded != before and embedded >= 0
    assert examples.embed().fragments == 0  # nothing pending: nothing written
    assert vector_version(examples) == embedded
    doc_id = examples.get(JWT_NOTE).doc_id
    row = examples.sessions.log_context_usage(
        "session-1", "context-surfacing", injected=[(doc_id, 0.8)]
    )
    assert row > 0 and examples.sessions.turn_index("session-1") == 1  # the session row is there
    examples.sessions.hook_seen("context-surfacing", "a prompt")
    assert vector_version(examples) == embedded
    examples.embed(force=True)
    assert vector_version(examples) not in (embedded, before)


def test_the_vector_matrix_reloads_on_vector_changes_only(examples: Vault) -> None:
    examples.embed()
    matrix = VectorMatrix()
    connection = examples._connection
    assert matrix.ready(connection) and matrix.size > 0
    loaded = matrix._matrix
    doc_id = examples.get(JWT_NOTE).doc_id
    examples.sessions.log_context_usage("session-1", "context-surfacing", injected=[(doc_id, 0.8)])
    assert matrix.ready(connection) and matrix._matrix is loaded  # kept: no reload
    examples.embed(force=True)
    assert matrix.ready(connection) and matrix._matrix is not loaded
    assert matrix.size == len(loaded)


def test_reader_connections_are_reused_and_closed_with_the_vault(examples: Vault) -> None:
    with examples.reader() as first:
        assert isinstance(first, Vault) and first is not examples
        assert first._connection is not examples._connection
        assert first.path == examples.path and first.models is examples.models
        assert [r.docid for r in first.search("refresh token")] == [
            r.docid for r in examples.search("refresh token")
        ]
    with examples.reader() as again:
        assert again is first  # kept warm for the next caller
        with examples.reader() as second:  # in use: another connection
            assert second is not first
    with pytest.raises(RuntimeError), examples.reader() as broken:
        raise RuntimeError("a leg failed")
    assert broken is first  # closed, not kept: its state is unknown
    with pytest.raises(sqlean.ProgrammingError):
        broken.search("refresh token")
    with examples.reader() as spare:
        assert spare is second
    examples.close()
    with pytest.raises(sqlean.ProgrammingError):
        spare.search("refresh token")
