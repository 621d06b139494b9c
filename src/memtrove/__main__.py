"""``python -m memtrove`` (and the ``memtrove`` script): the CLI.

``memtrove hook NAME`` skips the CLI entirely: a hook runs on every prompt, so its process
must not pay for importing Typer and Rich (see :mod:`memtrove.hooks.runner`). A bare
``memtrove mcp`` (stdio) skips it too, so the MCP handshake answers sooner. The read commands
(``search``, ``vsearch``, ``query``, ``get``, ``status``) and ``update`` run without Typer
and Rich when their command line is one :mod:`memtrove.cli.lean` fully understands.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing itself is not imported: every start of memtrove passes here
if TYPE_CHECKING:
    from memtrove.vault import Vault
    from memtrove.vault.lanes import LaneHost

__all__ = ["main"]

_LEAN_COMMANDS = frozenset(("search", "vsearch", "query", "get", "status", "update"))


# Starting up allocates ~100k objects and no garbage worth a collection: with the default
# first-generation threshold (700) the collector ran ~10 times while a search imported its
# modules, ~2.5 ms of a 45 ms command. Collections still run, just after 20k allocations.
GC_THRESHOLD = 20_000


def main() -> None:
    """Dispatch ``hook NAME`` to the hook runner before anything else is imported."""
    import gc

    gc.set_threshold(GC_THRESHOLD)
    arguments = sys.argv[1:]
    if len(arguments) >= 2 and arguments[0] == "hook" and not arguments[1].startswith("-"):
        sys.exit(_run_hook(arguments[1:]))
    if arguments in (["buffer-batch"], ["buffer-tool"]):
        from memtrove.hooks.buffer import main as buffer

        sys.exit(buffer(arguments[0].removeprefix("buffer-")))
    if arguments in (
        ["flush-tools"],
        ["flush-tools", "--json"],
        ["reminder"],
        ["reminder", "--json"],
    ):
        from memtrove.hooks.prompt_nudges import main as nudge  # per prompt: no CLI to load

        sys.exit(nudge(arguments[0], as_json=arguments[-1] == "--json"))
    if arguments == ["mcp"]:
        sys.exit(_serve_mcp_stdio())
    if not _LEAN_COMMANDS.isdisjoint(arguments):
        from memtrove.cli.lean import main as lean

        lean(arguments)  # exits, unless the command line is the Typer CLI's to answer
    from memtrove.cli import main as cli_main

    cli_main()


def _run_hook(arguments: list[str]) -> int:
    """A running ``memtrove serve`` answers when it can (the warm path); otherwise the hook
    runs in this process. The hook's time limit counts from here, reading stdin included."""
    import io
    import os
    import time

    started = time.monotonic()
    try:
        from memtrove.hooks.remote import encode_answer, run

        raw, answer = run(arguments[0], started=started)
    except Exception:  # the warm path is an optimisation: never let it cost the answer
        raw, answer = b"", None
    if answer is not None:
        sys.stdout.buffer.write(encode_answer(answer))
        sys.stdout.buffer.flush()
        os._exit(0)
    from memtrove.hooks.runner import main as run_hook

    return run_hook(arguments, stdin=io.BytesIO(raw), hard_exit=True, started=started)


def _serve_mcp_stdio() -> int:
    """``memtrove mcp`` over stdio without loading the CLI, behind the front that answers
    the handshake while the MCP SDK imports (see :mod:`memtrove.mcp.front`). Options go
    through the CLI."""
    import contextlib
    import logging
    import os
    from pathlib import Path

    from memtrove.mcp.front import serve_stdio
    from memtrove.paths import cache_location, config_location, vault_location

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="memtrove mcp: %(levelname)s %(message)s"
    )
    vault_path, config_dir = vault_location(), config_location()

    def open_vault() -> Vault:
        from memtrove.vault import Vault

        return Vault.open(vault_path, config_dir=config_dir)

    def run_sdk() -> None:
        from memtrove.mcp.server import run

        run(open_vault, http=False)

    lanes = _host_lanes(vault_path, config_dir)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve_stdio(run_sdk, Path(cache_location()))
    finally:
        if lanes is not None:
            lanes.stop()
    # Every answer is written and the vault closed: skip tearing down the interpreter (a
    # third of a second of module and garbage clean-up that nobody waits for).
    sys.stderr.flush()
    os._exit(0)


def _host_lanes(vault_path: str, config_dir: str) -> LaneHost | None:
    """The consolidation lanes when MEMTROVE_ENABLE_CONSOLIDATION / MEMTROVE_HEAVY_LANE are
    set (nothing is imported otherwise). SIGTERM ends the server as a hang-up would (see
    :mod:`memtrove.mcp.front`), and they drain after it."""
    import os

    names = ("MEMTROVE_ENABLE_CONSOLIDATION", "MEMTROVE_HEAVY_LANE")
    if not any(os.environ.get(name, "").strip() for name in names):
        return None
    from memtrove.config import Settings
    from memtrove.vault.lanes import host_from_env

    settings = Settings.from_env(vault=vault_path, config_dir=config_dir)  # a URL stays one
    return host_from_env(settings, short_lived=True)


if __name__ == "__main__":
    main()
