"""Registers ``list_vaults`` and ``vault_sync`` on the server :mod:`memtrove.mcp.server`
builds; the server, the ``call`` helper and the annotations are handed in.

memtrove serves one vault per process (named vaults are a deliberate difference, see the
README): ``list_vaults`` answers no named vault, as the reference does in single-vault
mode, with the vault this server serves beside; ``vault_sync`` indexes a folder into that
vault (:mod:`memtrove.vault.syncing`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["list_vaults", "register_vault_tools", "vault_sync"]


def list_vaults(vault: Vault) -> tuple[str, dict[str, Any]]:
    """No named vault (single-vault mode), and the vault served."""
    served = vault.location  # the file or URL, shown without a password
    return (
        f"no named vaults: this server serves one vault ({served})",
        {"vaults": [], "served": served},
    )


def vault_sync(
    vault: Vault, name: str, content_root: str, pattern: str, collection_name: str | None
) -> tuple[str, dict[str, Any]]:
    """Index ``content_root`` into the served vault: a summary and the update's report."""
    from memtrove.vault.syncing import sync_folder

    collection, report = sync_folder(vault, content_root, pattern, collection_name or name)
    text = (
        f"synced {collection.path} as collection {collection.name!r}: {report.summary}"
        + "".join(f"\nskipped {issue}" for issue in report.skipped)
        + "".join(f"\nwarning: {warning}" for warning in report.warnings)
    )
    return text, {
        "vault": name,
        "collection": collection.name,
        "content_root": str(collection.path),
        **report.to_dict(),
    }


def register_vault_tools(
    server: MCPServer[Any],
    call: Callable[..., CallToolResult],
    read_only: ToolAnnotations,
    writes: ToolAnnotations,
) -> None:
    """Add ``list_vaults`` and ``vault_sync`` to ``server``."""

    @server.tool("list_vaults", annotations=read_only)
    def list_vaults_tool() -> CallToolResult:
        """Configured named vaults: none (this server serves one vault, named in
        structuredContent.served); every tool's `vault` argument answers from it."""
        return call(list_vaults)

    @server.tool("vault_sync", annotations=writes)
    def vault_sync_tool(
        vault: Annotated[
            str,
            Field(
                min_length=1,
                description="The vault's name; the served vault is used, and the name is "
                "the collection's unless collection_name is given.",
            ),
        ],
        content_root: Annotated[
            str, Field(min_length=1, description="The folder to index (an absolute path).")
        ],
        pattern: Annotated[
            str, Field(min_length=1, description="Which files, as a glob under the folder.")
        ] = "**/*.md",
        collection_name: Annotated[
            str | None, Field(description="The collection's name (default: the vault name).")
        ] = None,
    ) -> CallToolResult:
        """Index a folder of notes into memory as a collection (added when new, updated
        when it already indexes that folder). System folders and folders holding secrets
        (.ssh, .aws, .kube, .env, credentials) are refused. Vectors: `memtrove embed`."""
        return call(vault_sync, vault, content_root, pattern, collection_name)
