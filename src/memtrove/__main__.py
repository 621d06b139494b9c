"""``python -m memtrove`` (and the ``memtrove`` script): the CLI.

``memtrove hook NAME`` skips the CLI entirely: a hook runs on every prompt, so its process
must not pay for importing Typer and Rich (see :mod:`memtrove.hooks.runner`). A bare
``memtrove mcp`` (stdio) skips it too, so the MCP handshake answers sooner.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = ["main"]


def main() -> None:
    """Dispatch ``hook NAME`` to the hook runner before anything else is imported."""
    arguments = sys.argv[1:]
    if len(arguments) >= 2 and arguments[0] == "hook" and not arguments[1].startswith("-"):
        from memtrove.hooks.runner import main as run_hook

        sys.exit(run_hook(arguments[1:], hard_exit=True))  # hard_exit: does not return
    if arguments == ["mcp"]:
        sys.exit(_serve_mcp_stdio())
    from memtrove.cli import main as cli_main

    cli_main()


def _serve_mcp_stdio() -> int:
    """``memtrove mcp`` over stdio without loading the CLI, behind the front that answers
    the handshake while the MCP SDK imports (see :mod:`memtrove.mcp.front`). Options go
    through the CLI."""
    import contextlib
    import logging

    from memtrove.mcp.front import serve_stdio
    from memtrove.paths import Settings, cache_dir

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="memtrove mcp: %(levelname)s %(message)s"
    )
    settings = Settings.from_env()

    def open_vault() -> Vault:
        from memtrove.vault import Vault

        return Vault.open(settings.vault_path, config_dir=settings.config_dir)

    def run_sdk() -> None:
        from memtrove.mcp.server import run

        run(open_vault, http=False)

    with contextlib.suppress(KeyboardInterrupt):
        serve_stdio(run_sdk, cache_dir())
    return 0


if __name__ == "__main__":
    main()
