"""The console's plumbing: templates, bundled assets, security headers and CSRF.

``console_router(vault)`` returns the routes ``memtrove serve`` mounts beside the REST API,
behind the same :class:`~memtrove.api.guard.RequestGuard` (Host, Origin, the token, JSON
bodies). On top of it:

- every page is answered with a strict Content-Security-Policy (scripts, styles and data
  from this server only, no inline script or style, no frames, no plugins), plus
  ``nosniff``, ``no-referrer`` and ``frame-ancestors 'none'``;
- every change (``POST /ui/actions/...``) carries the page's CSRF token in an
  ``X-CSRF-Token`` header, compared in constant time with the one this process issued;
- assets are served from the package (nothing is fetched from a network), by name from a
  fixed list, never by a path the request chose.
"""

from __future__ import annotations

import hmac
import secrets
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape

from memtrove.errors import MemtroveError
from memtrove.text import error_line

__all__ = [
    "ASSETS",
    "CSP",
    "CSRF_HEADER",
    "SECURITY_HEADERS",
    "Console",
    "Text",
    "json_error",
    "names",
]

# The bundled Cytoscape.js inserts one fixed <style> element (".__________cytoscape_container
# { position: relative; }"): allowed by its hash, nothing else inline.
CYTOSCAPE_STYLE = "'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='"
CSP = (
    f"default-src 'none'; script-src 'self'; style-src 'self' {CYTOSCAPE_STYLE}; "
    "img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
CSRF_HEADER = "X-CSRF-Token"
ASSETS = {
    "console.css": "text/css; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "graph.js": "text/javascript; charset=utf-8",
    "cytoscape.min.js": "text/javascript; charset=utf-8",
}
NAVIGATION = (
    ("search", "/", "Search"),
    ("sessions", "/ui/sessions", "Sessions"),
    ("graph", "/ui/graph", "Graph"),
    ("memory", "/ui/memory", "Memory"),
    ("health", "/ui/health", "Health"),
)


# A query parameter of the console's pages (a query, a reference, a filter)
Text = Annotated[str, Query(max_length=2000)]


def names(value: str) -> list[str] | None:
    """``a, b,,c`` -> ``["a", "b", "c"]``; None when it names nothing."""
    found = [name.strip() for name in value.split(",") if name.strip()]
    return found or None


def json_error(status: int, message: str) -> JSONResponse:
    """``{"error": message}`` with ``status`` and the security headers."""
    return JSONResponse({"error": message}, status_code=status, headers=SECURITY_HEADERS)


class Console:
    """What every console route shares: the template environment and this process's CSRF
    token."""

    def __init__(self) -> None:
        self.csrf = secrets.token_urlsafe(32)
        self.templates = Environment(
            loader=PackageLoader("memtrove.console", "templates"),
            autoescape=select_autoescape(("html",), default=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def page(self, request: Request, name: str, section: str, **context: Any) -> HTMLResponse:
        """Template ``name`` rendered with ``context``, as an HTML page with the headers."""
        html = self.templates.get_template(name).render(
            csrf=self.csrf, section=section, navigation=NAVIGATION, **context
        )
        return HTMLResponse(html, headers=SECURITY_HEADERS)

    def error_page(self, request: Request, error: MemtroveError, section: str) -> HTMLResponse:
        """A MemtroveError as a page with its status and one line."""
        response = self.page(request, "error.html", section, message=error_line(str(error)))
        response.status_code = error.status
        return response

    def checked(self, request: Request) -> bool:
        """Whether a change request carries this process's CSRF token."""
        sent = request.headers.get(CSRF_HEADER, "")
        return hmac.compare_digest(sent.encode("utf-8", "replace"), self.csrf.encode())


def asset_router() -> APIRouter:
    """``GET /ui/static/{name}``: the bundled files of :data:`ASSETS`, by name."""
    router = APIRouter(include_in_schema=False)

    @router.get("/ui/static/{name}")
    def asset(name: str) -> Response:
        if name not in ASSETS:
            return Response("not found\n", status_code=404, media_type="text/plain")
        data = resources.files("memtrove.console").joinpath("static", name).read_bytes()
        headers = {**SECURITY_HEADERS, "Cache-Control": "max-age=3600"}
        return Response(data, media_type=ASSETS[name], headers=headers)

    return router
