"""Lines of a Claude Code session file, as the tests write them."""

from __future__ import annotations

import json
from typing import Any


def claude_line(
    uuid: str,
    parent: str | None,
    kind: str,
    text: str,
    minute: int,
    *,
    session: str = "session-1",
    hour: str = "2025-03-01T10",
    **extra: Any,
) -> str:
    """One user or assistant line (an assistant's message id is ``msg-<uuid>``)."""
    message: dict[str, Any] = {"role": kind, "content": [{"type": "text", "text": text}]}
    if kind == "assistant":
        message["id"] = f"msg-{uuid}"
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": session,
            "timestamp": f"{hour}:{minute:02d}:00Z",
            "message": message,
            **extra,
        }
    )
