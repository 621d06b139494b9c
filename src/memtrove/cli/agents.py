"""``memtrove mcp`` and ``memtrove setup hooks|mcp``: connecting agents to the vault."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import typer

from memtrove.cli import claude_settings
from memtrove.cli.claude_settings import SettingsChange
from memtrove.cli.common import console, fail, state, user_errors
from memtrove.config import Settings
from memtrove.locations import has_password, is_server_url
from memtrove.mcp import DEFAULT_HTTP_PORT
from memtrove.vault import Vault

__all__ = ["register", "setup_claude"]

setup_app = typer.Typer(
    help="Connect Claude Code to memtrove: hooks in ~/.claude/settings.json, MCP in ~/.claude.json.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
    app.add_typer(setup_app, name="setup")


def mcp(
    ctx: typer.Context,
    http: bool = typer.Option(
        False, "--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio."
    ),
    port: int | None = typer.Option(
        None, "--port", min=1, max=65535, help=f"HTTP port (default {DEFAULT_HTTP_PORT})."
    ),
) -> None:
    """Serve the vault over MCP: stdio for Claude Code, or --http on 127.0.0.1."""
    if port is not None and not http:
        raise typer.BadParameter("--port needs --http", param_hint="--port")
    settings = state(ctx).settings
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="memtrove mcp: %(levelname)s %(message)s"
    )
    port = port or DEFAULT_HTTP_PORT
    if http:
        _check_port(port)
        print(f"memtrove mcp: streamable HTTP on http://127.0.0.1:{port}/mcp", file=sys.stderr)

    from memtrove.mcp.server import run  # the MCP SDK takes a second to import: only here

    def open_vault() -> Vault:
        return Vault.open(settings.vault_path, config_dir=settings.config_dir)

    if not http:
        from memtrove.mcp.front import serve_stdio
        from memtrove.paths import cache_location
        from memtrove.vault.lanes import host_from_env

        # SIGTERM ends the server as a hang-up would (the front's handler); the lanes that
        # MEMTROVE_ENABLE_CONSOLIDATION etc. turn on drain after it.
        lanes = host_from_env(settings, short_lived=True)
        try:
            with contextlib.suppress(KeyboardInterrupt):
                serve_stdio(lambda: run(open_vault, http=False), Path(cache_location()))
        finally:
            if lanes is not None:
                lanes.stop()
        return
    from memtrove.cli.consolidate_cli import host_lanes

    lanes = host_lanes(settings, short_lived=False)
    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how an HTTP server stops
            run(open_vault, http=True, port=port)
    finally:
        if lanes is not None:
            lanes.stop()


def _check_port(port: int) -> None:
    """Fail in one line when the port is taken (uvicorn would print a traceback-ish log)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))
    except OSError as error:
        reason = "in use" if error.errno == errno.EADDRINUSE else error.strerror
        raise fail(f"cannot listen on 127.0.0.1:{port}: {reason}") from None
    finally:
        probe.close()


# Measured by benchmarks/bench_hooks.py (README, Benchmarks): context-surfacing's p50 on
# 10,000 notes, one process per prompt against the warm path of a running server.
SERVE_HINT = (
    "Tip: keep `memtrove serve` running while you work: every hook then asks it instead of "
    "loading the vault itself (context-surfacing 56 ms instead of 92 ms at the median on "
    "10,000 notes, the Stop hooks about 80 ms instead of 115-135 ms)."
)


@setup_app.command("hooks")
def setup_hooks(
    ctx: typer.Context,
    remove: bool = typer.Option(False, "--remove", help="Remove memtrove's hooks instead."),
) -> None:
    """Install memtrove's Claude Code hooks (keeps every other setting; backs the file up).
    With --vault, MEMTROVE_VAULT or MEMTROVE_CONFIG_DIR, the hooks open that vault and config."""
    install, uninstall = claude_settings.install_hooks, claude_settings.remove_hooks
    _change_settings(ctx, remove, install, uninstall, "the hooks will")
    if not remove:
        console.print(SERVE_HINT, markup=False)


