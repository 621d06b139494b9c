"""The stdio front of ``memtrove mcp``: the handshake is answered before the MCP SDK loads.

Importing the MCP SDK takes most of a second (its protocol types are hundreds of pydantic
models), and an MCP client waits for ``initialize`` and ``tools/list`` before the agent can
start. Their answers never change for a given memtrove and SDK, so the front keeps the
SDK's own answers from earlier runs in ``$XDG_CACHE_HOME/memtrove/mcp-answers.json`` and
replies from there at once, while the SDK imports.

The SDK still sees every message, in order, as if it had been first: the front owns the
process's real stdin and stdout and puts the SDK on a pair of pipes (``fd 0``/``fd 1``
are moved onto them, so the SDK's own stdio transport is used unchanged). A request the
front answered reaches the SDK under a private id; the SDK's answer to it is dropped, after
being compared with what the client got (a difference is logged and the stored answer
replaced, so a stale file heals itself on the next start). Every other message, in either
direction, passes through untouched; answers to the kinds of request kept here are recorded
the first time the SDK gives them.

Stored answers are keyed by the exact request (method and parameters) and are valid for one
fingerprint: memtrove's version, the SDK's files and this package's files. Only the
standard library is imported here.

Ending: the SDK drops the calls still in flight when its input ends, and it keeps a copy of
its output pipe open for good (so that pipe never reads as ended). So the front tracks every
request it passed on; when the client hangs up it waits until the SDK has answered them all
(at most :data:`DRAIN_SECONDS`), then closes the SDK's input, and the SDK's last output is
followed by a marker line of the front's own that ends the relay. A client that hangs up
with nothing pending is not kept waiting for the SDK: if the SDK has not ended
:data:`SDK_EXIT_SECONDS` later (it may still be importing), the process ends there.
SIGTERM ends the server the same way, as if the client had hung up (the calls in flight are
answered first); a second SIGTERM ends the process at once.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import logging
import os
import re
import select
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from memtrove import __version__
from memtrove.files import exclusive_lock, write_atomic
from memtrove.text import scrub_json

__all__ = [
    "ANSWERS_FILE",
    "DRAIN_SECONDS",
    "SDK_EXIT_SECONDS",
    "STOP_SECONDS",
    "STORED_METHODS",
    "Answers",
    "serve_stdio",
]

logger = logging.getLogger("memtrove.mcp")

ANSWERS_FILE = "mcp-answers.json"
# Requests whose answer depends only on the request (and the installed code).
STORED_METHODS = frozenset(
    {"initialize", "server/discover", "tools/list", "resources/templates/list", "prompts/list"}
)
MAX_ANSWERS = 64
DRAIN_SECONDS = 30.0
"""How long calls sent before the client hung up may still take to be answered."""
SDK_EXIT_SECONDS = 0.3
"""How long the SDK gets to end once the client is gone and every call is answered."""
STOP_SECONDS = 15.0
"""The same after SIGTERM: long enough for the SDK to finish importing and its host to stop
(a host of consolidation lanes drains them once the SDK has ended)."""
_PRIVATE_ID = "memtrove-front-"
MAX_INT_DIGITS = 4300
"""Python's own limit on reading a number (``sys.get_int_max_str_digits``)."""
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The longest line read as one message: a longer one is answered -32600 and read past in
chunks, so a client that sends a gigabyte without a newline cannot fill the memory."""


def _fingerprint() -> str:
    """memtrove's version plus size and mtime of the SDK's and this package's source files."""
    parts = [__version__]
    for package in ("mcp", "mcp_types"):
        with contextlib.suppress(ImportError, ValueError, AttributeError):
            spec = importlib.util.find_spec(package)
            if spec is not None and spec.origin:
                parts.append(_stat_of(Path(spec.origin).parent))
    parts.append(_stat_of(Path(__file__).parent))
    return "|".join(parts)


def _stat_of(folder: Path) -> str:
    entries = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(folder), key=lambda item: item.name):
            if entry.name.endswith(".py") or entry.name == "py.typed":
                status = entry.stat()
                entries.append(f"{entry.name}:{status.st_size}:{status.st_mtime_ns}")
    return f"{folder}#{','.join(entries)}"


_VERSION_META = "io.modelcontextprotocol/protocolVersion"


def request_key(method: str, params: Any, version: str | None) -> str:
    """What a stored answer is keyed by: the method, the protocol version of the session
    and the parameters without ``_meta`` (which names the client, not the question). An
    ``initialize`` answer depends on the version asked for, nothing else."""
    if method == "initialize":
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        return json.dumps([method, asked], separators=(",", ":"))
    if isinstance(params, dict):
        params = {name: value for name, value in params.items() if name != "_meta"}
    return json.dumps([method, version, params or None], sort_keys=True, separators=(",", ":"))


