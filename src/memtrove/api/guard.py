"""Who may drive the REST server: the checks every request passes before it is routed.

A browser is the hostile client a loopback server has to expect: any page the owner visits
can send requests to ``127.0.0.1``, and through DNS rebinding (a name of the attacker's that
resolves to 127.0.0.1 a moment later) even read the answers. So, in this order::

    Host            one of the names this server answers to, with the port it listens on,
                    else 421 (defeats rebinding: the browser sends the attacker's name, or
                    the port of the page that sent it)
    Origin          absent, or this server's own origin, else 403; Sec-Fetch-Site, when a
                    browser sends it, same-origin or none (typed by the user), else 403
    token           with one configured, a bearer token on every route but the docs, else 401;
                    the console's pages take it from the cookie its login page sets
                    (HttpOnly, SameSite=Strict), and send a browser without it to that page
    Content-Type    application/json on every POST, PUT, PATCH and DELETE, else 415 (an HTML
                    form or a CORS "simple" request cannot send it without a preflight,
                    and no preflight is ever answered: the app sends no CORS headers)
    body size       at most the cap, else 413

Refusals are ``{"error": "<one line>"}`` that name nothing of the server's.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import re
from collections.abc import Iterable
from functools import lru_cache

from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memtrove.text import error_line

__all__ = [
    "LOGIN_PATH",
    "LOOPBACK_HOSTS",
    "OPEN_PATHS",
    "OPEN_PREFIXES",
    "TOKEN_COOKIE",
    "RequestGuard",
    "check_host_name",
    "error_response",
    "host_of",
    "is_json",
    "is_same_origin",
    "token_cookie",
]

# The OpenAPI schema and its viewers hold no vault data; a browser cannot send a bearer token
# to load them, so they need no token (the Host and Origin checks still apply).
OPEN_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json", "/ui/login"})
# The console's bundled scripts and styles hold no vault data either.
OPEN_PREFIXES = ("/ui/static/",)
TOKEN_COOKIE = "memtrove_token"
LOGIN_PATH = "/ui/login"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# What a browser's Sec-Fetch-Site may say: the page is this server's, or the user typed it.
_OWN_FETCH_SITES = frozenset({"same-origin", "none"})

_UNAUTHORIZED = "missing or wrong bearer token (send Authorization: Bearer $MEMTROVE_API_TOKEN)"
_WRONG_HOST = "unknown Host header (see MEMTROVE_ALLOWED_HOSTS and serve --allow-host)"
_FOREIGN_ORIGIN = "cross-origin requests are refused"
_NOT_JSON = "send Content-Type: application/json (with a JSON body, or none)"

_CHECKED = {
    name.encode(): name
    for name in (
        "host",
        "origin",
        "sec-fetch-site",
        "authorization",
        "content-type",
        "content-length",
        "cookie",
    )
}
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_PORT = re.compile(r"[0-9]{1,5}")

logger = logging.getLogger("memtrove.api")


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """``{"error": message}`` on one line, with ``status``."""
    return JSONResponse({"error": error_line(message)}, status_code=status, headers=headers)


def check_host_name(name: str) -> str:
    """A host name or IP address, normalised (lowercase, IPv6 without brackets, addresses in
    their short form); ``ValueError`` for anything else (a port, a wildcard, a URL)."""
    text = name.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if text and len(text) <= 253 and all(_LABEL.fullmatch(label) for label in text.split(".")):
        return text
    raise ValueError(f"not a host name or IP address: {name.strip()[:80]!r}")


@lru_cache(maxsize=256)  # a client sends the same Host on every request
def host_of(authority: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of a Host header or an origin's authority (``name``, ``name:port``,
    ``[v6]``, ``[v6]:port``); None when it is not one of those."""
    if authority.startswith("["):
        inside, closed, rest = authority[1:].partition("]")
        if not closed or ":" not in inside:
            return None
        name, port = inside, rest
    elif authority.count(":") > 1:  # an IPv6 address must be bracketed
        return None
    else:
        name, colon, number = authority.partition(":")
        port = colon + number
    if port and not (port.startswith(":") and _PORT.fullmatch(port[1:]) and int(port[1:]) <= 65535):
        return None
    try:
        host = check_host_name(name)
    except ValueError:
        return None
    return host, int(port[1:]) if port else None


def is_same_origin(origin: str, host: tuple[str, int | None]) -> bool:
    """True when ``origin`` (an Origin header) is this server's own, as reached through the
    Host header ``host``: the same host and port over http or https."""
    scheme, separator, authority = origin.strip().lower().partition("://")
    if not separator or scheme not in ("http", "https"):
        return False  # "null" (sandboxed pages, file://) included
    found = host_of(authority)
    if found is None:
        return False
    default = 80 if scheme == "http" else 443
    return (found[0], found[1] or default) == (host[0], host[1] or default)


