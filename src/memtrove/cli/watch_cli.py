"""``memtrove watch``: keep the vault indexed (and embedded) while its folders change, and host
the consolidation lanes when ``MEMTROVE_ENABLE_CONSOLIDATION`` / ``MEMTROVE_HEAVY_LANE`` say so.

Order matters: the SIGTERM/SIGINT handlers are installed before any worker starts, so a stop
requested at any moment is honoured. A stop lets the batch in hand finish, then the lanes drain
(15 s light, 30 s heavy, see :mod:`memtrove.vault.lanes`); past :data:`DRAIN_SECONDS` (or on a
second signal) the process exits at once. Progress goes to stderr, one line per event.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

import typer

from memtrove.cli.common import fail, start_lanes, state
from memtrove.errors import MemtroveError

__all__ = ["DRAIN_SECONDS", "register"]

DRAIN_SECONDS = 20.0  # the watcher's own drain; the lanes add theirs (15 s light, 30 s heavy)


def register(app: typer.Typer) -> None:
    app.command("watch")(watch)


def _say(line: str) -> None:
    # One write with its newline: print() writes the text and the newline apart, and the
    # SIGTERM handler, which says "stopping", could land between them, in mid-line.
    sys.stderr.write(f"memtrove watch: {line}\n")
    sys.stderr.flush()


def watch(
    ctx: typer.Context,
    debounce_ms: int = typer.Option(
        2000, "--debounce-ms", help="Quiet time before a batch of changes is indexed (50-60000)."
    ),
    embed_interval: float = typer.Option(
        2.0, "--embed-interval", help="Least seconds between two embed runs (0-86400)."
    ),
    no_embed: bool = typer.Option(False, "--no-embed", help="Index only; never embed."),
    checkpoint_interval: float = typer.Option(
        300.0, "--checkpoint-interval", help="Seconds between WAL checkpoints (1-86400)."
    ),
) -> None:
    """Watch every collection folder: re-index the collection a change belongs to (2 s
    debounce), sync Beads issues when a .beads/ folder changes, embed what changed,
    checkpoint the WAL every 5 minutes, follow config.yaml.
    Stop with Ctrl-C or SIGTERM."""
    if not 50 <= debounce_ms <= 60_000:
        raise fail("--debounce-ms must be from 50 to 60000", 2)
    if not 0 <= embed_interval <= 86_400:
        raise fail("--embed-interval must be from 0 to 86400 seconds", 2)
    if not 1 <= checkpoint_interval <= 86_400:
        raise fail("--checkpoint-interval must be from 1 to 86400 seconds", 2)
    settings = state(ctx).settings
    stop = threading.Event()
    drain = DRAIN_SECONDS

    def request_stop(signum: int, frame: object) -> None:
        if stop.is_set():
            _say("second signal: exiting now")
            os._exit(1)
        stop.set()
        _say(f"stopping ({signal.Signals(signum).name})")
        timer = threading.Timer(drain, _give_up)
        timer.daemon = True
        timer.start()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, request_stop)  # before any worker starts
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="memtrove watch: %(message)s", force=True
    )
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # its "N changes detected"
    from memtrove.index.watcher import Watcher, WatchSettings
    from memtrove.vault import Vault
    from memtrove.vault.beads import beads_area

    try:
        vault = Vault.open(settings.vault_path, config_dir=settings.config_dir)
    except MemtroveError as error:
        raise fail(str(error)) from None
    lanes = None
    try:
        lanes = start_lanes(settings, _say)
        if lanes is not None:
            drain += 30.0 if lanes.heavy else 15.0
        watcher = Watcher(
            vault,
            vault.config_file,
            WatchSettings(
                debounce_ms=debounce_ms,
                embed=not no_embed,
                embed_interval=embed_interval,
                checkpoint_interval=checkpoint_interval,
            ),
            log=_say,
            beads=beads_area(vault).sync,  # a change under a collection's .beads/
        )
        names = ", ".join(collection.name for collection in vault.collections()) or "none yet"
        _say(f"watching {vault.location} (collections: {names})")
        watcher.run(stop)
    except MemtroveError as error:
        raise fail(str(error)) from None
    finally:
        if lanes is not None:
            lanes.stop()
        vault.close()
    _say(
        f"stopped after {watcher.index_runs} index runs, {watcher.embed_runs} embed runs, "
        f"{watcher.checkpoints} checkpoints"
    )


def _give_up() -> None:
    _say("did not stop in time: exiting now")
    os._exit(1)