@setup_app.command("mcp")
def setup_mcp(
    ctx: typer.Context,
    remove: bool = typer.Option(False, "--remove", help="Remove the MCP server instead."),
    prime: bool = typer.Option(
        True, "--prime/--no-prime", help="Prepare the handshake's answers (a few seconds)."
    ),
) -> None:
    """Register `memtrove mcp` as Claude Code's MCP server memtrove (in ~/.claude.json),
    and run its handshake once so that the first session already starts fast. With --vault,
    MEMTROVE_VAULT or MEMTROVE_CONFIG_DIR, the server opens that vault and config."""
    install, uninstall = claude_settings.install_mcp, claude_settings.remove_mcp
    _change_settings(ctx, remove, install, uninstall, "the MCP server will")
    if prime and not remove:
        _prime_mcp(ctx)


def _change_settings(
    ctx: typer.Context,
    remove: bool,
    install: Callable[[Path, str, dict[str, str]], SettingsChange],
    uninstall: Callable[[Path], SettingsChange],
    subject: str,
) -> None:
    """``install`` memtrove's entry in Claude Code's settings (``uninstall`` with --remove),
    then say what changed and, once installed, which vault and config ``subject`` open."""
    with user_errors():
        if remove:
            change = uninstall(Path.home())
        else:
            executable = claude_settings.memtrove_executable()
            change = install(Path.home(), executable, _placement(ctx))
    console.print(change.summary, markup=False)
    if not remove:
        _print_placement(ctx, subject)


def _placement(ctx: typer.Context) -> dict[str, str]:
    """``MEMTROVE_VAULT`` and ``MEMTROVE_CONFIG_DIR`` for the entries to carry, so that Claude
    Code's processes open this command's vault and config; empty when both are the defaults
    (Claude Code's processes find those without help)."""
    settings = state(ctx).settings
    defaults = Settings.from_env(
        {
            name: value
            for name, value in os.environ.items()
            if name not in claude_settings.PLACEMENT_VARIABLES
        }
    )
    chosen = claude_settings.placement_env(settings.vault_path, settings.config_dir)
    default = claude_settings.placement_env(defaults.vault_path, defaults.config_dir)
    return {} if chosen == default else chosen


def _print_placement(ctx: typer.Context, subject: str) -> None:
    placement = _placement(ctx)
    if placement:
        vault, config = (placement[name] for name in claude_settings.PLACEMENT_VARIABLES)
        console.print(f"{subject} open vault {vault} (config {config})", markup=False)
        if has_password(state(ctx).settings.vault_path):
            print(
                "memtrove: note: the vault URL is written without its password; give it to "
                "PostgreSQL in ~/.pgpass or PGPASSWORD",
                file=sys.stderr,
            )


def _prime_mcp(ctx: typer.Context) -> None:
    """Store the MCP handshake's answers now, so the first session starts fast. The servers
    started for it open this command's vault and config, as Claude Code's will."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from memtrove.mcp.prime import prime_answers

    settings = state(ctx).settings
    env = dict(os.environ) | claude_settings.placement_env(settings.vault_path, settings.config_dir)
    if is_server_url(settings.vault_path):  # kept in this process's child: written nowhere
        env["MEMTROVE_VAULT"] = str(settings.vault_path)
    done = prime_answers(HANDSHAKE_PROTOCOL_VERSIONS, env)
    if done < len(HANDSHAKE_PROTOCOL_VERSIONS):
        print(
            "memtrove: warning: the MCP handshake could not be prepared; the first session "
            "will start a second slower",
            file=sys.stderr,
        )


def setup_claude(ctx: typer.Context) -> None:
    """``setup hooks`` and ``setup mcp`` together (``bootstrap --setup-claude``), for the
    vault and config of ``ctx``."""
    executable = claude_settings.memtrove_executable()
    placement = _placement(ctx)
    for install in (claude_settings.install_hooks, claude_settings.install_mcp):
        with user_errors():
            change = install(Path.home(), executable, placement)
        console.print(change.summary, markup=False)
    _print_placement(ctx, "the hooks and the MCP server will")
    _prime_mcp(ctx)
