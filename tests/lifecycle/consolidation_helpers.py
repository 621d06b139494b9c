"""Observation documents as the capture hooks write them, for the consolidation tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.index.internal import MEMORY_COLLECTION, write_internal
from memtrove.models.registry import ModelSettings
from memtrove.text import to_iso
from tests.fakes.model_server import ModelServer


def observe(
    vault: Vault,
    name: str,
    facts: Sequence[str],
    *,
    kind: str = "decision",
    title: str | None = None,
    session: str = "session-1",
    age_days: float = 0.0,
) -> int:
    """Write ``agent/observations/<name>.md`` with the capture hooks' frontmatter."""
    moment = datetime.now(UTC) - timedelta(days=age_days)
    title = title or facts[0][:60]
    lines = [
        "---",
        f"title: {json.dumps(title)}",
        "type: observation",
        f"observation_type: {kind}",
        f"session_id: {session}",
        f"authored_at: {to_iso(moment)}",
        "facts:",
        *(f"  - {json.dumps(fact)}" for fact in facts),
        "source: observer",
        "confidence: 0.8",
        "---",
        "",
        f"# {title}",
        "",
        " ".join(facts),
        "",
    ]
    connection = vault._connection
    with write_transaction(connection):
        doc_id = write_internal(
            connection,
            MEMORY_COLLECTION,
            f"agent/observations/{name}.md",
            "\n".join(lines),
            "observation",
            to_iso(moment),
        )
        connection.execute(
            "UPDATE documents SET modified_at = ?, authored_at = ? WHERE id = ?",
            (to_iso(moment), to_iso(moment), doc_id),
        )
    return doc_id


def smart_vault(tmp_path: Path, server: ModelServer, name: str = "smart.sqlite") -> Vault:
    return Vault.open(
        tmp_path / name,
        config_dir=tmp_path / "config",
        models=ModelSettings(llm_url=server.url),
    )


def rows(vault: Vault, *, everything: bool = False) -> list[dict[str, Any]]:
    return vault.consolidation.consolidated_observations(include_inactive=everything)
