"""A hook through a running ``memtrove serve`` (the warm path; see :mod:`memtrove.warm`).

``memtrove hook NAME`` tries this first: when a server of the same vault is running, the
payload goes to ``POST /warm/hook/NAME`` and the server, with its models and vectors
already loaded, answers exactly what the hook would have answered in-process. Only the
standard library is imported, so a hook that finds no server has lost a file read.
"""

from __future__ import annotations

import json
import math
import os
import time

from memtrove.hooks.catalog import HOOKS
from memtrove.locations import shown_location
from memtrove.paths import cache_location, config_location, vault_location
from memtrove.warm import WarmUnavailable, encode_payload, find_server, forwarded_env

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["MAX_FORWARDED_BYTES", "RemoteAnswer", "answer_from_server"]

# The server's request cap is 1 MB and base64 adds a third; larger payloads run in-process.
MAX_FORWARDED_BYTES = 600_000


class RemoteAnswer:
    """The server's answer to print (None: run in-process) and why it was not used."""

    __slots__ = ("answer", "note")

    def __init__(self, answer: dict[str, Any] | None, note: str = "") -> None:
        self.answer = answer
        self.note = note


def answer_from_server(
    name: str,
    raw: bytes,
    env: Mapping[str, str] | None = None,
    *,
    vault: str | None = None,
    config_dir: str | None = None,
    deadline: float | None = None,
) -> RemoteAnswer:
    """Ask a running server to run hook ``name`` on ``raw``; ``answer`` None means run it
    in-process (no server, or the server could not take it: the note says why). The server
    gets the hook's time limit, or what is left of it before ``deadline`` (monotonic)."""
    env = os.environ if env is None else env
    spec = HOOKS.get(name)
    if spec is None or len(raw) > MAX_FORWARDED_BYTES:
        return RemoteAnswer(None)
    try:
        vault_path = vault_location(env, vault)
        config_path = config_location(env, config_dir)
        cache = cache_location(env)
    except (OSError, RuntimeError, ValueError, KeyError):  # no HOME: the runner reports it
        return RemoteAnswer(None)
    server = find_server(cache, vault_path, env)
    if server is None:
        return RemoteAnswer(None)
    token = env.get("MEMTROVE_API_TOKEN", "").strip() or None
    if server.token_required and token is None:
        return RemoteAnswer(None, "the running server needs MEMTROVE_API_TOKEN; ran in-process")
    settings = forwarded_env(env) | {
        "MEMTROVE_VAULT": shown_location(vault_path),  # compared only: no password sent
        "MEMTROVE_CONFIG_DIR": config_path,
    }
    timeout = spec.time_limit(_configured_timeout(env))
    if deadline is not None:
        timeout = min(timeout, deadline - time.monotonic())
        if timeout <= 0:
            return RemoteAnswer(spec.answer(), "no time was left to ask the running server")
    try:
        reply = server.post(
            f"/warm/hook/{name}",
            {"payload": encode_payload(raw), "env": settings},
            token=token,
            timeout=timeout,
        )
    except WarmUnavailable as error:
        if error.timed_out:  # too late to start over in-process: fail open
            return RemoteAnswer(spec.answer(), f"the running server timed out: {error}")
        return RemoteAnswer(None, f"the running server did not answer ({error}); ran in-process")
    answer = reply.get("answer")
    if not isinstance(answer, dict):
        return RemoteAnswer(None, "the running server's answer had no hook output")
    return RemoteAnswer(answer)


def _configured_timeout(env: Mapping[str, str]) -> float | None:
    try:
        seconds = float(env.get("MEMTROVE_HOOK_TIMEOUT", "").strip() or 0)
    except ValueError:
        return None
    return seconds if 0 < seconds < math.inf else None  # inf and nan: the default


def run(
    name: str, env: Mapping[str, str] | None = None, *, started: float | None = None
) -> tuple[bytes, dict[str, Any] | None]:
    """``memtrove hook NAME``'s first step: read stdin, try the server. Returns the payload
    (for the in-process run) and the answer when the server gave one, or when the payload
    could not be read within the hook's time and size bounds (answered without it).
    ``started`` (monotonic) is when the hook's time began."""
    from memtrove.hooks.events import HookInputError, read_payload

    env = os.environ if env is None else env
    spec = HOOKS.get(name)
    if spec is None:
        return b"", None  # the runner reports the unknown hook
    deadline = (time.monotonic() if started is None else started) + spec.time_limit(
        _configured_timeout(env)
    )
    stream = os.fdopen(os.dup(0), "rb")
    try:
        raw = read_payload(stream, deadline - time.monotonic())
    except HookInputError as error:
        _log_note(name, env, f"{error}; answered without it")
        return b"", spec.answer()
    except OSError:
        raw = b""
    finally:
        stream.close()
    try:
        remote = answer_from_server(name, raw, env, deadline=deadline)
    except Exception as error:  # an optimisation must never cost the answer
        remote = RemoteAnswer(None, f"the warm path failed ({type(error).__name__}: {error})")
    if remote.note:
        _log_note(name, env, remote.note)
    return raw, remote.answer


def _log_note(name: str, env: Mapping[str, str], note: str) -> None:
    try:
        from pathlib import Path

        from memtrove.hooks.hooklog import HookLog

        HookLog(Path(cache_location(env)) / "hooks.log", name).warning(note)
    except Exception:  # logging must never cost the answer
        pass


def encode_answer(answer: Mapping[str, Any]) -> bytes:
    """One ASCII JSON line, as the runner writes it."""
    return (json.dumps(answer, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
