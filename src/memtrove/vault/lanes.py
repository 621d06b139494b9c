"""Hosting the consolidation lanes in a long-lived process (``memtrove watch``,
``memtrove mcp``, ``memtrove consolidate --loop``).

::

    host = LaneHost(settings.vault_path, settings, light=True, heavy=False)
    host.start()            # daemon threads, each with its own vault connection
    ...
    host.stop()             # bounded drain: 15 s light, 30 s heavy

Each lane ticks every interval (``MEMTROVE_CONSOLIDATION_INTERVAL``,
``MEMTROVE_HEAVY_LANE_INTERVAL``); the first tick comes one interval after start. A tick in
progress when :meth:`LaneHost.stop` is called finishes (its lease is released) or, past the
drain bound, is abandoned: its thread is a daemon, its open transaction dies with the
process, and its lease is reclaimed by the next host (at once when this host has exited,
else after the TTL). Every tick's outcome is logged on the ``memtrove.lanes`` logger.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from memtrove.config import Settings
from memtrove.locations import is_server_url

if TYPE_CHECKING:
    from memtrove.lifecycle.maintenance import LaneSettings
    from memtrove.models.registry import Models
    from memtrove.vault.consolidation import LaneTick
    from memtrove.vault.core import Vault

__all__ = ["HEAVY_DRAIN_SECONDS", "LIGHT_DRAIN_SECONDS", "LaneHost", "host_from_env"]

LIGHT_DRAIN_SECONDS = 15.0
HEAVY_DRAIN_SECONDS = 30.0
log = logging.getLogger("memtrove.lanes")


class LaneHost:
    """The light and/or heavy lane on daemon threads over ``vault_path`` (a vault file, or a
    server vault's URL).

    ``lanes`` defaults to the ``MEMTROVE_*`` lane variables of this process (a bad value is
    a ConfigError, raised here, before any thread starts); ``models`` to the ``MEMTROVE_*``
    model variables.
    """

    def __init__(
        self,
        vault_path: Path | str,
        settings: Settings,
        *,
        light: bool,
        heavy: bool,
        lanes: LaneSettings | None = None,
        models: Models | None = None,
        on_tick: Callable[[LaneTick], None] | None = None,
    ) -> None:
        from memtrove.lifecycle.maintenance import LaneSettings

        self.vault_path = vault_path if is_server_url(vault_path) else Path(vault_path)
        self.settings = settings
        self.light = light
        self.heavy = heavy
        self.lanes = lanes if lanes is not None else LaneSettings.from_env(os.environ)
        self._models = models
        self._on_tick = on_tick
        self._stop = threading.Event()
        self._threads: dict[str, threading.Thread] = {}

    @property
    def running(self) -> bool:
        return any(thread.is_alive() for thread in self._threads.values())

    def start(self) -> None:
        """Start the enabled lanes (again after :meth:`stop` is not supported)."""
        if self._threads:
            raise RuntimeError("this LaneHost has already been started")
        for lane, enabled, interval in (
            ("light", self.light, self.lanes.light_interval),
            ("heavy", self.heavy, self.lanes.heavy_interval),
        ):
            if enabled:
                thread = threading.Thread(
                    target=self._run,
                    args=(lane, interval),
                    name=f"memtrove-{lane}-lane",
                    daemon=True,
                )
                self._threads[lane] = thread
                thread.start()

    def stop(self) -> bool:
        """Ask the lanes to stop and wait for a tick in progress (15 s light, 30 s heavy, in
        parallel); True when every lane drained in time."""
        self._stop.set()
        drained, started = True, time.monotonic()
        for lane, thread in self._threads.items():
            bound = HEAVY_DRAIN_SECONDS if lane == "heavy" else LIGHT_DRAIN_SECONDS
            thread.join(max(0.0, bound - (time.monotonic() - started)))
            if thread.is_alive():
                drained = False
                log.warning("%s lane: a tick is still running; abandoning it", lane)
        return drained

    def _open(self) -> Vault:
        from memtrove.vault.core import Vault

        return Vault.open(self.vault_path, config_dir=self.settings.config_dir, models=self._models)

    def _run(self, lane: str, interval: float) -> None:
        vault = None
        try:
            while not self._stop.wait(interval):
                if vault is None:
                    try:
                        vault = self._open()
                    except Exception as error:  # a vault that cannot open now may later
                        log.warning("%s lane: cannot open the vault: %s", lane, error)
                        continue
                if lane == "heavy":
                    outcome = vault.consolidation.heavy_lane_tick(self.lanes)
                else:
                    outcome = vault.consolidation.light_lane_tick(self.lanes)
                log.info("%s lane: %s %s", lane, outcome.status, outcome.reason or "")
                if self._on_tick is not None:
                    self._on_tick(outcome)
        except Exception as error:  # never let a lane thread die with a traceback
            log.warning("%s lane stopped: %s", lane, error)
        finally:
            if vault is not None:
                vault.close()


def host_from_env(
    settings: Settings, *, short_lived: bool, env: Mapping[str, str] | None = None
) -> LaneHost | None:
    """For a server host (``memtrove mcp``): a started LaneHost with the lanes that
    MEMTROVE_ENABLE_CONSOLIDATION / MEMTROVE_HEAVY_LANE turn on, or None when neither is.
    Warns (``memtrove.lanes`` logger) when the heavy lane runs in a ``short_lived`` host,
    which may never see its quiet window, and when a lane variable is invalid (then no lane
    runs: the server itself is not refused)."""
    from memtrove.errors import ConfigError
    from memtrove.lifecycle.maintenance import LaneSettings

    try:
        lanes = LaneSettings.from_env(os.environ if env is None else env)
    except ConfigError as error:
        log.warning("consolidation lanes not started: %s", error)
        return None
    if not (lanes.light or lanes.heavy):
        return None
    if lanes.heavy and short_lived:
        log.warning(
            "the heavy lane runs in a per-session stdio host that may never see its quiet "
            "window; host it in `memtrove watch` instead"
        )
    host = LaneHost(
        settings.vault_path, settings, light=lanes.light, heavy=lanes.heavy, lanes=lanes
    )
    host.start()
    return host
