"""Error answers of the REST app: one JSON line, with the status of the failure, and never a
path of the server's machine.

A :class:`~memtrove.MemtroveError` says what went wrong in words meant for the owner at a
terminal, and some name files (``cannot open vault /home/me/...``, ``config.yaml is not
valid YAML``). Over HTTP such a message goes to whoever asked, so every message is scrubbed
on its way out: the vault's file and folders, the collections' folders, the home and
temporary folders, and then anything else shaped like an absolute path become ``<path>``.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from memtrove.api.guard import error_response
from memtrove.errors import MemtroveError
from memtrove.vault import Vault

__all__ = [
    "PLACEHOLDER",
    "install_error_handlers",
    "scrub_paths",
    "server_paths",
    "validation_message",
]

PLACEHOLDER = "<path>"
_STOP = r"""\s'"`,;()<>"""
# Absolute paths: /a/b..., ~/..., C:\... and \\server\share; a URL's path (http://h/x) and a
# route (/nope) are left alone, the first by the look-behind, the second by needing two parts.
_ABSOLUTE_PATH = re.compile(
    rf"(?<![\w.~:/\\-])(?<!<path>)(?:/[^{_STOP}/]+/[^{_STOP}]*|~[/\\][^{_STOP}]*"
    rf"|[A-Za-z]:[/\\][^{_STOP}]*|\\\\[^{_STOP}]+)"
)
_TRAILING = ".:!?"

Paths = Callable[[], Iterable[str]]


def server_paths(vault: Vault, *folders: Path) -> Paths:
    """The paths of this server that no answer may carry: ``vault``'s file and its folder
    (or its server's URL), its config folder, ``folders``, home and the temporary folder,
    fixed now; the collections' folders, read when an error is answered (they change with
    config.yaml)."""
    where = [vault.path, vault.path.parent] if vault.path is not None else [vault.location]
    fixed = [*where, vault.config_file.parent, *folders]
    fixed.append(Path(tempfile.gettempdir()))
    with contextlib.suppress(RuntimeError, KeyError):  # no home folder: none to hide
        fixed.append(Path.home())

    def paths() -> Iterable[str]:
        found = [str(path) for path in fixed]
        # a broken config.yaml may be the very error being answered
        with contextlib.suppress(Exception):
            found.extend(str(collection.path) for collection in vault.collections())
        return found

    return paths


def scrub_paths(message: str, paths: Iterable[str], *, any_absolute: bool = True) -> str:
    """``message`` with each of ``paths`` (and their real paths) replaced, longest first;
    with ``any_absolute``, also whatever else looks like an absolute path."""
    roots = {variant for path in paths for variant in (path, os.path.realpath(path))}
    for root in sorted((r.rstrip("/\\") for r in roots), key=len, reverse=True):
        if root.strip("/\\") and root in message:
            message = message.replace(root, PLACEHOLDER)
    if any_absolute:
        message = _ABSOLUTE_PATH.sub(_placeholder, message)
    return message


def _placeholder(match: re.Match[str]) -> str:
    text = match.group()
    return PLACEHOLDER + text[len(text.rstrip(_TRAILING)) :]


def install_error_handlers(app: FastAPI, paths: Paths) -> None:
    """Answer MemtroveErrors with their status, Starlette's HTTP errors (404, 405, ...) and
    validation errors (422) as ``{"error": "<one line>"}``, every message scrubbed."""

    def answer(
        status: int, message: str, headers: dict[str, str] | None = None, *, routed: bool = True
    ) -> JSONResponse:
        return error_response(status, scrub_paths(message, paths(), any_absolute=routed), headers)

    async def memtrove_error(request: Request, error: Exception) -> JSONResponse:
        status = error.status if isinstance(error, MemtroveError) else 500
        return answer(status, str(error))

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        if not isinstance(error, HTTPException):  # pragma: no cover - registered for this type
            return error_response(500, "internal error")
        where = f"{request.method} {request.url.path}"[:200]
        headers = dict(error.headers or {})
        # The route the caller asked for is echoed (a route is not a file: only the server's
        # own paths are taken out of it).
        if error.status_code == 404 and error.detail == "Not Found":
            return answer(404, f"not found: {where}", headers, routed=False)
        if error.status_code == 405:
            return answer(405, f"method not allowed: {where}", headers, routed=False)
        return answer(error.status_code, str(error.detail), headers)

    async def validation_error(request: Request, error: Exception) -> JSONResponse:
        problems = error.errors() if isinstance(error, RequestValidationError) else []
        return answer(422, validation_message(problems))

    app.add_exception_handler(MemtroveError, memtrove_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)


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
