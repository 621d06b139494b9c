"""``list_vaults`` and ``vault_sync`` through the SDK's own client: no named vault, the
served one beside; a folder synced into the served vault as a collection (searchable at
once, updated on a second sync), and every refusal a one-line tool error that leaves the
vault's collections as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from memtrove import Vault
from memtrove.mcp.server import build_server


def run(vault: Vault, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    results: list[Any] = []

    async def main() -> None:
        async with Client(build_server(lambda: vault)) as client:
            for name, arguments in calls:
                results.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return results


def test_list_vaults_names_none_and_the_served_vault(tmp_path: Path) -> None:
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        [listed] = run(vault, ("list_vaults", {}))
    assert not listed.is_error
    assert listed.structured_content["vaults"] == []
    assert listed.structured_content["served"].endswith("vault.sqlite")


def test_vault_sync_indexes_a_folder_and_updates_it_again(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "raft.md").write_text("# Raft\n\nLeader election uses randomized timeouts.\n")
    (notes / "skip.txt").write_text("not a note")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        first, second = run(
            vault,
            ("vault_sync", {"vault": "team", "content_root": str(notes)}),
            ("vault_sync", {"vault": "team", "contentRoot": str(notes), "pattern": "**/*.md"}),
        )
        assert not first.is_error, first.content[0].text
        data = first.structured_content
        assert data["collection"] == "team" and data["added"] == 1
        assert [c.name for c in vault.collections()] == ["team"]
        assert vault.search("randomized timeouts", limit=3)[0].path == "raft.md"
        assert not second.is_error and second.structured_content["added"] == 0
        (notes / "b.md").write_text("# B\n\nanother note\n")
        [third] = run(
            vault,
            ("vault_sync", {"vault": "x", "content_root": str(notes), "collection_name": "team"}),
        )
        assert third.structured_content["added"] == 1


def test_vault_sync_refuses_in_one_line_and_changes_nothing(tmp_path: Path) -> None:
    home_like = tmp_path / "work"
    secret = home_like / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id.md").write_text("# key\n")
    creds = home_like / "aws-credentials"
    creds.mkdir()
    link = home_like / "notes-link"
    link.symlink_to(secret)
    other = home_like / "other"
    other.mkdir()
    kept = home_like / "kept"
    kept.mkdir()
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(kept, name="kept")
        answers = run(
            vault,
            ("vault_sync", {"vault": "v", "content_root": str(secret)}),
            ("vault_sync", {"vault": "v", "content_root": str(creds)}),
            ("vault_sync", {"vault": "v", "content_root": str(link)}),  # leads into .ssh
            ("vault_sync", {"vault": "v", "content_root": "/etc"}),
            ("vault_sync", {"vault": "v", "content_root": "/"}),
            ("vault_sync", {"vault": "v", "content_root": "relative/notes"}),
            ("vault_sync", {"vault": "v", "content_root": str(home_like / "missing")}),
            ("vault_sync", {"vault": "v", "content_root": str(other), "collection_name": "kept"}),
            ("vault_sync", {"vault": "", "content_root": str(other)}),
            ("vault_sync", {"content_root": str(other)}),
        )
        assert [c.name for c in vault.collections()] == ["kept"]
    texts = [answer.content[0].text for answer in answers]
    assert all(answer.is_error for answer in answers), texts
    assert all("\n" not in text and "Traceback" not in text for text in texts), texts
    assert "secrets (.ssh)" in texts[0] and "secrets (aws-credentials)" in texts[1]
    assert "secrets (.ssh)" in texts[2]
    assert "system folders (/etc)" in texts[3] and "filesystem or home" in texts[4]
    assert "absolute path" in texts[5] and "does not exist" in texts[6]
    assert "already indexes" in texts[7] and "vault" in texts[8] and "vault" in texts[9]
