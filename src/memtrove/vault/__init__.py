"""The Vault facade: every interface (CLI, MCP, REST, hooks) calls memtrove through here.

::

    with memtrove.Vault.open() as vault:
        vault.add_collection("~/notes")
        vault.update()
        for result in vault.search("refresh token rotation"):
            print(result.score, result.title)
"""

from memtrove.vault.core import MAX_SPARE_READERS, Vault

__all__ = ["MAX_SPARE_READERS", "Vault"]
