"""``memtrove consolidate``: one pass of the light consolidation lane now (or, with
``--loop``, host the lanes until stopped); ``memtrove reflect``: what recent decisions keep
saying."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

import typer

from memtrove.cli.common import fail, open_vault, print_report, state, user_errors
from memtrove.locations import shown_location

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    app.command("consolidate")(consolidate)
    app.command("reflect")(reflect)


def _lanes() -> Any:
    from memtrove.lifecycle.maintenance import LaneSettings

    with user_errors():
        return LaneSettings.from_env(os.environ)


def consolidate(
    ctx: typer.Context,
    limit: int | None = typer.Argument(
        None,
        metavar="N",
        help="Archive low-confidence duplicates instead: check the N (1-10000) least "
        "confident documents. A dry run unless --apply.",
    ),
    duplicates: bool = typer.Option(
        False, "--duplicates", help="Archive low-confidence duplicates (N = 50)."
    ),
    apply: bool = typer.Option(False, "--apply", help="With N or --duplicates: archive them."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would change; write nothing."),
    no_llm: bool = typer.Option(False, "--no-llm", help="The heuristics even with an LLM."),
    loop: bool = typer.Option(
        False,
        "--loop",
        help="Host the light lane (and the heavy lane with MEMTROVE_HEAVY_LANE=true) until "
        "SIGINT/SIGTERM.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run the light lane's phases once: A-MEM backfill of the 3 newest unenriched
    documents, Phase 2 (observations merged behind the merge gates) and Phase 3 (deductive
    synthesis, with an LLM only). With N or --duplicates: archive low-confidence documents
    that duplicate another (dry run unless --apply)."""
    if limit is not None or duplicates:
        if loop or no_llm:
            raise fail("N and --duplicates take neither --loop nor --no-llm", code=2)
        if apply and dry_run:
            raise fail("--apply and --dry-run contradict each other", code=2)
        _duplicates(ctx, 50 if limit is None else limit, apply, as_json)
        return
    if apply:
        raise fail("--apply goes with N or --duplicates", code=2)
    lanes = _lanes()
    if loop:
        if dry_run or as_json:
            raise fail("--loop takes neither --dry-run nor --json", code=2)
        _host(ctx, lanes)
        return
    with open_vault(ctx) as vault, user_errors():
        report = vault.consolidation.consolidate(dry_run=dry_run, use_llm=not no_llm, lanes=lanes)
    print_report(report, as_json)


def _duplicates(ctx: typer.Context, limit: int, apply: bool, as_json: bool) -> None:
    if not 1 <= limit <= 10_000:
        raise fail("N must be from 1 to 10000", code=2)
    with open_vault(ctx) as vault, user_errors():
        report = vault.consolidation.consolidate_duplicates(limit, apply=apply)
    print_report(report, as_json)


def _host(ctx: typer.Context, lanes: Any) -> None:
    from memtrove.vault.lanes import LaneHost

    settings = state(ctx).settings
    stopping = threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        stopping.set()

    # Handlers first: a SIGTERM while the lanes start must still drain them.
    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    host = LaneHost(settings.vault_path, settings, light=True, heavy=lanes.heavy, lanes=lanes)
    which = "light and heavy lanes" if lanes.heavy else "light lane"
    print(
        f"memtrove consolidate: hosting the {which} on {shown_location(settings.vault_path)} "
        f"(every {lanes.light_interval:g}s)",
        file=sys.stderr,
        flush=True,
    )
    host.start()
    while not stopping.wait(0.5):
        pass
    if not host.stop():
        print("memtrove consolidate: a tick was abandoned at stop", file=sys.stderr)


def reflect(
    ctx: typer.Context,
    days: int = typer.Argument(14, help="How many days back (1-3650)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Repeated 2-/3-word phrases (3+ times) across recent decisions, recent antipatterns,
    and documents surfaced together 3+ times."""
    if not 1 <= days <= 3650:
        raise fail("days must be from 1 to 3650", code=2)
    with open_vault(ctx, create=False) as vault, user_errors():
        reflection = vault.consolidation.reflect(days)
    print_report(reflection, as_json)


def host_lanes(settings: Any, *, short_lived: bool) -> Any:
    """For ``memtrove mcp``: the lanes MEMTROVE_ENABLE_CONSOLIDATION / MEMTROVE_HEAVY_LANE
    turn on, started (None when neither is); SIGTERM then ends the server so they drain."""
    from memtrove.vault.lanes import host_from_env

    host = host_from_env(settings, short_lived=short_lived)
    if host is not None:
        signal.signal(signal.SIGTERM, _interrupt)
    return host


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