def is_json(content_type: str) -> bool:
    """True for ``application/json`` with or without parameters (``; charset=utf-8``)."""
    return content_type.partition(";")[0].strip().lower() == "application/json"


class RequestGuard:
    """ASGI middleware: Host, Origin, bearer token, Content-Type and body cap (see the module
    docstring), and a last-resort 500.

    The token is compared in constant time (as SHA-256 digests, so its length does not leak
    either). A declared ``Content-Length`` over the cap is refused before anything is read;
    a chunked body is counted as it arrives. An unexpected exception is logged with its
    traceback (server side) and answered ``{"error": "internal error"}``.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        max_body_bytes: int,
        allowed_hosts: Iterable[str] = (),
    ) -> None:
        self.app = app
        self._digest = _digest(token) if token else None
        self.max_body_bytes = max_body_bytes
        self.hosts = frozenset(check_host_name(name) for name in (*LOOPBACK_HOSTS, *allowed_hosts))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # no route takes one: refused before any check
            await receive()
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    # FastAPI passes an HTTPException from the body stream on to our handler
                    raise HTTPException(413, self._too_large())
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except Exception:
            if started:  # too late for an error answer; the server drops the connection
                raise
            logger.exception("internal error in %s %s", scope.get("method"), scope.get("path"))
            await error_response(500, "internal error")(scope, receive, send)

    def _refusal(self, scope: Scope) -> JSONResponse | RedirectResponse | None:
        """The answer to a request that may not go further, or None."""
        headers = _checked_headers(scope)
        hosts = headers.get("host", [])
        host = host_of(hosts[0]) if len(hosts) == 1 else None
        if host is None or host[0] not in self.hosts or not _own_port(host[1], scope):
            return error_response(421, _WRONG_HOST)
        origins = headers.get("origin", [])
        if origins and (len(origins) > 1 or not is_same_origin(origins[0], host)):
            return error_response(403, _FOREIGN_ORIGIN)
        sites = headers.get("sec-fetch-site", [])
        if any(site.strip().lower() not in _OWN_FETCH_SITES for site in sites):
            return error_response(403, _FOREIGN_ORIGIN)
        path = scope["path"]
        if (
            self._digest is not None
            and path not in OPEN_PATHS
            and not path.startswith(OPEN_PREFIXES)
            and not self._authorized(headers.get("authorization", [""])[0])
            and not self._cookie(headers.get("cookie", []))
        ):
            if scope["method"] == "GET" and (path == "/" or path.startswith("/ui/")):
                return RedirectResponse(LOGIN_PATH, status_code=303)
            return error_response(401, _UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
        if scope["method"] in UNSAFE_METHODS:
            types = headers.get("content-type", [])
            if len(types) != 1 or not is_json(types[0]):
                return error_response(415, _NOT_JSON)
        declared = headers.get("content-length", [""])[0].strip()
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            return error_response(413, self._too_large())
        return None

    def _authorized(self, header: str) -> bool:
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() != "bearer" or self._digest is None:
            return False
        return hmac.compare_digest(_digest(credentials.strip()), self._digest)

    def _cookie(self, headers: list[str]) -> bool:
        """Whether a Cookie header carries the token's SHA-256 (hex), as the console's
        login sets it."""
        for header in headers:
            for part in header.split(";"):
                name, _, value = part.strip().partition("=")
                if name == TOKEN_COOKIE and self._digest is not None:
                    expected = self._digest.hex().encode()
                    if hmac.compare_digest(value.strip().encode("ascii", "replace"), expected):
                        return True
        return False

    def _too_large(self) -> str:
        return f"request body over the {self.max_body_bytes:,}-byte limit"


def _own_port(port: int | None, scope: Scope) -> bool:
    """Whether a Host header's port (None: the scheme's default) is the one this server
    listens on (ASGI's ``server``; a server that does not say, a Unix socket, is not
    checked). Another port is another origin: what a page there sends is not ours."""
    server = scope.get("server")
    if not server or server[1] is None:
        return True
    default = 443 if scope.get("scheme") == "https" else 80
    return (port or default) == int(server[1])


def _checked_headers(scope: Scope) -> dict[str, list[str]]:
    """Every value of the headers the guard reads, in one pass over the request's (ASGI
    names them in lowercase)."""
    found: dict[str, list[str]] = {}
    for name, value in scope["headers"]:
        key = _CHECKED.get(name)
        if key is not None:
            found.setdefault(key, []).append(value.decode("latin-1"))
    return found


def token_cookie(token: str) -> str:
    """The value of :data:`TOKEN_COOKIE` for ``token``."""
    return _digest(token).hex()


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
