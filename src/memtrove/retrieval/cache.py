"""The model-answer cache (``llm_cache``): expansions and rerank scores, keyed by input hash.

Model answers are slow and, for a given model and input, stable enough to reuse. Keys hash
the model identity, a version tag of the prompt, and the exact input; values are JSON. A
cache write that meets a locked vault is skipped (the answer is still used), so a busy vault
never fails a search.
"""

from __future__ import annotations

import json
from typing import Any

from memtrove.db.connection import Connection, write_unless_locked
from memtrove.text import now_iso, sha256_hex

__all__ = ["cache_get", "cache_key", "cache_put"]


def cache_key(*parts: str) -> str:
    """SHA-256 of the parts, each followed by a NUL byte."""
    return sha256_hex(b"".join(part.encode("utf-8", "surrogatepass") + b"\x00" for part in parts))


def cache_get(connection: Connection, key: str) -> Any | None:
    row = connection.execute("SELECT result FROM llm_cache WHERE hash = ?", (key,)).fetchone()
    if row is None:
        return None
    try:
        return json.loads(str(row[0]))
    except (ValueError, RecursionError):
        return None


def cache_put(connection: Connection, entries: dict[str, Any]) -> None:
    """Store answers in one short transaction; skipped if the vault stays locked."""
    if not entries:
        return
    rows = [(key, json.dumps(value), now_iso()) for key, value in entries.items()]
    write_unless_locked(
        connection,
        lambda: connection.executemany(
            "INSERT INTO llm_cache (hash, result, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (hash) DO UPDATE SET result = excluded.result, "
            "created_at = excluded.created_at",
            rows,
        ),
    )
