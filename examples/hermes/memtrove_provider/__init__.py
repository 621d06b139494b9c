"""memtrove as a Hermes Agent memory provider (a Hermes plugin: copy this folder into Hermes'
plugins folder; ``plugin.yaml`` names it).

- ``initialize``: ``memtrove surface --bootstrap`` for the session, kept for the first turn.
- ``queue_prefetch`` / ``prefetch``: ``memtrove surface --context`` on the user's message,
  in the background; the next turn's prefetch returns it (with the bootstrap, once).
- ``sync_turn``: appends the turn to a JSONL transcript under ``<hermes_home>/memtrove``;
  ``on_session_end`` runs the Stop hooks on it, ``on_pre_compress`` ``precompact-extract``.
  Only the primary agent writes (a subagent, cron or flush context reads only).
- tools ``memtrove_retrieve``, ``memtrove_get``, ``memtrove_session_log``,
  ``memtrove_timeline``, ``memtrove_similar``: ``memtrove serve``'s REST API
  (``POST /retrieve``, ``GET /documents/{docid}``, ``GET /sessions``,
  ``GET /timeline/{docid}``, ``GET /graph/similar/{docid}``) on 127.0.0.1.

Settings (environment): ``MEMTROVE_BIN`` (default ``memtrove`` on PATH),
``MEMTROVE_SERVE_PORT`` (7438), ``MEMTROVE_API_TOKEN`` (sent as the bearer token when set).
Standard library only; every failure is logged and answered with nothing, never raised into
the agent's turn.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

try:  # the base class Hermes provides; the provider also runs without Hermes (tests, scripts)
    from agent.memory_provider import MemoryProvider  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on where it runs
    MemoryProvider = object

logger = logging.getLogger(__name__)

DEFAULT_PORT = 7438
SURFACE_SECONDS = 10
STOP_SECONDS = 30
REST_SECONDS = 5.0
STOP_HOOKS = ("decision-extractor", "handoff-generator", "feedback-loop")


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"name": name, "description": description, "parameters": schema}


DOCID = {"docid": {"type": "string", "description": "Document id (from a result)."}}
LIMIT = {"limit": {"type": "integer", "description": "How many."}}
TOOLS = [
    _tool(
        "memtrove_retrieve",
        "Search long-term memory (routed: keyword, semantic, causal, timeline questions).",
        {"query": {"type": "string"}, **LIMIT},
        ["query"],
    ),
    _tool("memtrove_get", "Read one memory document in full.", DOCID, ["docid"]),
    _tool("memtrove_session_log", "Recent sessions, newest first.", LIMIT, []),
    _tool(
        "memtrove_timeline",
        "Documents written just before and after one.",
        {**DOCID, "before": {"type": "integer"}, "after": {"type": "integer"}},
        ["docid"],
    ),
    _tool(
        "memtrove_similar", "Documents closest in meaning to one.", {**DOCID, **LIMIT}, ["docid"]
    ),
]


def rest_call(port: int, method: str, path: str, body: dict | None = None) -> dict | None:
    """One call to ``memtrove serve`` on 127.0.0.1; the JSON answer (errors included), or
    None when the server cannot be reached."""
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("MEMTROVE_API_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, headers=headers, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=REST_SECONDS) as response:
            return json.loads(response.read().decode())
    except urllib.error.HTTPError as error:  # 4xx/5xx answers carry {"error": ...}
        try:
            return json.loads(error.read().decode())
        except ValueError:
            return {"error": f"HTTP {error.code}"}
    except (OSError, ValueError) as error:
        logger.debug("memtrove: %s %s failed: %s", method, path, error)
        return None


def _number(value: Any, default: int, low: int = 1) -> int:
    """``value`` as a whole number of at least ``low``; ``default`` when it is none."""
    if isinstance(value, bool):
        return default
    try:
        return max(low, int(value))
    except (TypeError, ValueError, OverflowError):
        return default


class MemtroveProvider(MemoryProvider):  # type: ignore[misc,valid-type]
    """The provider Hermes registers (see :func:`register`)."""

    def __init__(self) -> None:
        self._bin = ""
        self._port = DEFAULT_PORT
        self._session_id = ""
        self._transcript = ""
        self._primary = True
        self._bootstrap = ""
        self._prefetched = ""
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    @property
    def name(self) -> str:
        return "memtrove"

    def is_available(self) -> bool:
        return bool(os.environ.get("MEMTROVE_BIN") or shutil.which("memtrove"))

    def _run(self, args: list[str], payload: dict, seconds: int) -> str:
        if not self._bin:
            return ""
        try:
            done = subprocess.run(
                [self._bin, *args],
                input=json.dumps(payload),
                capture_output=True,
                text=True,
                timeout=seconds,
            )
        except (OSError, subprocess.SubprocessError) as error:
            logger.debug("memtrove %s failed: %s", " ".join(args), error)
            return ""
        return done.stdout if done.returncode == 0 else ""

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._bin = os.environ.get("MEMTROVE_BIN") or shutil.which("memtrove") or ""
        self._port = _number(os.environ.get("MEMTROVE_SERVE_PORT"), DEFAULT_PORT)
        self._primary = str(kwargs.get("agent_context") or "primary") == "primary"
        home = Path(kwargs.get("hermes_home") or Path.home() / ".hermes")
        self._switch(session_id, home)
        payload = {"session_id": self._session_id}
        self._bootstrap = self._run(["surface", "--bootstrap", "--stdin"], payload, SURFACE_SECONDS)

    def _switch(self, session_id: str, home: Path) -> None:
        self._session_id = str(session_id or "").strip()
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self._session_id)[:120]
        self._transcript = str(home / "memtrove" / f"{safe or 'session'}.jsonl")

    def system_prompt_block(self) -> str:
        if not self._bin:
            return ""
        return (
            "# memtrove memory\nActive. memtrove_retrieve searches memory; memtrove_get reads "
            "a document; memtrove_session_log, memtrove_timeline and memtrove_similar explore."
        )

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        if not self._bin or not query:
            return
        payload = {"session_id": self._session_id, "prompt": query}

        def work() -> None:
            found = self._run(["surface", "--context", "--stdin"], payload, SURFACE_SECONDS)
            with self._lock:
                self._prefetched = found.strip()

        if self._worker is not None:
            self._worker.join(timeout=SURFACE_SECONDS)
        self._worker = threading.Thread(target=work, daemon=True, name="memtrove-prefetch")
        self._worker.start()

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._worker is not None:
            self._worker.join(timeout=SURFACE_SECONDS)
        with self._lock:
            parts = [self._bootstrap.strip(), self._prefetched]
            self._bootstrap = self._prefetched = ""
        return "\n\n".join(part for part in parts if part)

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "") -> None:
        if not self._primary or not self._transcript:
            return
        lines = [
            json.dumps({"role": role, "content": str(content)})
            for role, content in (("user", user_content), ("assistant", assistant_content))
        ]
        try:
            path = Path(self._transcript)
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")
        except OSError as error:
            logger.debug("memtrove: cannot write the transcript: %s", error)

    def _hook_payload(self, event: str) -> dict[str, str]:
        return {
            "session_id": self._session_id,
            "transcript_path": self._transcript,
            "hook_event_name": event,
        }

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        if not self._primary or not Path(self._transcript).is_file():
            return
        payload = self._hook_payload("Stop")
        workers = [
            threading.Thread(target=self._run, args=(["hook", name], payload, STOP_SECONDS))
            for name in STOP_HOOKS
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=STOP_SECONDS + 5)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        if self._primary and Path(self._transcript).is_file():
            self._run(["hook", "precompact-extract"], self._hook_payload("PreCompact"), 10)
        return ""

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        if str(new_session_id or "").strip():
            self._switch(new_session_id, Path(self._transcript).parent.parent)
            with self._lock:
                self._bootstrap = self._prefetched = ""

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return TOOLS

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Answer a tool call with the REST answer as JSON (an ``error`` object on failure)."""
        args = args if isinstance(args, dict) else {}
        docid = urllib.parse.quote(str(args.get("docid") or ""), safe="")
        if tool_name == "memtrove_retrieve":
            query = str(args.get("query") or "").strip()
            if not query:
                return json.dumps({"error": "query is required"})
            body = {
                "query": query,
                "compact": True,
                "limit": min(_number(args.get("limit"), 10), 50),
            }
            answer = rest_call(self._port, "POST", "/retrieve", body)
        elif tool_name == "memtrove_session_log":
            limit = min(_number(args.get("limit"), 5), 50)
            answer = rest_call(self._port, "GET", f"/sessions?limit={limit}")
        elif tool_name not in ("memtrove_get", "memtrove_timeline", "memtrove_similar"):
            return json.dumps({"error": f"unknown tool: {tool_name}"})
        elif not docid:
            return json.dumps({"error": "docid is required"})
        elif tool_name == "memtrove_get":
            answer = rest_call(self._port, "GET", f"/documents/{docid}")
        elif tool_name == "memtrove_timeline":
            before = min(_number(args.get("before"), 5, low=0), 50)
            after = min(_number(args.get("after"), 5, low=0), 50)
            answer = rest_call(
                self._port, "GET", f"/timeline/{docid}?before={before}&after={after}"
            )
        else:
            limit = min(_number(args.get("limit"), 5), 50)
            answer = rest_call(self._port, "GET", f"/graph/similar/{docid}?limit={limit}")
        if answer is None:
            return json.dumps({"error": "memtrove serve is not reachable"})
        return json.dumps(answer, ensure_ascii=False)

    def shutdown(self) -> None:
        if self._worker is not None:
            self._worker.join(timeout=SURFACE_SECONDS)


def register(ctx: Any) -> None:
    """Hermes' plugin entry point."""
    ctx.register_memory_provider(MemtroveProvider())