def _meta_version(params: Any) -> str | None:
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(_VERSION_META) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


class Answers:
    """The stored answers: read once at start, rewritten (atomically) when one is learned."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self._lock = threading.Lock()
        self._answers: dict[str, Any] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("fingerprint") == fingerprint:
            answers = data.get("answers")
            if isinstance(answers, dict):
                self._answers = answers

    def get(self, key: str) -> Any:
        with self._lock:
            return self._answers.get(key)

    @contextlib.contextmanager
    def settled(self) -> Any:
        """Hold off writing the file for the block (to end the process between writes)."""
        with self._lock:
            yield

    def store(self, key: str, result: Any) -> None:
        """Keep ``result`` for ``key`` and rewrite the file, merged with what other
        processes stored meanwhile (under a lock file, so none of their answers is lost)."""
        with self._lock:
            if self._answers.get(key) == result:
                return
            self._answers.pop(key, None)
            self._answers[key] = result
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with exclusive_lock(self.path.with_suffix(".lock")), self._lock:
                on_disk = Answers(self.path, self.fingerprint)._answers
                merged = {**on_disk, **self._answers}
                while len(merged) > MAX_ANSWERS:
                    del merged[next(iter(merged))]
                self._answers = merged
                document = {"fingerprint": self.fingerprint, "answers": merged}
                write_atomic(
                    self.path, json.dumps(document, separators=(",", ":")), prefix=".mcp-answers-"
                )
        except OSError as error:  # a read-only cache only costs speed
            logger.warning("cannot store MCP answers in %s: %s", self.path, error)


class _Front:
    """Reads the client (real stdin), feeds the SDK (pipe), relays the SDK's output."""

    def __init__(self, answers: Answers, client_in: IO[bytes], client_out: int) -> None:
        self.answers = answers
        self.client_in = client_in
        self.client_out = client_out
        self.sdk_in = -1
        self._end_lock = threading.Lock()  # the SDK's input is ended once, by one thread
        self._ending = False
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._answered: dict[str, tuple[str, Any]] = {}  # private id -> (key, result sent)
        self._recording: dict[str, str] = {}  # client id (JSON) -> key
        self._lock = threading.Lock()
        self._pending: set[str] = set()  # ids (JSON) of client requests the SDK owes
        self._all_answered = threading.Condition(self._lock)
        self.sdk_done = threading.Event()
        self.version: str | None = None  # the session's protocol version, once known
        # Ends the relay; the token keeps anything the SDK writes from passing for it.
        marker = {"jsonrpc": "2.0", "method": f"{_PRIVATE_ID}end/{os.urandom(8).hex()}"}
        self.end_marker = _line(marker)

    def to_client(self, data: bytes) -> None:
        with self._write_lock:
            view = memoryview(data)
            while view:
                written = os.write(self.client_out, view)
                view = view[written:]

    def to_sdk(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.sdk_in, view)
            view = view[written:]

    def read_client(self) -> None:
        """Until the client hangs up; then, once the SDK has answered every call the client
        sent, its input is closed so that it ends too. If it does not end at once (it may
        still be importing, with nothing left to do), the process ends without it."""
        try:
            for line in _lines(self.client_in, MAX_MESSAGE_BYTES):
                if line is None:
                    text = f"Invalid Request: a message of more than {MAX_MESSAGE_BYTES:,} bytes"
                    self.to_client(_line(_error(None, -32600, text)))
                    continue
                self._from_client(line if line.endswith(b"\n") else line + b"\n")
        except OSError as error:
            if not self._ending:
                logger.warning("reading the client failed: %s", error)
        finally:
            self.end()

    def end(self, grace: float = SDK_EXIT_SECONDS) -> None:
        """Once every call passed on is answered (or :data:`DRAIN_SECONDS` have passed),
        end the SDK's input; if the SDK has not ended ``grace`` seconds later, end the
        process. Only the first caller (the client hanging up, or SIGTERM) does it."""
        with self._end_lock:
            if self._ending:
                return
            self._ending = True
        self._await_answers()
        # /dev/null takes the pipe's place under the same number: the pipe's last write end
        # closes (so the SDK reads the end of its input), and a write still under way in the
        # reading thread goes nowhere instead of to whatever might reuse the number.
        null = os.open(os.devnull, os.O_WRONLY)
        with contextlib.suppress(OSError):  # an SDK never given an input has none to end
            os.dup2(null, self.sdk_in)
        os.close(null)
        if not self.sdk_done.wait(grace):
            with self.answers.settled():
                os._exit(0)  # every answer owed is written (os.write, unbuffered)

    def stop(self, signum: int, frame: object) -> None:
        """SIGTERM: end as if the client had hung up; the next SIGTERM ends the process."""
        signal.signal(signum, signal.SIG_DFL)
        threading.Thread(
            target=self.end, args=(STOP_SECONDS,), name="mcp-front-stop", daemon=True
        ).start()

    def _await_answers(self) -> None:
        with self._all_answered:
            done = self._all_answered.wait_for(
                lambda: not self._pending or self.sdk_done.is_set(), timeout=DRAIN_SECONDS
            )
            if not done:
                logger.warning(
                    "%d calls were still unanswered %.0f s after the client hung up",
                    len(self._pending),
                    DRAIN_SECONDS,
                )

    def sdk_finished(self) -> None:
        """The SDK has ended: nothing pending will be answered any more."""
        with self._all_answered:
            self.sdk_done.set()
            self._all_answered.notify_all()

    def _expect(self, message: dict[str, Any]) -> None:
        """Note a request passed on to the SDK (before it can be answered)."""
        with self._lock:
            self._pending.add(json.dumps(message["id"]))

    def _note_cancel(self, message: dict[str, Any]) -> None:
        """A cancelled request is never answered (the SDK drops it): stop waiting for it."""
        params = message.get("params")
        if message.get("method") != "notifications/cancelled" or not isinstance(params, dict):
            return
        identifier = params.get("requestId")
        if _is_request_id(identifier):
            self._resolve(json.dumps(identifier))

    def _resolve(self, identifier: str) -> None:
        with self._all_answered:
            self._pending.discard(identifier)
            if not self._pending:
                self._all_answered.notify_all()

    def _from_client(self, line: bytes) -> None:
        line = _without_lone_surrogates(line)
        message, refusal = _parse(line)
        if refusal is not None:
            # The SDK would drop it without a word (or fail on it): the client hears why.
            self.to_client(_line(refusal))
            return
        assert message is not None
        if "id" not in message:
            self._note_cancel(message)
        if not _is_request(message):
            self.to_sdk(line)  # a notification, or the client's answer to the SDK
            return
        method = message["method"]
        if method not in STORED_METHODS:
            self._expect(message)
            self.to_sdk(line)
            return
        params = message.get("params")
        key = request_key(str(method), params, _meta_version(params) or self.version)
        result = self.answers.get(key)
        if result is None:
            with self._lock:
                self._recording[json.dumps(message["id"])] = key
            self._expect(message)
            self.to_sdk(line)
            return
        private = f"{_PRIVATE_ID}{next(self._ids)}"
        with self._lock:
            self._answered[private] = (key, result)
            self._learn_version(method, result)
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        self.to_client(_line(answer))
        self.to_sdk(_line({**message, "id": private}))

    def relay_sdk(self, sdk_out: IO[bytes]) -> None:
        """Copies the SDK's output to the client, dropping its answers to private ids, until
        the front's end marker."""
        for line in sdk_out:
            if line == self.end_marker:
                return
            message = _object(line)
            is_answer = message is not None and "method" not in message and "id" in message
            if is_answer and message is not None and self._settle(message):
                continue
            with contextlib.suppress(OSError):
                self.to_client(line if line.endswith(b"\n") else line + b"\n")
            if is_answer and message is not None:
                self._resolve(json.dumps(message["id"]))  # written: no longer owed

    def _settle(self, message: dict[str, Any]) -> bool:
        """Records or checks an answer; True when it was to a private id (drop it)."""
        identifier = message["id"]
        with self._lock:
            if isinstance(identifier, str) and identifier in self._answered:
                key, sent = self._answered.pop(identifier)
                private = True
            else:
                key = self._recording.pop(json.dumps(identifier), "")
                sent = None
                private = False
        result = message.get("result")
        with self._lock:
            if key.startswith('["initialize"'):
                self._learn_version("initialize", result)
        if key and isinstance(result, dict):
            if private and result != sent:
                logger.warning("a stored MCP answer was out of date; it is replaced")
            self.answers.store(key, result)
        return private

    def _learn_version(self, method: object, result: Any) -> None:
        """The negotiated version, from an ``initialize`` answer (the lock is held)."""
        if method == "initialize" and isinstance(result, dict):
            version = result.get("protocolVersion")
            if isinstance(version, str):
                self.version = version


