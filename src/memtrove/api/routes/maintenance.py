"""Keeping the vault current and taking everything out: ``POST /reindex``, ``GET /export``.

``GET /export`` streams the file ``memtrove export`` writes (JSON lines, see
:mod:`memtrove.mine.portable`), which ``memtrove import`` reads back.
``GET /export?format=documents`` keeps the shape ClawMem's ``/export`` answers (one JSON
object listing every active document with its text), which its plugins read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import ReindexRequest, names
from memtrove.vault import Vault

__all__ = ["EXPORT_VERSION", "router"]

router = APIRouter(tags=["maintenance"], responses=ERRORS)
EXPORT_VERSION = "1.0.0"


@router.post("/reindex")
def reindex(vault: VaultDependency, body: ReindexRequest | None = None) -> dict[str, Any]:
    """Re-scan collections (all by default) and index what changed; ``embed: true`` then
    embeds what is new. Holds the vault while it runs."""
    request = body or ReindexRequest()
    selected = names(request.collection)
    report = vault.update(selected)
    answer: dict[str, Any] = {
        "collections": selected or [collection.name for collection in vault.collections()],
        **report.to_dict(),
    }
    if request.embed:
        answer["embed"] = vault.embed().to_dict()
    return answer


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"application/x-ndjson": {}, "application/json": {}},
            "description": "The whole vault as JSON lines (or, format=documents, every document).",
        }
    },
)
def export(
    vault: VaultDependency,
    format: str = Query("jsonl", pattern="^(jsonl|documents)$"),
    vectors: bool = Query(False, description="Also the fragment vectors (format=jsonl)."),
) -> StreamingResponse:
    """The whole vault as ``memtrove export`` writes it (JSON lines: a header, one record per
    row, an end record; ``memtrove import`` reads it). ``format=documents``: every active
    document with its metadata and whole text as one JSON object, ``{version, exported_at,
    documents: [...], count, errors, truncated}`` (the last two stay empty)."""
    if format == "documents":
        return StreamingResponse(_export_chunks(vault), media_type="application/json")
    return StreamingResponse(
        vault.portable.export_lines(vectors=vectors), media_type="application/x-ndjson"
    )


def _export_chunks(vault: Vault) -> Iterator[str]:
    exported_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    yield f'{{"version": "{EXPORT_VERSION}", "exported_at": "{exported_at}", "documents": ['
    count = 0
    for document in vault.documents.export():
        yield ("," if count else "") + "\n" + _json(document.to_dict())
        count += 1
    yield f'\n], "count": {count}, "errors": [], "truncated": []}}\n'


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
