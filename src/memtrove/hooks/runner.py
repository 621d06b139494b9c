"""Running one hook as Claude Code does: JSON in on stdin, one JSON object out, exit 0.

A hook fails open. Whatever happens (unknown hook, unreadable input, a missing, locked or
corrupt vault, a bug) the process writes exactly one valid JSON answer, exits 0 and
reports the error on stderr and in ``hooks.log``. A watchdog bounds it by time: a margin
under Claude Code's timeout for the hook (or ``MEMTROVE_HOOK_TIMEOUT`` seconds), counted
from the start of the hook (reading stdin included), it answers with the empty output, if
nothing was written yet, and ends the process. Stdin is read within that time and a size
cap (:func:`~memtrove.hooks.events.read_payload`); a payload over the cap, or still
incomplete when the time is up, is answered without.

Work after the answer (logging ``context_usage``, re-indexing) runs once the JSON is
written, so a slow write delays the exit, never the answer. Started from the fast path
(``memtrove hook NAME`` or ``python -m memtrove.hooks NAME``) the process ends with
``os._exit``: nothing is torn down, and abandoned retrieval legs cannot hold it open.

Only the standard library, the vault and the hook modules load here; Typer, Rich, httpx
and the server stacks stay off this path (a test checks the imported modules).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from memtrove.hooks.catalog import HOOKS, HookSpec
from memtrove.hooks.events import (
    HookInputError,
    HookResult,
    parse_event,
    plain_output,
    read_payload,
)
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HOOK_BUSY_TIMEOUT_MS, HookSettings
from memtrove.models.registry import ModelSettings
from memtrove.vault import Vault

__all__ = ["HOOKS", "LOG_FILE", "HookSpec", "execute", "main", "run_in_server"]

LOG_FILE = "hooks.log"
# Reading stdin gives up this much before the watchdog fires, so the log says why.
_READ_RESERVE_SECONDS = 0.2


class _Vaults:
    """Opens the vault on first use (hooks that gate early never open it) and closes it."""

    def __init__(self, settings: HookSettings, env: Mapping[str, str]) -> None:
        self._settings = settings
        self._env = env
        self._vault: Vault | None = None

    def open(self) -> Vault:
        if self._vault is None:
            self._vault = Vault.open(
                self._settings.vault_path,
                config_dir=self._settings.config_dir,
                busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS,
                models=ModelSettings.from_env(self._env),
            )
        return self._vault

    def close(self) -> None:
        if self._vault is not None:
            vault, self._vault = self._vault, None
            vault.close()


class _Answer:
    """Writes the one JSON answer; later writes (the watchdog's) are ignored."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.written = False

    def write(self, answer: dict[str, Any]) -> None:
        with self._lock:
            if self.written:
                return
            self.written = True
            # ASCII JSON: a prompt may hold lone surrogates that UTF-8 cannot encode.
            data = (json.dumps(answer, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
            try:
                self._stream.write(data)
                self._stream.flush()
            except (OSError, ValueError):
                pass  # Claude Code went away; there is nobody left to answer


def execute(
    spec: HookSpec,
    raw: bytes,
    settings: HookSettings,
    log: HookLog,
    open_vault: Callable[[], Vault],
) -> HookResult:
    """Run ``spec``'s hook on a raw payload; exceptions propagate (``main`` fails open)."""
    module = importlib.import_module(spec.module)
    run: Callable[..., HookResult] = module.run
    return run(parse_event(raw), settings, open_vault, log)


def run_in_server(
    name: str, raw: bytes, env: Mapping[str, str], vault: Vault
) -> tuple[dict[str, Any], list[Callable[[], None]]]:
    """The warm path's server side: hook ``name`` with the settings of the hook process's
    ``env``, on a reader connection of ``vault`` that waits for locks no longer than a hook
    process would (:data:`HOOK_BUSY_TIMEOUT_MS`). Returns the JSON answer and the work to
    run once it is sent (the connection is released after it); fails open like the
    process (errors go to the hook log)."""
    spec = HOOKS.get(name)
    settings = HookSettings.from_env(env)
    log = HookLog(settings.cache_dir / LOG_FILE, name or "(none)")
    if spec is None:
        log.error(f"unknown hook {name!r} (known: {', '.join(HOOKS)})")
        return plain_output(), []
    for warning in settings.warnings:
        log.warning(warning)
    held = contextlib.ExitStack()
    try:
        hook_vault = held.enter_context(vault.reader(busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS))
        result = execute(spec, raw, settings, log, lambda: hook_vault)
    except Exception as error:
        held.close()
        log.error(f"{type(error).__name__}: {error}", _trace())
        return spec.answer(), []

    def after() -> None:
        with held:
            _run_after(result, log)

    return spec.answer(result.context), [after]


def _read_stdin(stream: IO[bytes] | None, deadline: float) -> bytes:
    if stream is None:
        return b""
    return read_payload(stream, max(0.0, deadline - _READ_RESERVE_SECONDS - time.monotonic()))


def main(
    argv: Sequence[str],
    *,
    vault: str | Path | None = None,
    config_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    hard_exit: bool = False,
    watchdog: bool = True,
    started: float | None = None,
) -> int:
    """Run the hook named by ``argv[0]``; always returns 0 (or never returns: ``hard_exit``).

    ``stdin``/``stdout`` default to the process's binary streams; ``watchdog=False`` turns
    the time bound off (for callers inside another program, such as tests), though stdin
    is still read within the hook's time. ``started`` (``time.monotonic()``) is when the
    hook's time began, if before this call (the warm path read stdin first).
    """
    started = time.monotonic() if started is None else started
    name = argv[0] if argv else ""
    env = os.environ if env is None else env
    answer = _Answer(stdout if stdout is not None else sys.stdout.buffer)
    spec = HOOKS.get(name)
    try:
        settings = HookSettings.from_env(env, vault=vault, config_dir=config_dir)
    except Exception as error:  # an unusable environment: nothing to log to but stderr
        HookLog(None, name).error(f"cannot read the settings: {type(error).__name__}: {error}")
        answer.write(spec.answer() if spec is not None else plain_output())
        if hard_exit:
            _exit()
        return 0
    log = HookLog(settings.cache_dir / LOG_FILE, name or "(none)")
    timer: threading.Timer | None = None
    limit = spec.time_limit(settings.timeout_seconds) if spec is not None else 0.0
    deadline = started + limit
    if spec is not None and watchdog:

        def expire() -> None:
            late = "the work after answering" if answer.written else "the answer (sent empty)"
            answer.write(spec.answer())
            log.error(f"timed out after {limit:g} s; {late} was cut short")
            _exit()

        timer = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
        timer.daemon = True
        timer.start()
    vaults = _Vaults(settings, env)
    try:
        _answer(spec, name, settings, log, answer, vaults, stdin, deadline)
    finally:
        if timer is not None:
            timer.cancel()
    if hard_exit:
        _exit()  # the OS releases the vault; closing would only checkpoint the WAL first
    try:
        vaults.close()
    except Exception as error:
        log.error(f"closing the vault: {type(error).__name__}: {error}")
    return 0


def _answer(
    spec: HookSpec | None,
    name: str,
    settings: HookSettings,
    log: HookLog,
    answer: _Answer,
    vaults: _Vaults,
    stdin: IO[bytes] | None,
    deadline: float,
) -> None:
    """Answer once, then run the after-work; every failure is logged, none escapes."""
    try:
        if spec is None:
            log.error(f"unknown hook {name!r} (known: {', '.join(HOOKS)})")
            answer.write(plain_output())
            return
        for warning in settings.warnings:
            log.warning(warning)
        try:
            stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
            raw = _read_stdin(stream, deadline)
        except HookInputError as error:
            log.error(f"{error}; answered without it")
            answer.write(spec.answer())
            return
        result = execute(spec, raw, settings, log, vaults.open)
        answer.write(spec.answer(result.context))
        _run_after(result, log)
    except Exception as error:
        log.error(f"{type(error).__name__}: {error}", _trace())
        answer.write(spec.answer() if spec is not None else plain_output())


def _run_after(result: HookResult, log: HookLog) -> None:
    """The work after the answer, step by step; a failing step is logged, the rest run."""
    for step in result.after:
        try:
            step()
        except Exception as error:
            log.error(f"after answering: {type(error).__name__}: {error}", _trace())


def _trace() -> str:
    """The current exception's traceback (the module loads only when something failed)."""
    import traceback

    return traceback.format_exc()


def _exit() -> None:
    """End the process now: flush what was written, skip interpreter teardown."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(0)
