"""``/ui/login``: a browser's way in when ``memtrove serve`` has a token.

A browser cannot send ``Authorization: Bearer``. The login page posts the token (JSON, same
origin, through the guard's other checks); when it matches, the answer sets the token's
SHA-256 as an HttpOnly, SameSite=Strict cookie, which the guard accepts in its place. Without
a token configured there is nothing to log in to.
"""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse

from memtrove.api.guard import LOGIN_PATH, TOKEN_COOKIE, token_cookie
from memtrove.console.app import SECURITY_HEADERS, Console

__all__ = ["login_router"]


def login_router(console: Console, token: str | None) -> APIRouter:
    """The login page and its check of ``token``."""
    router = APIRouter(include_in_schema=False)

    @router.get(LOGIN_PATH, response_class=HTMLResponse)
    def login_page(request: Request) -> HTMLResponse:
        return console.page(request, "login.html", "", token_required=token is not None)

    @router.post(LOGIN_PATH)
    async def login(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            body = None
        sent = body.get("token") if isinstance(body, dict) else None
        if token is None:
            return JSONResponse({"ok": True}, headers=SECURITY_HEADERS)
        if not isinstance(sent, str) or not hmac.compare_digest(
            token_cookie(sent), token_cookie(token)
        ):
            return JSONResponse({"error": "wrong token"}, status_code=401, headers=SECURITY_HEADERS)
        answer = JSONResponse({"ok": True}, headers=SECURITY_HEADERS)
        answer.set_cookie(
            TOKEN_COOKIE, token_cookie(token), httponly=True, samesite="strict", path="/"
        )
        return answer

    return router
