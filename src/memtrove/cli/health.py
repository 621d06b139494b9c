"""``memtrove doctor|rerank-health|redact``: is everything sound, does the reranker discriminate,
and are secrets stored?"""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.markup import escape

from memtrove.cli.common import console, fail, open_vault, print_json, state
from memtrove.cli.secrets_cli import redact
from memtrove.config import Settings
from memtrove.errors import MemtroveError, VaultNotFoundError, VaultOpenError
from memtrove.locations import is_server_url
from memtrove.models.registry import Models, ModelSettings
from memtrove.results import Check, DoctorReport, RerankHealth
from memtrove.vault import Vault

__all__ = ["register"]

_STYLE = {"ok": "green", "warn": "yellow", "fail": "red"}


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
    app.command("rerank-health")(rerank_health)
    app.command("redact")(redact)


def doctor(
    ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print JSON.")
) -> None:
    """Check the vault, collections, fragments, vectors, each model service, and Claude
    Code's registration of the hooks and MCP server; exit 1 on a failure, printing the fix
    for each."""
    report = _diagnose(state(ctx).settings)
    if as_json:
        print_json(report.to_dict())
    else:
        width = max(len(check.name) for check in report.checks)
        for check in report.checks:
            colour = _STYLE.get(check.status, "white")
            console.print(
                f"[{colour}]{check.status:<4}[/]  {escape(check.name):<{width}}  "
                f"{escape(check.detail)}",
                markup=True,
            )
            if check.fix:
                console.print(f"{'':<{width + 6}}[bold]fix:[/] {escape(check.fix)}", markup=True)
        console.print(report.summary)
    if not report.ok:
        raise typer.Exit(1)


def _diagnose(settings: Settings) -> DoctorReport:
    """Run doctor on the vault, or say why it cannot be opened (never creating it)."""
    from memtrove.lifecycle.doctor import unopened_report  # httpx: only when doctor runs

    path = settings.vault_path
    if not is_server_url(path):  # a server's vault: the server says whether it is there
        try:
            missing = not Path(path).exists()
        except OSError as error:  # a name too long, a folder it may not enter
            reason = VaultOpenError(f"cannot open vault {path}: {error.strerror or error}")
            return unopened_report(path, reason, _models())
        if missing:
            return unopened_report(path, None, _models())
    try:
        vault = Vault.open(path, config_dir=settings.config_dir, create=False)
    except VaultNotFoundError:
        return unopened_report(path, None, _models())
    except MemtroveError as error:
        return unopened_report(path, error, _models())
    with vault:
        report = vault.doctor()
        problems = _setting_problems(vault)
    detail = "; ".join(problems) or "hook, lane and redaction settings are valid"
    check = Check(
        "settings",
        "fail" if problems else "ok",
        detail,
        "fix the setting named" if problems else "",
    )
    checks = [*report.checks, check, _warm_path(settings), *_claude_code(settings)]
    return DoctorReport(checks, report.elapsed_seconds)


def _claude_code(settings: Settings) -> list[Check]:
    """Whether Claude Code's files register memtrove's hooks and MCP server for this vault
    (see :mod:`memtrove.cli.claude_checks`)."""
    from memtrove.cli.claude_checks import claude_code_checks
    from memtrove.cli.claude_settings import PLACEMENT_VARIABLES, placement_env

    others = {k: v for k, v in os.environ.items() if k not in PLACEMENT_VARIABLES}
    defaults = Settings.from_env(others)
    vault = placement_env(settings.vault_path, settings.config_dir)[PLACEMENT_VARIABLES[0]]
    default = placement_env(defaults.vault_path, defaults.config_dir)[PLACEMENT_VARIABLES[0]]
    return claude_code_checks(Path.home(), vault, default)


def _warm_path(settings: Settings) -> Check:
    """Whether the installed hooks find a running ``memtrove serve`` of this vault."""
    from memtrove.cli.agents import SERVE_HINT
    from memtrove.cli.claude_settings import hooks_installed
    from memtrove.config import cache_dir
    from memtrove.warm import find_server

    server = find_server(cache_dir(), settings.vault_path)
    if server is not None:
        return Check("warm path", "ok", f"memtrove serve (pid {server.pid}) answers the hooks")
    if not hooks_installed(Path.home()):
        return Check("warm path", "ok", "no memtrove hooks installed; nothing to speed up")
    return Check(
        "warm path",
        "warn",
        "the hooks run cold: each loads the vault in its own process",
        SERVE_HINT.removeprefix("Tip: "),
    )


def _setting_problems(vault: Vault) -> list[str]:
    """What the hooks would only log (an unknown profile, a number that is not one), what
    would stop the consolidation lanes, and redaction patterns ``update`` would refuse."""
    from memtrove.hooks.settings import HookSettings
    from memtrove.lifecycle.maintenance import LaneSettings

    problems: list[str] = []
    try:
        problems += HookSettings.from_env(os.environ).warnings
        LaneSettings.from_env(os.environ)
    except MemtroveError as error:
        problems.append(str(error))
    try:
        vault.redactor  # noqa: B018 - building it checks config.yaml's patterns
    except MemtroveError as error:
        problems.append(str(error))
    return problems


def _models() -> Models | MemtroveError:
    try:
        return Models(ModelSettings.from_env(os.environ))
    except MemtroveError as error:
        return error


def rerank_health(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    timeout_ms: int = typer.Option(
        8000, "--timeout-ms", min=1, help="Give up after this many milliseconds."
    ),
) -> None:
    """Probe the reranker with known good and bad pairs; exit 1 when it is degenerate."""
    with open_vault(ctx) as vault:
        health = vault.rerank_health(timeout=timeout_ms / 1000)
    if as_json:
        print_json(health.to_dict())
        if not health.healthy:
            raise typer.Exit(1)
        return
    if not health.configured:
        raise fail(health.detail)
    _print_health(health)
    if not health.healthy:
        raise typer.Exit(1)


def _print_health(health: RerankHealth) -> None:
    colour = "green" if health.healthy else "red"
    console.print(f"reranker  {escape(health.reranker)}", markup=True)
    console.print(
        f"verdict   [{colour}]{escape(health.verdict)}[/]: {escape(health.detail)}", markup=True
    )
    if health.pairs:
        console.print("          relevant  irrelevant  query")
    for pair in health.pairs:
        mark = ""
        if not pair.discriminates:
            tie = pair.relevant_score == pair.irrelevant_score
            mark = "  [red]<- tie[/]" if tie else "  [red]<- wrong way[/]"
        console.print(
            f"          {pair.relevant_score:8.4f}  {pair.irrelevant_score:10.4f}  "
            f"{escape(pair.query)}{mark}",
            markup=True,
        )
    if health.fix:
        console.print(f"[bold]fix:[/] {escape(health.fix)}", markup=True)
    console.print(f"[dim]{health.elapsed_seconds:.2f}s[/]", markup=True)
