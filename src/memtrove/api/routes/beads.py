"""A project's Beads issues into the vault: ``POST /beads/sync``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import StrictModel

__all__ = ["BeadsSyncRequest", "router"]

router = APIRouter(tags=["beads"], responses=ERRORS)


class BeadsSyncRequest(StrictModel):
    """``POST /beads/sync``: the project folder (default: the server's working directory)."""

    project_path: str | None = Field(
        default=None, max_length=4096, description="The project folder holding .beads/."
    )


@router.post("/beads/sync")
def beads_sync(vault: VaultDependency, body: BeadsSyncRequest | None = None) -> dict[str, Any]:
    """Run ``bd list --json --limit 0`` in the project folder and index its issues (one
    document each, causal/supporting/semantic edges from their dependencies). Answers
    ``{project, issues, created, updated, unchanged, dependencies, edges, skipped_issues,
    skipped_dependencies}``; 502 when bd is missing, fails or prints no issue list, 400 when
    the folder does not exist."""
    from memtrove.vault.beads import beads_area

    request = body or BeadsSyncRequest()
    return beads_area(vault).sync(request.project_path).to_dict()