_OVERSIZED = object()  # stands for a number of more digits than Python reads


def _read(line: bytes) -> tuple[Any, bool]:
    """(the JSON value of ``line``, whether it held a number too long to read: such a number
    is :data:`_OVERSIZED` in the value). Raises ValueError or RecursionError."""
    oversized = False

    def number(digits: str) -> object:
        nonlocal oversized
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            oversized = True  # int() would refuse it too, after quadratic work
            return _OVERSIZED
        return int(digits)

    return json.loads(line, parse_int=number), oversized


def _lines(stream: IO[bytes], most: int) -> Iterator[bytes | None]:
    """Each line of ``stream``; None for one longer than ``most`` bytes (its newline aside),
    which is read past without being kept."""
    while line := stream.readline(most + 1):
        if len(line) <= most or (len(line) == most + 1 and line.endswith(b"\n")):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(1 << 20)
        yield None


def _parse(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the message, None) when the SDK should see it; (None, a JSON-RPC error answer) when
    it is not a message the SDK would answer: not JSON (or nested too deep to read), not
    one object (a batch), a request with an invalid id, version or params, or a number
    of more digits than Python reads."""
    try:
        message, oversized = _read(line)
    except (ValueError, RecursionError):
        return None, _error(None, -32700, "Parse error: not one JSON value")
    if not isinstance(message, dict):
        return None, _error(None, -32600, "Invalid Request: send one JSON-RPC object per line")
    identifier = message.get("id")
    known = identifier if _is_request_id(identifier) else None
    if oversized:
        text = f"Invalid params: a number has more than {MAX_INT_DIGITS} digits"
        return None, _error(known, -32602, text)
    if "method" in message and "id" not in message:
        return message, None  # a notification: the SDK takes what it knows
    if "method" not in message and ("result" in message or "error" in message):
        return message, None  # the client's answer to a request of the SDK
    if "params" in message and not isinstance(message["params"], dict):
        return None, _error(known, -32602, "Invalid params: params must be an object")
    if not _is_request(message):
        return None, _error(known, -32600, "Invalid Request: not a JSON-RPC 2.0 request")
    return message, None


def _object(line: bytes) -> dict[str, Any] | None:
    """The JSON object ``line`` holds (the SDK's output), None for anything else."""
    try:
        message, _ = _read(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _error(identifier: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": identifier, "error": {"code": code, "message": message}}


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _without_lone_surrogates(line: bytes) -> bytes:
    """``line`` with JSON text holding lone surrogates (``\\ud800`` escapes) rewritten with
    U+FFFD instead, so that no answer quoting it fails to encode as UTF-8 and goes missing.
    Valid surrogate pairs (emoji sent escaped) survive: they decode to one character."""
    if not _SURROGATE_ESCAPE.search(line):
        return line
    try:
        message, oversized = _read(line)
    except (ValueError, RecursionError):
        return line
    if oversized:
        return line  # refused as it is
    cleaned = scrub_json(message)
    return line if cleaned == message else _line(cleaned)


def _is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _is_request(message: dict[str, Any]) -> bool:
    """A JSON-RPC request the SDK answers (it silently drops one of any other shape)."""
    return (
        message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and _is_request_id(message.get("id"))
        and isinstance(message.get("params", {}), dict)
    )


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _write_if_room(descriptor: int, data: bytes, timeout: float = 1.0) -> None:
    """Write a short line (under ``PIPE_BUF``, so it never blocks once the pipe has room)
    unless the pipe stays full, as when the relay is stuck on a client that reads nothing."""
    with contextlib.suppress(OSError, ValueError):
        _, writable, _ = select.select([], [descriptor], [], timeout)
        if writable:
            os.write(descriptor, data)


def serve_stdio(run_sdk: Callable[[], None], cache_dir: Path) -> None:
    """Serve MCP over this process's stdio: the front in two threads, ``run_sdk`` (which
    imports the SDK and serves over ``fd 0``/``fd 1``) in the calling thread."""
    answers = Answers(cache_dir / ANSWERS_FILE, _fingerprint())
    client_in = os.fdopen(os.dup(0), "rb")
    client_out = os.dup(1)
    sdk_in_read, sdk_in_write = os.pipe()
    sdk_out_read, sdk_out_write = os.pipe()
    os.dup2(sdk_in_read, 0)
    os.dup2(sdk_out_write, 1)
    os.close(sdk_in_read)
    marker_out = sdk_out_write  # the front's own way into the pipe, for the end marker
    front = _Front(answers, client_in, client_out)
    front.sdk_in = sdk_in_write
    sdk_out = os.fdopen(sdk_out_read, "rb")
    reader = threading.Thread(target=front.read_client, name="mcp-front-reader", daemon=True)
    relay = threading.Thread(
        target=front.relay_sdk, args=(sdk_out,), name="mcp-front-relay", daemon=True
    )
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, front.stop)
    reader.start()
    relay.start()
    try:
        run_sdk()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        # The SDK is done and all it wrote is in the pipe, but it keeps a copy of the pipe's
        # write end open: the marker after its last line ends the relay instead.
        front.sdk_finished()
        _write_if_room(marker_out, front.end_marker)
        for descriptor in (marker_out, 1):
            with contextlib.suppress(OSError):
                os.close(descriptor)
        relay.join(timeout=5)
