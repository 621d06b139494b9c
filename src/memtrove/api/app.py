"""The FastAPI application factory: ``create_app(vault)``.

The app holds one :class:`~memtrove.Vault`, opened and closed by the caller (``memtrove
serve``, or a test). Routes are plain ``def`` functions, so FastAPI runs them in its thread
pool; the Vault's own lock serialises what must be. Request handling, outermost first::

    RequestGuard    Host, Origin, bearer token, Content-Type, body size (see api.guard),
                    500 without a traceback
    FastAPI         routing, validation (422), MemtroveError -> its status (see api.errors)

Every error answer is ``{"error": "<one line>"}``. No CORS headers are ever sent: the API
answers its owner's programs and its own docs page, not other sites' pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fastapi import FastAPI, Security
from fastapi.security import HTTPBearer

from memtrove import __version__
from memtrove.api.errors import install_error_handlers, server_paths
from memtrove.api.guard import OPEN_PATHS, RequestGuard, check_host_name
from memtrove.api.responses import DataResponse
from memtrove.api.routes import ROUTERS
from memtrove.memory.queue import ExtractionQueue
from memtrove.paths import queue_location
from memtrove.vault import Vault

__all__ = ["MAX_BODY_BYTES", "OPEN_PATHS", "RequestGuard", "create_app"]

MAX_BODY_BYTES = 1024 * 1024

_DESCRIPTION = """\
REST access to one memtrove vault. With a token configured (`MEMTROVE_API_TOKEN`), every
route but these docs needs `Authorization: Bearer <token>`. Requests must name the server
in their `Host` header as `localhost`, `127.0.0.1`, `[::1]`, the address it listens on or an
allowed host (`MEMTROVE_ALLOWED_HOSTS`), must not come from another site's page (`Origin`),
and every POST sends `Content-Type: application/json`, with or without a body. Request
bodies are JSON objects of at most 1 MB whose unknown fields are refused (422); every
`limit` is at most 50. Errors are `{"error": "<one line>"}` with the status of the failure:
400 bad input, 401 token, 403 cross-origin, 404 unknown document or route, 409 ambiguous
docid, 413 body too large, 415 not JSON, 421 unknown host, 422 invalid request, 500 internal
error, 502/503 model service.
"""


def create_app(
    vault: Vault,
    *,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
    queue_folder: Path | None = None,
    console: bool = True,
) -> FastAPI:
    """The REST API over ``vault``.

    ``token``: when set, every request except the OpenAPI docs must carry it as a bearer
    token. ``allowed_hosts``: the names (or addresses) requests may give in their Host
    header besides ``localhost``, ``127.0.0.1`` and ``[::1]``: the address the server
    listens on, and the names it is reached by (``ValueError`` for one that is not a host
    name). ``max_body_bytes``: larger request bodies get a 413. ``console``: the web
    console at ``/`` (see :mod:`memtrove.console`).
    """
    hosts = [check_host_name(name) for name in allowed_hosts if name.strip()]
    app = FastAPI(
        title="memtrove",
        version=__version__,
        description=_DESCRIPTION,
        docs_url="/docs",
        redoc_url="/redoc",
        openapi_url="/openapi.json",
        default_response_class=DataResponse,
    )
    app.state.vault = vault
    queue = Path(queue_location()) if queue_folder is None else queue_folder
    app.state.queue = ExtractionQueue(queue)
    # Declares the scheme in OpenAPI (the docs' Authorize button); RequestGuard enforces it.
    security = [Security(HTTPBearer(auto_error=False))] if token else []
    for router in ROUTERS:
        app.include_router(router, dependencies=security)
    if console:
        from memtrove.console import console_router  # templates load only when served

        app.include_router(console_router(vault, token or None))
    install_error_handlers(app, server_paths(vault, queue))
    app.add_middleware(
        RequestGuard, token=token or None, max_body_bytes=max_body_bytes, allowed_hosts=hosts
    )
    return app
