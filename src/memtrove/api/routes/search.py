"""``POST /search`` and ``POST /retrieve``: the four retrieval methods of the Vault."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memtrove.api import plugin_fields
from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import SearchRequest, SearchResponse, names
from memtrove.errors import InvalidQueryError
from memtrove.results import SearchResults
from memtrove.vault import Vault

__all__ = ["resolve_mode", "router"]

router = APIRouter(tags=["search"])
_AUTO_KEYWORD_WORDS = 3


@router.post("/search", response_model=SearchResponse, responses=ERRORS)
def search(body: SearchRequest, vault: VaultDependency) -> dict[str, Any]:
    """Search the vault. ``mode: auto`` runs keyword search (BM25) for up to three words and
    hybrid search (BM25 and vectors fused) for longer queries; with an ``intent``, the full
    ``query`` pipeline."""
    return _answer(vault, body, resolve_mode(body, retrieve=False))


@router.post("/retrieve", response_model=SearchResponse, responses=ERRORS)
def retrieve(body: SearchRequest, vault: VaultDependency) -> dict[str, Any]:
    """Retrieve for an agent: like ``/search``, but ``mode: auto`` routes as
    ``memory_retrieve`` does: causal, timeline, discovery and complex questions run their
    mode, any other the full ``query`` pipeline (expansion and reranking when model
    services are configured)."""
    return _answer(vault, body, resolve_mode(body, retrieve=True))


def resolve_mode(body: SearchRequest, *, retrieve: bool) -> str:
    """The mode that runs: ``auto`` resolved; an ``intent`` needs (and implies) ``query``."""
    mode = body.mode
    if mode == "auto":
        if retrieve and body.intent is None:
            from memtrove.retrieval.router import ROUTED_MODES, classify_retrieval_mode

            routed = classify_retrieval_mode(body.query)  # why/when/explore/compare questions
            if routed in ROUTED_MODES:
                return routed
        if retrieve or body.intent is not None:
            return "query"
        return "keyword" if len(body.query.split()) <= _AUTO_KEYWORD_WORDS else "hybrid"
    if body.intent is not None and mode != "query":
        raise InvalidQueryError(f"intent needs mode 'query' (or 'auto'), not {mode!r}")
    return mode


def _answer(vault: Vault, body: SearchRequest, mode: str) -> dict[str, Any]:
    results = _run(vault, body, mode)
    found = [result.to_dict() for result in results]
    if not body.compact:
        for item in found:
            item["content"] = vault.get(f"{item['collection']}/{item['path']}").body
    return {
        "query": body.query,
        "mode": mode,
        "count": len(found),
        "results": [plugin_fields.result(item) for item in found],
        **results.how(),
    }


def _run(vault: Vault, body: SearchRequest, mode: str) -> SearchResults:
    options: dict[str, Any] = {
        "limit": body.limit,
        "collections": names(body.collection),
        "content_types": names(body.content_type),
        "since": body.since,
        "until": body.until,
        "min_score": body.min_score,
    }
    if mode == "keyword":
        return vault.search(body.query, **options)
    if mode == "semantic":
        return vault.vsearch(body.query, **options)
    if mode == "hybrid":
        return vault.hybrid(body.query, **options)
    if mode in ("causal", "timeline", "discovery", "complex"):
        # memory_retrieve's modes (vault.intent.retrieve); content-type and date filters are theirs
        # to set (a WHEN question filters by the dates it names): asking for one is refused,
        # never silently ignored
        given = [
            name
            for name, value in (
                ("content_type", body.content_type),
                ("since", body.since),
                ("until", body.until),
                ("min_score", body.min_score),
            )
            if value
        ]
        if given:
            raise InvalidQueryError(
                f"mode {mode} takes query, limit and collection only, not {', '.join(given)}"
            )
        _, results = vault.intent.retrieve(
            body.query, mode, body.limit, collections=names(body.collection)
        )
        return results
    return vault.query(body.query, intent=body.intent, **options)
