"""The console's pages (``GET``, HTML) and the JSON the graph page reads.

    /                       search: one box, the method, filters, each score explained
    /ui/sessions            sessions, newest first, with what they were given
    /ui/sessions/{id}       the injection audit: each prompt, what it got, what was used
    /ui/explain.json        the legs and signals of a search page's results (on demand)
    /ui/health              status and doctor

Pages read the vault through its public methods only (no SQL here). An unknown document
or a bad filter is a page with the one-line error and its status, never a traceback.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse

from memtrove.console.app import SECURITY_HEADERS, Console, Text, json_error, names
from memtrove.console.explain import explain
from memtrove.errors import InvalidQueryError, MemtroveError
from memtrove.index.types import CAPTURE_TYPES, CONTENT_TYPES
from memtrove.text import error_line
from memtrove.vault import Vault

__all__ = ["METHODS", "page_router"]

METHODS = ("search", "query", "intent")
RESULTS = 20
# Why context-surfacing left a considered document out (see memtrove.hooks.audit).
LEFT_OUT = {
    "private": "private: _PRIVATE/, experiments/ or internal bookkeeping",
    "surface: false": "its collection is set surface: false",
    "gone": "removed since it was found",
    "snoozed": "snoozed",
    "noise": "too short to help, or an agent's 'I don't recall'",
    "injection guard": "refused by the injection guard",
    "not admitted": "not admitted",
    "threshold": "below the profile's share of the best score",
    "depth": "past the profile's number of results, a near-duplicate, or a lone hub",
    "lead cut": "under the lead ratio (0.8) of the best",
    "budget or guard": "did not fit the token budget, or its passage was refused",
}
SESSIONS = 100


def _search(vault: Vault, q: str, method: str, filters: dict[str, str]) -> dict[str, Any]:
    if method not in METHODS:
        raise InvalidQueryError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    collections, types = names(filters["collection"]), names(filters["type"])
    try:
        min_score = float(filters["min_score"] or 0)
    except ValueError:
        raise InvalidQueryError("the minimum score must be a number from 0 to 1") from None
    if not 0 <= min_score <= 1:
        raise InvalidQueryError("the minimum score must be a number from 0 to 1")
    dates: dict[str, Any] = {
        "since": filters["since"] or None,
        "until": filters["until"] or None,
        "min_score": min_score,
    }
    if method == "search":
        results = vault.search(q, RESULTS, collections, types, **dates)
    elif method == "query":
        results = vault.query(q, RESULTS, collections=collections, content_types=types, **dates)
    else:  # intent_search takes no dates or types: they would be silently ignored
        if types or dates["since"] or dates["until"]:
            raise InvalidQueryError("intent search filters by collection and score only")
        results = vault.intent.intent_search(
            q, RESULTS, collections=collections, min_score=min_score
        )
    return {"results": results, "how": results.how()}


def page_router(vault: Vault, console: Console) -> APIRouter:
    """The page routes over ``vault``."""
    router = APIRouter(include_in_schema=False)

    @router.get("/", response_class=HTMLResponse)
    def search_page(
        request: Request,
        q: Text = "",
        method: Annotated[str, Query(max_length=20)] = "search",
        collection: Text = "",
        type: Text = "",
        since: Annotated[str, Query(max_length=40)] = "",
        until: Annotated[str, Query(max_length=40)] = "",
        min_score: Annotated[str, Query(max_length=20)] = "",
    ) -> HTMLResponse:
        filters = {
            "collection": collection,
            "type": type,
            "since": since,
            "until": until,
            "min_score": min_score,
        }
        context: dict[str, Any] = {
            "q": q,
            "method": method,
            "methods": METHODS,
            "filters": filters,
            "collections": [c.name for c in vault.collections()],
            "types": (*CONTENT_TYPES, *CAPTURE_TYPES),
            "error": None,
            "results": None,
        }
        if q.strip():
            try:
                context.update(_search(vault, q, method, filters))
            except MemtroveError as error:
                context["error"] = error_line(str(error))
        return console.page(request, "search.html", "search", **context)

    @router.get("/ui/explain.json")
    def explain_data(
        q: Text,
        ids: Text,
        method: Annotated[str, Query(max_length=20)] = "search",
        collection: Text = "",
        type: Text = "",
    ) -> JSONResponse:
        try:
            doc_ids = [int(part) for part in ids.split(",") if part.strip()][:RESULTS]
            explained = explain(vault, q, doc_ids, method, names(collection), names(type))
        except ValueError:
            return json_error(400, "ids must be document ids separated by commas")
        except MemtroveError as error:
            return json_error(error.status, error_line(str(error)))
        data = {
            str(doc): {
                "legs": [leg.__dict__ for leg in explanation.legs],
                "signals": explanation.signals,
            }
            for doc, explanation in explained.items()
        }
        return JSONResponse(data, headers=SECURITY_HEADERS)

    @router.get("/ui/sessions", response_class=HTMLResponse)
    def sessions_page(request: Request) -> HTMLResponse:
        return console.page(
            request, "sessions.html", "sessions", sessions=vault.sessions.session_log(SESSIONS)
        )

    @router.get("/ui/sessions/{session_id}", response_class=HTMLResponse)
    def session_page(request: Request, session_id: str) -> HTMLResponse:
        prompts = vault.sessions.session_prompts(session_id[:200])
        entries = [entry for prompt in prompts for entry in prompt.injected]
        judged = [entry for entry in entries if entry.referenced is not None]
        used = sum(1 for entry in judged if entry.referenced)
        return console.page(
            request,
            "session.html",
            "sessions",
            session_id=session_id,
            prompts=prompts,
            tokens=sum(prompt.estimated_tokens for prompt in prompts),
            injected=len(entries),
            judged=len(judged),
            used=used,
            trails={p.usage_id: {c.path: c for c in p.considered} for p in prompts},
            reasons=LEFT_OUT,
        )

    @router.get("/ui/health", response_class=HTMLResponse)
    def health_page(request: Request, doctor: bool = False) -> HTMLResponse:
        # doctor reads the whole vault (and probes model services): only when asked for
        report = vault.doctor(timeout=2.0) if doctor else None
        return console.page(request, "health.html", "health", status=vault.status(), report=report)

    return router
