"""Conversation import: ``POST /mine`` (a folder the server can read), ``GET /mine/runs``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import Field

from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import StrictModel
from memtrove.errors import InvalidQueryError

__all__ = ["MineRequest", "router"]

router = APIRouter(tags=["mine"], responses=ERRORS)


class MineRequest(StrictModel):
    """``POST /mine``: import the conversations in a folder (or file) on the server."""

    path: str = Field(min_length=1, description="Folder or file the server can read.")
    collection: str = Field(default="conversations", description="Mined collection.")
    format: str = Field(
        default="auto",
        description="auto, claude-code, codex, chatgpt, claude-ai, slack, text (codex-cli and "
        "plain-text: ClawMem's names for codex and text).",
    )
    dry_run: bool = Field(default=False, description="Only count what would be written.")
    since: str | None = Field(default=None, description="Only exchanges from this ISO date.")
    embed: bool = Field(default=False, description="Then embed what was written.")
    synthesize: bool = Field(
        default=False,
        description="Then the LLM extracts decisions, preferences, milestones and problems "
        "as linked documents (not with dry_run).",
    )
    synthesis_max_docs: int = Field(
        default=20, ge=0, le=10_000, description="With synthesize: at most N conversations."
    )


@router.post("/mine")
def mine(vault: VaultDependency, body: MineRequest) -> dict[str, Any]:
    """One ``conversation`` document per exchange; the report of ``memtrove mine --json``
    (``files``, ``conversations``, ``exchanges``, ``written``, ``unchanged``, ``formats``,
    ``skipped``, ``unrecognised``, ``errors``...), with ``synthesis`` (its seven counters)
    when ``synthesize``. Holds the vault while it runs."""
    if body.synthesize and body.dry_run:
        raise InvalidQueryError("synthesize writes documents: not with dry_run")
    report = vault.mining.mine(
        body.path,
        body.collection,
        format=body.format,
        dry_run=body.dry_run,
        embed=body.embed,
        since=body.since,
    )
    data = report.to_dict()
    if body.synthesize:  # the import is committed: a failure here never undoes it
        data["synthesis"] = vault.synthesis.synthesize_conversations(
            report.document_ids or None,
            collection=body.collection,
            max_docs=body.synthesis_max_docs,
        ).to_dict()
    return data


@router.get("/mine/runs")
def runs(
    vault: VaultDependency,
    limit: int = Query(10, ge=1, le=100, description="Most runs to return."),
) -> dict[str, Any]:
    """The latest mine runs, newest first, the mined collections, and the latest
    ``import`` runs (export files, ClawMem vaults)."""
    return {
        "collections": [
            {"name": name, "source": source} for name, source in vault.mining.mined_collections()
        ],
        "runs": [run.to_dict() for run in vault.mining.import_status(limit)],
        "imports": [run.to_dict() for run in vault.mining.import_runs(limit)],
    }
