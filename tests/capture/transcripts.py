"""Claude Code transcripts for the capture tests: written line by line as Claude Code does."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

# ../shared/bench beside the checkout (read-only; the tests using it skip without it)
BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench" / "mine" / "claude-code"
SESSION = "9f1e2d3c-4b5a-4e6f-8a7b-1c2d3e4f5a6b"
OTHER_SESSION = "1a2b3c4d-0000-4000-8000-00000000beef"


def user(text: str) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": text}}


def assistant(text: str, *, edit: str | None = None) -> dict[str, object]:
    blocks: list[dict[str, object]] = [{"type": "text", "text": text}]
    if edit is not None:
        blocks.append(
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "Edit",
                "input": {"file_path": edit, "old_string": "a", "new_string": "b"},
            }
        )
    return {"type": "assistant", "message": {"role": "assistant", "content": blocks}}


def tool_result(text: str) -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": "toolu_01", "content": text}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def write_transcript(path: Path, entries: Sequence[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")
    return path


SESSION_ONE = [
    user("The session cache keeps timing out under load. Can you look at it?"),
    assistant(
        "The error: redis timeout after 2000 ms appears in the session cache logs when the "
        "connection pool is exhausted."
    ),
    tool_result("ok"),
    assistant(
        "We decided to use Redis with a connection pool of 50 for the session cache. "
        "I raised the pool size in the cache config.",
        edit="/project/app/cache.py",
    ),
    user("Great. I prefer short timeouts, always use 500 ms for cache calls."),
    assistant("Fixed: the session cache now passes the load test with the bigger pool."),
]

SESSION_TWO = [
    user("Redis keeps falling over in staging; what should we do about the session cache?"),
    assistant(
        "We decided to stop using Redis for the session cache; we switch to Memcached "
        "instead of Redis for sessions."
    ),
    user("Fine, go ahead and change it."),
    assistant("Done. The session store now talks to Memcached.", edit="/project/app/sessions.py"),
]
