"""The user profile built from a vault an agent used, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.errors import DocumentNotFoundError
from memtrove.hooks.transcript import read_turns
from memtrove.vault.profile import profile_area
from tests.capture.transcripts import SESSION, SESSION_ONE, write_transcript
from tests.conftest import write

DECISION = """# ADR 7: session cache

- We keep sessions in Redis with a connection pool of 50 connections.
- We keep sessions in Redis with a connection pool of 51 connections.
- [[glossary]]
- short
"""
HUB = """---
content_type: hub
---
# Index

- [Session cache decision](decisions/0007-cache.md)
- Every service logs JSON lines to stdout, collected by Vector.
"""


def test_profile_from_decisions_hubs_progress_and_handoffs(
    vault: Vault, notes: Path, tmp_path: Path
) -> None:
    write(notes, "decisions/0007-cache.md", DECISION)
    write(notes, "index.md", HUB)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    old = (datetime.now(UTC) - timedelta(days=30)).strftime("%Y-%m-%d")
    write(
        notes, "progress/now.md", f"---\nauthored_at: {today}\n---\n# Cache load test green\n\nok"
    )
    write(notes, "progress/then.md", f"---\nauthored_at: {old}\n---\n# Old status\n\nok")
    vault.add_collection(notes, name="n")
    vault.update()
    area = profile_area(vault)
    with pytest.raises(DocumentNotFoundError, match="profile rebuild"):
        area.show()
    assert area.is_stale() is False  # no session yet: nothing lags behind
    transcript = write_transcript(tmp_path / "s.jsonl", SESSION_ONE)
    vault.capture.write_handoff(SESSION, read_turns(str(transcript)))
    assert area.is_stale() is True
    assert area.refresh(embed=False) is True and area.is_stale() is False
    profile = area.show()
    assert profile.path == "_memtrove/profile.md"
    # near-duplicate, link-only and too-short bullets are left out
    assert profile.known == (
        "We keep sessions in Redis with a connection pool of 50 connections.",
        "Every service logs JSON lines to stdout, collected by Vector.",
    )
    assert any(item.startswith("Current: ") for item in profile.current)
    assert any(
        item.startswith("Next: ") or item.startswith("Current: ") for item in profile.current
    )
    assert f"Progress: Cache load test green ({today})" in profile.current
    assert not any("Old status" in item for item in profile.current)
    assert vault.get("_memtrove/profile.md").content_type == "preference"
    # rebuilding what did not change keeps one document
    again = area.rebuild(embed=False)
    assert again.body == profile.body
    assert len([d for d in vault.list(100, collection="_memtrove") if d.path == "profile.md"]) == 1
