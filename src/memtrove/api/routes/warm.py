"""``POST /warm/hook/{name}`` and ``POST /warm/{method}``: the warm path's server side.

A hook process or a CLI search that finds this server (see :mod:`memtrove.warm`) sends its
work here to use the models and vectors already loaded. The caller sends the settings part
of its environment; the server refuses (409) when that names another vault or other model
settings, and the caller then runs the work itself, so results never depend on whether a
server was running.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, BackgroundTasks, HTTPException
from fastapi.responses import JSONResponse

from memtrove.api.routes.common import ERRORS, VaultDependency
from memtrove.api.schemas import WarmHookRequest, WarmSearchRequest
from memtrove.config import Settings
from memtrove.hooks.runner import run_in_server
from memtrove.locations import shown_location
from memtrove.models.registry import ModelSettings
from memtrove.results import SearchResults
from memtrove.vault import Vault
from memtrove.warm import decode_payload

__all__ = ["router"]

# plain JSON: these answers go to memtrove's own CLI and hooks, which mark what they show
router = APIRouter(prefix="/warm", tags=["warm path"], default_response_class=JSONResponse)
_CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {"description": "Another vault or other model settings: run in-process."}
}


@router.post("/hook/{name}", responses={**ERRORS, **_CONFLICT})
def hook(
    name: str, body: WarmHookRequest, vault: VaultDependency, background: BackgroundTasks
) -> dict[str, Any]:
    """Run hook ``name`` on a Claude Code payload (base64) as ``memtrove hook NAME`` would;
    ``answer`` is the JSON the hook prints. Its logging runs after the answer is sent."""
    _check_same(vault, body.env)
    try:
        raw = decode_payload(body.payload)
    except (binascii.Error, ValueError):
        raise HTTPException(400, "payload must be base64") from None
    answer, after = run_in_server(name, raw, body.env, vault)
    for step in after:
        background.add_task(step)
    return {"answer": answer}


@router.post("/{method}", responses={**ERRORS, **_CONFLICT})
def search(method: str, body: WarmSearchRequest, vault: VaultDependency) -> dict[str, Any]:
    """Run ``Vault.search|vsearch|hybrid|query`` with the CLI's arguments; the results with
    their content (when asked for), stages, skipped stages and warnings."""
    runs: dict[str, Callable[..., Any]] = {
        "search": vault.search,
        "vsearch": vault.vsearch,
        "hybrid": vault.hybrid,
        "query": vault.query,
    }
    run = runs.get(method)
    if run is None:
        raise HTTPException(404, f"no warm method {method!r} (known: {', '.join(runs)})")
    _check_same(vault, body.env)
    options = body.model_dump(exclude={"env", "query"}, exclude_none=True)
    if method != "query":
        for only_query in ("intent", "compact", "diverse", "candidate_limit"):
            options.pop(only_query, None)
    results: SearchResults = run(body.query, **options)
    data = results.to_dict()
    data["results"] = [
        {**result.to_dict(), "doc_id": result.doc_id, "content": result.content}
        for result in results
    ]
    return data


def _check_same(vault: Vault, env: Mapping[str, str]) -> None:
    """409 unless the caller's environment names this vault and these model settings."""
    caller = Settings.from_env(env)
    # Named in neither direction (paths stay private); a URL compared without its password.
    if shown_location(caller.vault_path) != vault.location:
        raise HTTPException(409, "another vault is served here")
    if _without_credentials(ModelSettings.from_env(env)) != _without_credentials(
        vault.models.settings
    ):
        raise HTTPException(409, "the caller's model settings differ from the server's")


def _without_credentials(settings: ModelSettings) -> ModelSettings:
    return settings._replace(embed_api_key=None, llm_api_key=None, rerank_api_key=None)
