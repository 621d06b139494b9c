"""The warm path: a running ``memtrove serve`` lends its loaded models to hooks and the CLI.

``memtrove serve`` publishes where it listens in ``$XDG_CACHE_HOME/memtrove/servers/``, one
small JSON file per vault (named by a hash of the vault's path, or of its URL without the
password: a server file never holds a password), and withdraws it when it stops. A hook or
a CLI search for the same vault finds the file, checks that the process is alive, and sends its work to the server over loopback HTTP: the embedded model, the vectors
and the query caches are already in memory there. When there is no server, or it cannot
take the request (gone, busy past the deadline, another token, other model settings), the
caller runs the same code in-process: results are the same either way.

The client side imports only ``os`` and ``zlib`` (``json`` and ``socket`` once a server
is found), so a hook that finds no server has lost a file lookup. ``MEMTROVE_SERVER=off`` keeps every call in-process.
"""

from __future__ import annotations

import os
import zlib

from memtrove.locations import is_server_url, location_key, shown_location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

__all__ = [
    "FORWARDED_PREFIXES",
    "SERVERS_FOLDER",
    "WarmServer",
    "WarmUnavailable",
    "decode_payload",
    "encode_payload",
    "find_server",
    "forwarded_env",
    "publish",
    "server_file",
    "withdraw",
]

SERVERS_FOLDER = "servers"
# What a caller's environment tells the server (settings of hooks and models); credentials
# are never sent.
FORWARDED_PREFIXES = ("MEMTROVE_", "XDG_", "CLAUDE_CONFIG_DIR", "HOME")
_SECRETS = ("_API_KEY", "_API_TOKEN", "_TOKEN")
CONNECT_TIMEOUT = 0.5


class WarmUnavailable(Exception):
    """The server could not take the request; the caller runs it in-process, unless it
    ``timed_out`` answering (then running it again would only be later still)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class WarmServer:
    """A running ``memtrove serve`` for one vault."""

    __slots__ = ("host", "pid", "port", "token_required", "vault")

    def __init__(self, host: str, port: int, pid: int, vault: str, token_required: bool) -> None:
        self.host = host
        self.port = port
        self.pid = pid
        self.vault = vault
        self.token_required = token_required

    def post(
        self, path: str, body: Mapping[str, Any], *, token: str | None, timeout: float
    ) -> dict[str, Any]:
        """POST JSON and return the JSON answer; :class:`WarmUnavailable` for anything but
        a 200 with a JSON object (the caller then runs the work itself).

        One request per connection over a plain socket: ``http.client`` alone would cost a
        hook more import time than the whole exchange."""
        import json

        data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode()
        head = [
            f"POST {path} HTTP/1.1",
            f"Host: {_url_host(self.host)}:{self.port}",
            "Content-Type: application/json",
            f"Content-Length: {len(data)}",
            "Connection: close",
        ]
        if token:
            head.append(f"Authorization: Bearer {token}")
        request = ("\r\n".join(head) + "\r\n\r\n").encode("utf-8", "surrogateescape") + data
        import socket  # only when a server is there to talk to

        try:
            sock = socket.create_connection((self.host, self.port), timeout=CONNECT_TIMEOUT)
        except OSError as error:  # refused, or no accept in time: nothing was sent
            raise WarmUnavailable(f"cannot connect: {type(error).__name__}: {error}") from None
        try:
            with sock:
                sock.settimeout(timeout)
                sock.sendall(request)
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
        except TimeoutError:
            raise WarmUnavailable(f"no answer within {timeout:g} s", timed_out=True) from None
        except OSError as error:
            raise WarmUnavailable(f"{type(error).__name__}: {error}") from None
        status, payload = _parse_response(b"".join(chunks))
        try:
            answer = json.loads(payload)
        except (ValueError, RecursionError):
            answer = None
        if status != 200 or not isinstance(answer, dict):
            reason = (
                answer.get("error")
                if isinstance(answer, dict)
                else payload[:200].decode("utf-8", "replace")
            )
            raise WarmUnavailable(f"HTTP {status}: {reason}")
        return answer


def _url_host(host: str) -> str:
    """An IPv6 address in brackets, as a Host header must carry it."""
    return f"[{host}]" if ":" in host else host


def _parse_response(raw: bytes) -> tuple[int, bytes]:
    """(status, body) of an HTTP/1.1 response read to the end of the connection."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise WarmUnavailable("not an HTTP answer")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip().lower()
    if headers.get(b"transfer-encoding") == b"chunked":
        body = _unchunk(body)
    return int(parts[1]), body


def _unchunk(body: bytes) -> bytes:
    out = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            raise WarmUnavailable("a malformed chunked answer") from None
        if size == 0:
            break
        out.append(rest[:size])
        body = rest[size + 2 :]
    return b"".join(out)


def server_file(cache_dir: str | Path, vault_path: str | Path) -> str:
    """Where the server of ``vault_path`` publishes itself (the file also names the vault,
    so a clash of the short checksums in the name is harmless)."""
    shown = shown_location(vault_path)
    key = zlib.crc32(shown.encode("utf-8", "surrogateescape"))
    base = location_key(shown) if is_server_url(shown) else os.path.basename(shown)[:40]
    name = f"{key:08x}-{base}.json"
    return os.path.join(str(cache_dir), SERVERS_FOLDER, name)


def publish(
    cache_dir: str | Path, vault_path: str | Path, host: str, port: int, *, token_required: bool
) -> str:
    """Write this process's server file (atomically); returns its path."""
    import json
    from pathlib import Path

    from memtrove.files import write_atomic  # the server's side only: kept off the hooks' path

    path = server_file(cache_dir, vault_path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    document = {
        "host": host,
        "port": port,
        "pid": os.getpid(),
        "vault": shown_location(vault_path),
        "token_required": token_required,
    }
    write_atomic(Path(path), json.dumps(document), prefix=".server-")
    return path


def withdraw(path: str) -> None:
    """Remove the server file if it is still this process's (a newer server may own it)."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            owner = json.load(handle).get("pid")
        if owner == os.getpid():
            os.unlink(path)
    except (OSError, ValueError, AttributeError):
        pass


def find_server(
    cache_dir: str | Path, vault_path: str | Path, env: Mapping[str, str] | None = None
) -> WarmServer | None:
    """The live server of ``vault_path``, or None (none published, its process gone, or
    ``MEMTROVE_SERVER=off``)."""
    env = os.environ if env is None else env
    if env.get("MEMTROVE_SERVER", "").strip().lower() in ("off", "0", "false", "no"):
        return None
    try:
        with open(server_file(cache_dir, vault_path), encoding="utf-8") as handle:
            import json  # only when a server file exists

            data = json.load(handle)
        server = WarmServer(
            host=str(data["host"]),
            port=int(data["port"]),
            pid=int(data["pid"]),
            vault=str(data["vault"]),
            token_required=bool(data.get("token_required")),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if server.vault != shown_location(vault_path) or not _alive(server.pid):
        return None
    return server


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but another user's: not a server we should talk to
        return False
    except OSError:
        return False
    return True


def forwarded_env(env: Mapping[str, str]) -> dict[str, str]:
    """The part of a caller's environment the server needs, without credentials."""
    return {
        name: value
        for name, value in env.items()
        if name.startswith(FORWARDED_PREFIXES) and not name.endswith(_SECRETS)
    }


def encode_payload(raw: bytes) -> str:
    import binascii

    return binascii.b2a_base64(raw, newline=False).decode("ascii")


def decode_payload(text: str) -> bytes:
    """The inverse of :func:`encode_payload`; ``ValueError`` when it is not base64."""
    import binascii

    return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
