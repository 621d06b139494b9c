"""What every command shares: the vault it works on, one-line errors, output helpers."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import typer
from rich.console import Console

from memtrove.cli.lean.commands import ask_server
from memtrove.cli.lean.commands import split_collections as split_collections
from memtrove.cli.lean.output import error, rich_console
from memtrove.cli.lean.output import print_json as print_json
from memtrove.cli.lean.views import print_results as print_rows
from memtrove.config import Settings
from memtrove.errors import MemtroveError
from memtrove.results import SearchResult, SearchResults
from memtrove.vault import Vault

__all__ = [
    "CliState",
    "console",
    "fail",
    "open_vault",
    "print_json",
    "print_report",
    "print_results",
    "search_with",
    "split_collections",
    "state",
]

console = rich_console()  # the lean read commands fall back to this same console
error_console = Console(stderr=True, highlight=False, soft_wrap=True)


@dataclass(frozen=True)
class CliState:
    settings: Settings


def state(ctx: typer.Context) -> CliState:
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState(Settings.from_env())
    return root.obj


def given_path(value: str) -> Path:
    """A path argument as typed. An empty one (an unset shell variable, ``mine "$DIR"``) is a
    usage error, never the current folder that ``Path("")`` names."""
    if not value.strip():
        raise typer.BadParameter("is empty (an unset variable?): name a folder or a file")
    return Path(value)


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``memtrove: error: message`` on stderr; return the Exit to raise."""
    error(message)
    return typer.Exit(code)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn memtrove's errors into one line on stderr and exit status 1."""
    try:
        yield
    except MemtroveError as error:
        raise fail(str(error)) from None


@contextlib.contextmanager
def open_vault(ctx: typer.Context, *, create: bool = True) -> Iterator[Vault]:
    """The vault of ``--vault`` / ``MEMTROVE_VAULT``; a read command passes ``create=False``
    and gets a one-line error naming the path where there is none."""
    settings = state(ctx).settings
    with user_errors():
        vault = Vault.open(settings.vault_path, config_dir=settings.config_dir, create=create)
        try:
            yield vault
        finally:
            vault.close()


def search_with(ctx: typer.Context, method: str, text: str, **options: Any) -> SearchResults:
    """``Vault.<method>(text, **options)`` (search, vsearch, hybrid or query), through a
    running ``memtrove serve`` of the same vault when there is one (its models are loaded:
    see memtrove.warm), else in this process. The results are the same either way; any
    refusal by the server (including a bad argument) is retried here, where it is reported."""
    settings = state(ctx).settings
    answer = ask_server(method, text, options, str(settings.vault_path), str(settings.config_dir))
    if answer is not None:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            return SearchResults.from_dict(answer)
    with open_vault(ctx, create=False) as vault:
        run: Callable[..., SearchResults] = getattr(vault, method)
        with user_errors():
            return run(text, **options)


def print_results(results: Sequence[SearchResult]) -> None:
    """Ranked results as the search commands print them (``no results`` when empty); the
    same lines as the lean read commands print (:mod:`memtrove.cli.lean.views`)."""
    print_rows([{**r.to_dict(), "score": r.score, "content": r.content} for r in results])


class Report(Protocol):
    """What :func:`print_report` prints: a report with a JSON shape and a text."""

    def to_dict(self) -> Any: ...

    def text(self) -> str: ...


def print_report(report: Report, as_json: bool) -> None:
    """``report.to_dict()`` as JSON with ``--json``, else ``report.text()`` as it reads."""
    if as_json:
        print_json(report.to_dict())
    else:
        console.print(report.text(), markup=False)


LANE_FLAGS = ("MEMTROVE_ENABLE_CONSOLIDATION", "MEMTROVE_HEAVY_LANE")


def start_lanes(settings: Settings, say: Callable[[str], None]) -> Any:
    """A started LaneHost when a lane flag is set (the lane modules load only then), for
    the long-running commands (``watch``, ``serve``); None otherwise."""
    import os

    if not any(os.environ.get(name) for name in LANE_FLAGS):
        return None
    try:
        from memtrove.lifecycle.maintenance import LaneSettings
        from memtrove.vault.lanes import LaneHost
    except ImportError:
        raise fail("the consolidation lanes are not part of this memtrove") from None

    lanes = LaneSettings.from_env(os.environ)
    if not (lanes.light or lanes.heavy):
        return None
    host = LaneHost(
        settings.vault_path, settings, light=lanes.light, heavy=lanes.heavy, lanes=lanes
    )
    host.start()
    hosted = [name for name, on in (("light", lanes.light), ("heavy", lanes.heavy)) if on]
    say(f"hosting the {' and '.join(hosted)} lane{'s' if len(hosted) > 1 else ''}")
    return host
