"""The console's changes: ``POST /ui/actions/{action}`` with a JSON body ``{"ref": ...}``.

Every change needs the page's CSRF token (``X-CSRF-Token``, see :mod:`memtrove.console.app`)
on top of the guard's checks (Host, Origin, JSON only). Actions:

    pin / unpin         the +0.3 composite boost
    snooze              out of context surfacing for ``days`` (1-3650, default 30)
    unsnooze
    forget              out of every search (the text stays in the vault)
    restore             a forgotten or archived document back in search
    confidence          set by hand: ``{"ref": ..., "confidence": 0.8}`` (0 to 1)
    type                set by hand: ``{"ref": ..., "type": "decision"}`` (a content type)

The answer is ``{"ok": true, "document": {...}}`` or ``{"error": "<one line>"}`` with the
failure's status.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from memtrove.console.app import CSRF_HEADER, SECURITY_HEADERS, Console
from memtrove.errors import InvalidQueryError, MemtroveError
from memtrove.results import Document
from memtrove.text import error_line
from memtrove.vault import Vault

__all__ = ["ACTIONS", "action_router"]

ACTIONS = (
    "pin", "unpin", "snooze", "unsnooze", "forget", "restore", "confidence", "type", "verdict",
)  # fmt: skip
MAX_SNOOZE_DAYS = 3650


def _answer(status: int, data: dict[str, Any]) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=SECURITY_HEADERS)


def _days(body: dict[str, Any]) -> int:
    days = body.get("days", 30)
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_SNOOZE_DAYS:
        raise InvalidQueryError(f"days must be a whole number from 1 to {MAX_SNOOZE_DAYS}")
    return days


def _value(body: dict[str, Any], name: str) -> Any:
    """The body's ``name`` as sent (the vault checks it)."""
    if name not in body:
        raise InvalidQueryError(f'the body must carry the new value: {{"ref": ..., "{name}": ...}}')
    return body[name]


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip() or len(value) > 2000:
        raise InvalidQueryError(f"{name} must be a non-empty text")
    return value


def _apply(vault: Vault, action: str, ref: str, body: dict[str, Any]) -> Document:
    if action in ("pin", "unpin"):
        return vault.curation.pin(ref, unpin=action == "unpin")
    if action == "snooze":
        until = datetime.now(UTC) + timedelta(days=_days(body))
        return vault.curation.snooze(ref, until.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if action == "unsnooze":
        return vault.curation.snooze(ref, None)
    if action == "restore":
        return vault.curation.restore(ref)
    if action == "confidence":
        return vault.curation.set_confidence(ref, _value(body, "confidence"))
    if action == "type":
        return vault.curation.set_type(ref, _value(body, "type"))
    return vault.curation.forget(ref)


def action_router(vault: Vault, console: Console) -> APIRouter:
    """The change routes over ``vault``."""
    router = APIRouter(include_in_schema=False)

    @router.post("/ui/actions/{action}")
    async def act(action: str, request: Request) -> JSONResponse:
        if not console.checked(request):
            return _answer(403, {"error": f"missing or wrong {CSRF_HEADER} (reload the page)"})
        if action not in ACTIONS:
            known = ", ".join(ACTIONS)
            return _answer(404, {"error": f"unknown action {action[:40]!r}; known: {known}"})
        try:
            body = await request.json()
        except ValueError:
            return _answer(400, {"error": "the body must be a JSON object"})
        ref = body.get("ref") if isinstance(body, dict) else None
        if not isinstance(ref, str) or not ref.strip() or len(ref) > 2000:
            return _answer(400, {"error": 'the body must name the document: {"ref": "#docid"}'})
        try:
            if action == "verdict":  # a memory-store pair: ref and other are entry labels
                pair = vault.memory.dedup_mark_checked(
                    ref, _text(body, "other"), _text(body, "verdict"), _text(body, "store")
                )
                return _answer(200, {"ok": True, "pair": list(pair)})
            document = _apply(vault, action, ref, body)
        except MemtroveError as error:
            return _answer(error.status, {"error": error_line(str(error))})
        shown = {key: value for key, value in document.to_dict().items() if key != "body"}
        return _answer(200, {"ok": True, "document": shown})

    return router
