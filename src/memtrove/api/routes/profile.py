"""The user profile: ``GET /profile``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memtrove.api.routes.common import ERRORS, VaultDependency

__all__ = ["router"]

router = APIRouter(tags=["profile"], responses=ERRORS)


@router.get("/profile")
def profile(vault: VaultDependency) -> dict[str, Any]:
    """The user profile document (``_memtrove/profile.md``): ``{path, body}``, plus its
    parts (``static``, ``dynamic``) and ``updated_at``; 404 when none was built yet
    (``memtrove profile rebuild``, or the MCP tool ``profile`` with ``rebuild``)."""
    from memtrove.vault.profile import profile_area

    return profile_area(vault).show().to_dict()
