"""Documents: read one or many, their timeline and neighbours; pin, snooze and forget them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query

from memtrove.api import plugin_fields
from memtrove.api.routes.common import (
    ERRORS,
    DocidPath,
    VaultDependency,
    check_pattern,
    reference,
)
from memtrove.api.schemas import MAX_LIMIT, ForgetRequest, PinRequest, SnoozeRequest
from memtrove.errors import InvalidQueryError

__all__ = ["DEFAULT_SNOOZE_DAYS", "MAX_BYTES", "router"]

router = APIRouter(tags=["documents"], responses=ERRORS)
DEFAULT_SNOOZE_DAYS = 30
MAX_BYTES = 1024 * 1024
_NEIGHBOURS = 50


@router.get("/documents/{docid:path}")
def get_document(docid: DocidPath, vault: VaultDependency) -> dict[str, Any]:
    """One document: its metadata, stored text (``body``) and ``body_length`` in characters."""
    ref = reference(docid)
    document = vault.get(ref)
    return plugin_fields.document({**document.to_dict(), "body_length": len(document.body)})


@router.get("/documents")
def get_documents(
    vault: VaultDependency,
    pattern: Annotated[
        str,
        Query(
            description=(
                "A glob over collection/path (notes/**/*.md) or a comma-separated list of "
                "references (#docid, collection/path); '..' and absolute paths are refused."
            ),
            max_length=4096,
        ),
    ],
    max_bytes: Annotated[
        int, Query(ge=1, le=MAX_BYTES, description="Each body is cut at this many bytes.")
    ] = 10240,
    max_documents: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="At most.")] = MAX_LIMIT,
) -> dict[str, Any]:
    """Several documents at once; ``truncated`` names those whose body was cut."""
    checked = check_pattern(pattern)
    found = vault.multi_get(checked, max_bytes=max_bytes, max_documents=max_documents)
    return {
        "pattern": pattern,
        "count": len(found.documents),
        "documents": [document.to_dict() for document in found.documents],
        "errors": found.errors,
        "truncated": found.truncated,
    }


@router.get("/timeline/{docid:path}")
def timeline(
    docid: DocidPath,
    vault: VaultDependency,
    before: Annotated[int, Query(ge=0, le=_NEIGHBOURS, description="Earlier documents.")] = 5,
    after: Annotated[int, Query(ge=0, le=_NEIGHBOURS, description="Later documents.")] = 5,
    same_collection: Annotated[bool, Query(description="Only the anchor's collection.")] = False,
) -> dict[str, Any]:
    """The documents written just before and after this one (nearest first)."""
    ref = reference(docid)
    found = vault.documents.timeline(
        ref, before=before, after=after, same_collection=same_collection
    )
    return plugin_fields.timeline(found.to_dict())


@router.get("/graph/similar/{docid:path}")
def similar(
    docid: DocidPath,
    vault: VaultDependency,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="How many.")] = 5,
) -> dict[str, Any]:
    """The documents whose vectors are nearest this one's (the document itself left out)."""
    ref = reference(docid)
    found = vault.retrieval.find_similar(ref, limit=limit)
    return {
        "docid": docid.lower(),
        "count": len(found),
        "similar": [plugin_fields.result(result.to_dict()) for result in found],
    }


@router.post("/documents/{docid}/pin")
def pin(docid: DocidPath, vault: VaultDependency, body: PinRequest | None = None) -> dict[str, Any]:
    """Pin a document (it ranks higher in ``query``); ``{"unpin": true}`` unpins it."""
    ref = reference(docid)
    document = vault.curation.pin(ref, unpin=body.unpin if body else False)
    return {"docid": document.docid, "pinned": document.pinned}


@router.post("/documents/{docid}/snooze")
def snooze(
    docid: DocidPath, vault: VaultDependency, body: SnoozeRequest | None = None
) -> dict[str, Any]:
    """Keep a document out of search until a date (default: 30 days from now);
    ``{"unsnooze": true}`` brings it back."""
    ref = reference(docid)
    request = body or SnoozeRequest()
    if request.unsnooze and request.until is not None:
        raise InvalidQueryError("give either until or unsnooze, not both")
    until = None if request.unsnooze else (request.until or _default_until())
    document = vault.curation.snooze(ref, until)
    return {
        "docid": document.docid,
        "snoozed": document.snoozed_until is not None,
        "until": document.snoozed_until,
    }


@router.post("/documents/{docid}/forget")
def forget(
    docid: DocidPath, vault: VaultDependency, body: ForgetRequest | None = None
) -> dict[str, Any]:
    """Take a document out of search (its text stays in the vault); an update brings it
    back only if its file changes."""
    ref = reference(docid)
    document = vault.curation.forget(ref)
    return {"docid": document.docid, "forgotten": True}


def _default_until() -> str:
    until = datetime.now(UTC) + timedelta(days=DEFAULT_SNOOZE_DAYS)
    return until.strftime("%Y-%m-%dT%H:%M:%SZ")
