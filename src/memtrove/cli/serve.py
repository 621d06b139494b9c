"""``memtrove serve``: the REST API (FastAPI under uvicorn) over the vault.

The composition root of the REST interface: it reads ``MEMTROVE_API_TOKEN`` and
``MEMTROVE_ALLOWED_HOSTS`` (plus ``--allow-host``), refuses to listen beyond loopback without
a token, binds the socket itself (so ``--port 0`` prints the port it got), opens the vault,
and serves until SIGINT or SIGTERM, then closes the vault. While it runs, it is published for the warm path
(:mod:`memtrove.warm`): hooks and CLI searches of the same vault use its loaded models.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING

import typer

from memtrove.cli.common import fail, open_vault, start_lanes, state
from memtrove.config import cache_dir
from memtrove.warm import publish, withdraw

if TYPE_CHECKING:
    import uvicorn

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "bind_listener", "is_loopback", "register"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7438
_WILDCARDS = ("0.0.0.0", "::", "")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("ui")(ui)


def ui(
    ctx: typer.Context,
    port: int = typer.Option(
        DEFAULT_PORT, "--port", min=0, max=65535, help="Port (0 picks a free one)."
    ),
    no_browser: bool = typer.Option(
        False, "--no-browser", help="Print the console's address without opening it."
    ),
) -> None:
    """Serve on loopback and open the web console in the browser (``serve`` answers it too,
    at /). Stops when interrupted."""
    _serve(ctx, DEFAULT_HOST, port, [], open_browser=not no_browser)


def serve(
    ctx: typer.Context,
    host: str = typer.Option(
        DEFAULT_HOST, "--host", help="Address to listen on (beyond loopback needs a token)."
    ),
    port: int = typer.Option(
        DEFAULT_PORT, "--port", min=0, max=65535, help="Port (0 picks a free one)."
    ),
    allow_host: list[str] = typer.Option(
        [],
        "--allow-host",
        metavar="NAME",
        help="Another name requests may give as their Host (repeatable; adds to "
        "MEMTROVE_ALLOWED_HOSTS).",
    ),
) -> None:
    """Serve the REST API (OpenAPI docs at /docs) and the web console (at /) until
    interrupted.

    Requests must name the server in their Host header as localhost, 127.0.0.1, [::1], the
    --host address or an allowed host; other sites' pages are refused. Set
    MEMTROVE_API_TOKEN to require `Authorization: Bearer <token>` on every request.
    """
    _serve(ctx, host, port, allow_host, open_browser=False)


def _serve(
    ctx: typer.Context, host: str, port: int, allow_host: list[str], *, open_browser: bool
) -> None:
    token = os.environ.get("MEMTROVE_API_TOKEN", "").strip() or None
    if token is None and not is_loopback(host):
        raise fail(
            f"refusing to serve on {host} without MEMTROVE_API_TOKEN; set a token or use "
            f"--host {DEFAULT_HOST}"
        )
    allowed = _allowed_hosts(os.environ.get("MEMTROVE_ALLOWED_HOSTS", ""), allow_host)
    if os.environ.get("MEMTROVE_CORS_ORIGINS", "").strip():
        print(
            "memtrove: warning: MEMTROVE_CORS_ORIGINS is ignored: the server answers no "
            "other site's pages",
            file=sys.stderr,
            flush=True,
        )

    # Warnings and errors (a 500's traceback) go to stderr. Configured before any model loads:
    # wordllama calls logging.basicConfig(level=INFO) on import, which is then a no-op.
    logging.basicConfig(
        level=logging.WARNING, format="memtrove: %(levelname)s %(name)s: %(message)s", force=True
    )
    import uvicorn  # the web stack loads only for this command

    from memtrove.api import create_app

    listener = bind_listener(host, port)
    with listener, open_vault(ctx) as vault:
        bound = _bound_names(host, listener)
        app = create_app(vault, token=token, allowed_hosts=[*bound, *allowed])
        url = f"http://{_url_host(host)}:{listener.getsockname()[1]}"
        note = "" if token else "; no MEMTROVE_API_TOKEN, so any local process may call it"
        if host.strip().strip("[]") in _WILDCARDS and not allowed:
            note += "; other machines are answered only under --allow-host names"
        print(f"memtrove: serving {url} (docs at {url}/docs{note})", file=sys.stderr, flush=True)
        console = f"{url}/ui/login" if token else f"{url}/"
        print(f"memtrove: console at {console}", file=sys.stderr, flush=True)
        if open_browser:
            _open_soon(console)
        config = uvicorn.Config(
            app, log_level="warning", server_header=False, timeout_graceful_shutdown=10
        )
        published: list[str | None] = []
        lanes = None

        def announce() -> None:
            published.append(_publish(listener, vault.location, token is not None))

        try:
            # The stop handlers go in first, and the server file is published once uvicorn
            # has started (its own handlers in place): a SIGTERM or SIGINT sent as soon as
            # the file appears stops the server cleanly and withdraws the file.
            with _stop_quietly():
                lanes = start_lanes(state(ctx).settings, _say)
                _announced_server(config, announce).run(sockets=[listener])
        finally:
            for path in published:
                if path is not None:
                    withdraw(path)
            if lanes is not None:
                lanes.stop()


def _announced_server(config: uvicorn.Config, announce: Callable[[], None]) -> uvicorn.Server:
    """A ``uvicorn.Server`` for ``config`` that calls ``announce`` once it has started."""
    import uvicorn

    class Announced(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                announce()

    return Announced(config)


def _say(line: str) -> None:
    print(f"memtrove: {line}", file=sys.stderr, flush=True)


def _open_soon(url: str) -> None:
    """Open ``url`` in the user's browser from a thread (the socket already listens, so
    the browser's request waits for the server); a machine without one prints a note."""
    import threading
    import webbrowser

    def run() -> None:
        if not webbrowser.open(url):
            print(f"memtrove: no browser to open; visit {url}", file=sys.stderr, flush=True)

    threading.Thread(target=run, name="open-console", daemon=True).start()


