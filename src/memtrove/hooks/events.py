"""Claude Code's hook payloads, normalized; and the JSON a hook answers with.

Claude Code writes one JSON object on a hook's stdin. Only a few fields matter here and
they arrive in snake_case (current Claude Code) or camelCase (older hosts and other
agents), so :func:`parse_event` reads both into one frozen :class:`HookEvent`. Anything
unreadable (empty stdin, invalid JSON or UTF-8, a JSON value that is not an object, a
field of the wrong type) reads as the empty event: a hook never fails on its input.

The payload itself is read by :func:`read_payload`, bounded in time and size: a writer that
never closes its end, or writes without end, costs the hook neither its deadline nor memory.
"""

import json
import math
import os
import select
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import IO, Any, NamedTuple

from memtrove.patterns import LazyPattern

__all__ = [
    "MAX_STDIN_BYTES",
    "HookEvent",
    "HookInputError",
    "HookResult",
    "context_output",
    "estimate_tokens",
    "parse_event",
    "plain_output",
    "read_payload",
]

# Claude Code's payloads are a few kilobytes; a prompt pasted with a whole file stays far
# below this. Reading is capped so a runaway writer cannot exhaust memory.
MAX_STDIN_BYTES = 8 * 1024 * 1024
_CHUNK_BYTES = 64 * 1024


class HookInputError(ValueError):
    """The payload could not be read whole: larger than the cap, or still incomplete when
    the hook's time ran out. The hook answers without it (fail-open)."""


def read_payload(stream: IO[bytes], timeout: float, limit: int = MAX_STDIN_BYTES) -> bytes:
    """The payload on ``stream``, read within ``timeout`` seconds and ``limit`` bytes.

    Reading ends at the end of input, or as soon as what arrived is one complete JSON object
    and nothing more is waiting: Claude Code closes its end, but a writer that does not is
    answered all the same (an object cannot go on once its braces close, so nothing valid is
    cut short). A terminal gives ``b""``. More than ``limit`` bytes, or input still
    incomplete after ``timeout``, raise :class:`HookInputError`; nothing more is read then.
    A stream without a file descriptor (an in-memory buffer) is read at once.
    """
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise _too_large(limit) from None
        return data
    if os.isatty(descriptor):
        return b""
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    while True:
        if not _readable(descriptor, deadline - time.monotonic()):
            raise HookInputError(
                f"stdin was still open after {timeout:g} s with an incomplete payload "
                f"({size} bytes)"
            )
        chunk = os.read(descriptor, _CHUNK_BYTES)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        # Checked only when the writer pauses on a closing brace: one parse per pause.
        paused = chunk.rstrip().endswith(b"}") and not _readable(descriptor, 0.0)
        if paused and _is_one_object(b"".join(chunks)):
            break
    return b"".join(chunks)


def _too_large(limit: int) -> HookInputError:
    return HookInputError(f"the payload is larger than {limit / (1024 * 1024):g} MB")


def _readable(descriptor: int, timeout: float) -> bool:
    """True when a read would not block; where the descriptor cannot be polled (Windows
    pipes) reading is left to block, and the runner's watchdog still bounds the hook."""
    try:
        ready, _, _ = select.select([descriptor], [], [], max(0.0, timeout))
    except (OSError, ValueError):
        return True
    return bool(ready)


def _is_one_object(data: bytes) -> bool:
    text = data.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
    if not text.startswith("{"):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


_NO_INPUT: Mapping[str, Any] = MappingProxyType({})  # the default ``tool_input``, read-only


class HookEvent(NamedTuple):
    """The fields of a hook payload that memtrove's hooks read.

    ``source`` is SessionStart's ``startup|resume|clear|compact``; ``trigger`` is
    PreCompact's ``manual|auto``. Strings are empty when the payload lacks them.

    A named tuple rather than a dataclass, as every record a hook process builds: importing
    :mod:`dataclasses` (and through it :mod:`inspect`) costs a prompt's process ~10 ms
    (``tests/hooks/test_surfacing_imports.py`` keeps it out). ``_replace`` makes a changed copy.
    """

    hook_event_name: str = ""
    session_id: str = ""
    prompt: str = ""
    transcript_path: str = ""
    cwd: str = ""
    source: str = ""
    trigger: str = ""
    tool_input: Mapping[str, Any] = _NO_INPUT


class HookResult:
    """What a hook produced: the context to inject (empty: none) and work to do after the
    answer is written (logging), which the runner runs once the JSON is out, so a slow or
    locked vault can delay the log but never the answer.

    ``surfaced`` (context-surfacing): the injected documents (collection/path) in order;
    ``copies``: key -> the paths of its identical copies; ``tokens``: the estimated tokens of
    the whole injection; read by ``memtrove eval --method surfacing``.
    """

    __slots__ = ("after", "context", "copies", "surfaced", "tokens")

    def __init__(
        self,
        context: str = "",
        after: list[Callable[[], object]] | None = None,
        surfaced: list[str] | None = None,
        copies: dict[str, tuple[str, ...]] | None = None,
        tokens: int = 0,
    ) -> None:
        self.context = context
        self.after: list[Callable[[], object]] = [] if after is None else after
        self.surfaced: list[str] = [] if surfaced is None else surfaced
        self.copies: dict[str, tuple[str, ...]] = {} if copies is None else copies
        self.tokens = tokens

    def _fields(self) -> tuple[object, ...]:
        return (self.context, self.after, self.surfaced, self.copies, self.tokens)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HookResult) or type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (
            f"HookResult(context={self.context!r}, after={self.after!r}, "
            f"surfaced={self.surfaced!r}, copies={self.copies!r}, tokens={self.tokens!r})"
        )


_SURROGATE = LazyPattern("[\ud800-\udfff]")  # as memtrove.text.scrub; stdlib only here


def _text(payload: Mapping[str, Any], snake: str, camel: str) -> str:
    value = payload.get(snake)
    if value is None:
        value = payload.get(camel)
    if not isinstance(value, str):
        return ""
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def parse_event(raw: bytes | str) -> HookEvent:
    """Read a hook payload; anything unreadable gives the empty :class:`HookEvent`."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    text = raw.strip().lstrip("\ufeff")
    if not text:
        return HookEvent()
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        return HookEvent()
    if not isinstance(payload, dict):
        return HookEvent()
    tool_input = payload.get("tool_input", payload.get("toolInput"))
    return HookEvent(
        hook_event_name=_text(payload, "hook_event_name", "hookEventName"),
        session_id=_text(payload, "session_id", "sessionId").strip(),
        prompt=_text(payload, "prompt", "prompt"),
        transcript_path=_text(payload, "transcript_path", "transcriptPath"),
        cwd=_text(payload, "cwd", "cwd"),
        source=_text(payload, "source", "source"),
        trigger=_text(payload, "trigger", "trigger"),
        tool_input=tool_input if isinstance(tool_input, dict) else {},
    )


def plain_output() -> dict[str, Any]:
    """The answer of a hook that injects nothing (PreCompact, Stop, or an unknown hook)."""
    return {"continue": True, "suppressOutput": False}


def context_output(hook_event_name: str, context: str = "") -> dict[str, Any]:
    """The answer of a hook whose event takes context; ``context`` may be empty."""
    return {
        "continue": True,
        "suppressOutput": False,
        "hookSpecificOutput": {"hookEventName": hook_event_name, "additionalContext": context},
    }


def estimate_tokens(text: str) -> int:
    """Tokens as the spec counts them everywhere: ``ceil(characters / 4)``."""
    return math.ceil(len(text) / 4)
