"""The FastAPI application factory: ``create_app(vault)`` and what guards every request.

The app holds one :class:`~memtrove.Vault`, opened and closed by the caller (``memtrove
serve``, or a test). Routes are plain ``def`` functions, so FastAPI runs them in its thread
pool; the Vault's own lock serialises what must be. Request handling, outermost first::

    CORS (only when origins are given)  preflights answered here, nothing else touched
    RequestGuard                        bearer token, body size cap, 500 without a traceback
    FastAPI                             routing, validation (422), MemtroveError -> its status

Every error answer is ``{"error": "<one line>"}``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memtrove import __version__
from memtrove.api.routes import ROUTERS
from memtrove.errors import MemtroveError
from memtrove.memory.queue import ExtractionQueue
from memtrove.paths import queue_location
from memtrove.vault import Vault

__all__ = ["MAX_BODY_BYTES", "OPEN_PATHS", "RequestGuard", "create_app"]

MAX_BODY_BYTES = 1024 * 1024
# The OpenAPI schema and its viewers hold no vault data; a browser cannot send a bearer token
# to load them, so they stay open.
OPEN_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})
_UNAUTHORIZED = "missing or wrong bearer token (send Authorization: Bearer $MEMTROVE_API_TOKEN)"

logger = logging.getLogger("memtrove.api")

_DESCRIPTION = """\
REST access to one memtrove vault. With a token configured (`MEMTROVE_API_TOKEN`), every
route but these docs needs `Authorization: Bearer <token>`. Request bodies are JSON objects
of at most 1 MB whose unknown fields are refused (422); every `limit` is at most 50. Errors
are `{"error": "<one line>"}` with the status of the failure: 400 bad input, 401 token,
404 unknown document or route, 409 ambiguous docid, 413 body too large, 422 invalid request,
500 internal error, 502/503 model service.
"""


def create_app(
    vault: Vault,
    *,
    token: str | None = None,
    cors_origins: Sequence[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
    queue_folder: Path | None = None,
) -> FastAPI:
    """The REST API over ``vault``.

    ``token``: when set, every request except the OpenAPI docs must carry it as a bearer
    token. ``cors_origins``: the exact origins browsers may call from (none by default;
    ``*`` is refused). ``max_body_bytes``: larger request bodies get a 413.
    """
    origins = [origin.strip().rstrip("/") for origin in cors_origins if origin.strip()]
    if "*" in origins:
        raise ValueError("CORS origins must be listed explicitly; '*' is refused")
    app = FastAPI(
        title="memtrove",
        version=__version__,
        description=_DESCRIPTION,
        docs_url="/docs",
        redoc_url="/redoc",
        openapi_url="/openapi.json",
    )
    app.state.vault = vault
    app.state.queue = ExtractionQueue(
        queue_folder if queue_folder is not None else Path(queue_location())
    )
    # Declares the scheme in OpenAPI (the docs' Authorize button); RequestGuard enforces it.
    security = [Security(HTTPBearer(auto_error=False))] if token else []
    for router in ROUTERS:
        app.include_router(router, dependencies=security)
    app.add_exception_handler(MemtroveError, _memtrove_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(RequestGuard, token=token or None, max_body_bytes=max_body_bytes)
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    return app


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """``{"error": message}`` on one line, with ``status``."""
    text = " ".join(message.split()) or "error"
    return JSONResponse({"error": text}, status_code=status, headers=headers)


class RequestGuard:
    """ASGI middleware: bearer token, request body cap, and a last-resort 500.

    The token is compared in constant time (as SHA-256 digests, so its length does not leak
    either). A declared ``Content-Length`` over the cap is refused before anything is read;
    a chunked body is counted as it arrives. An unexpected exception is logged with its
    traceback (server side) and answered ``{"error": "internal error"}``.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self._digest = _digest(token) if token else None
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if (
            self._digest is not None
            and scope["path"] not in OPEN_PATHS
            and not self._authorized(headers.get("authorization", ""))
        ):
            response = error_response(401, _UNAUTHORIZED, {"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        declared = headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await error_response(413, self._too_large())(scope, receive, send)
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

    def _authorized(self, header: str) -> bool:
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() != "bearer" or self._digest is None:
            return False
        return hmac.compare_digest(_digest(credentials.strip()), self._digest)

    def _too_large(self) -> str:
        return f"request body over the {self.max_body_bytes:,}-byte limit"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


async def _memtrove_error(request: Request, error: Exception) -> JSONResponse:
    status = error.status if isinstance(error, MemtroveError) else 500
    return error_response(status, str(error))


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    if not isinstance(error, HTTPException):  # pragma: no cover - registered for this type
        return error_response(500, "internal error")
    where = f"{request.method} {request.url.path}"[:200]
    if error.status_code == 404 and error.detail == "Not Found":
        message = f"not found: {where}"
    elif error.status_code == 405:
        message = f"method not allowed: {where}"
    else:
        message = str(error.detail)
    return error_response(error.status_code, message, dict(error.headers or {}))


async def _validation_error(request: Request, error: Exception) -> JSONResponse:
    problems = error.errors() if isinstance(error, RequestValidationError) else []
    return error_response(422, validation_message(problems))


def validation_message(problems: Sequence[Any]) -> str:
    """Pydantic's validation errors as one line: ``limit: Input should be ...; ...``."""
    parts: list[str] = []
    for problem in problems[:3]:
        location = [str(part) for part in problem.get("loc", ())]
        where = ".".join(location[1:]) or (location[0] if location else "request")
        if location and location[0] in ("query", "path"):
            where = f"{location[0]} parameter {where}"
        kind = problem.get("type")
        if kind == "json_invalid":
            parts.append(f"invalid JSON: {problem.get('ctx', {}).get('error', 'cannot parse')}")
        elif kind == "extra_forbidden":
            parts.append(f"unknown field {where!r}")
        elif kind == "missing" and location == ["body"]:
            parts.append("a JSON body is required")
        else:
            parts.append(f"{where}: {problem.get('msg', 'invalid')}")
    if len(problems) > 3:
        parts.append(f"and {len(problems) - 3} more")
    return "; ".join(parts) or "invalid request"