def _publish(listener: socket.socket, vault_path: str, token_required: bool) -> str | None:
    """Tell hooks and CLI searches of this vault where the warm path is (see memtrove.warm):
    the address the socket is bound to, a wildcard one reached over loopback. Failing to
    publish only costs speed."""
    address, port = listener.getsockname()[:2]
    if address in ("0.0.0.0", ""):
        address = "127.0.0.1"
    elif address == "::":
        address = "::1"
    try:
        return publish(cache_dir(), vault_path, address, port, token_required=token_required)
    except OSError as error:
        print(f"memtrove: warning: the warm path is off: {error}", file=sys.stderr, flush=True)
        return None


def _allowed_hosts(setting: str, options: list[str]) -> list[str]:
    """The names of MEMTROVE_ALLOWED_HOSTS (comma-separated) and ``--allow-host``, checked:
    one that is not a host name or address is one line and exit 1."""
    from memtrove.api.guard import check_host_name

    names = [name.strip() for name in [*setting.split(","), *options] if name.strip()]
    try:
        return [check_host_name(name) for name in names]
    except ValueError as error:
        raise fail(f"allowed hosts: {error} (give names like example.com or 192.0.2.10)") from None


def _bound_names(host: str, listener: socket.socket) -> list[str]:
    """``--host`` and the address it was bound to (the warm path's callers name that one),
    as Host names; a name no Host header could carry is left out."""
    from memtrove.api.guard import check_host_name

    names = []
    for name in (host, str(listener.getsockname()[0])):
        with contextlib.suppress(ValueError):
            names.append(check_host_name(name))
    return names


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket; created with ``IPPROTO_TCP`` as its protocol because asyncio
    sets TCP_NODELAY only on such sockets' connections, and without it every answer (headers
    and body are two writes) waits ~40 ms for the client's delayed ACK."""
    address = host.strip().strip("[]")
    try:
        family, kind, proto, _, location = socket.getaddrinfo(
            address, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )[0]
        listener = socket.socket(family, kind, proto)
        try:
            if os.name != "nt":  # on Windows SO_REUSEADDR would let others share the port
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(location)
            listener.listen(2048)
        except OSError:
            listener.close()
            raise
    except OSError as error:
        raise fail(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return listener


def _url_host(host: str) -> str:
    address = host.strip().strip("[]")
    return f"[{address}]" if ":" in address else address


@contextlib.contextmanager
def _stop_quietly() -> Iterator[None]:
    """uvicorn re-raises the signal that stopped it once it has shut down; turn that into a
    clean exit, so the vault is closed and no traceback is printed."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
