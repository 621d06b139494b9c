"""What every command shares: the vault it works on, one-line errors, output helpers."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from memtrove.config import Settings, cache_dir
from memtrove.errors import MemtroveError
from memtrove.results import SearchResult, SearchResults
from memtrove.vault import Vault
from memtrove.warm import WarmUnavailable, find_server, forwarded_env

__all__ = [
    "CliState",
    "console",
    "fail",
    "open_vault",
    "print_json",
    "print_results",
    "search_with",
    "split_collections",
    "state",
]

WARM_TIMEOUT = 120.0  # seconds a CLI search waits for a running server before running itself
console = Console(highlight=False, soft_wrap=True)
error_console = Console(stderr=True, highlight=False, soft_wrap=True)


@dataclass(frozen=True)
class CliState:
    settings: Settings


def state(ctx: typer.Context) -> CliState:
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState(Settings.from_env())
    return root.obj


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``memtrove: error: message`` on stderr; return the Exit to raise."""
    text = " ".join(str(message).split())
    print(f"memtrove: error: {text}", file=sys.stderr)
    return typer.Exit(code)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn memtrove's errors into one line on stderr and exit status 1."""
    try:
        yield
    except MemtroveError as error:
        raise fail(str(error)) from None


@contextlib.contextmanager
def open_vault(ctx: typer.Context) -> Iterator[Vault]:
    settings = state(ctx).settings
    with user_errors():
        vault = Vault.open(settings.vault_path, config_dir=settings.config_dir)
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
    server = find_server(cache_dir(), settings.vault_path)
    token = os.environ.get("MEMTROVE_API_TOKEN", "").strip() or None
    if server is not None and (token is not None or not server.token_required):
        env = forwarded_env(os.environ) | {
            "MEMTROVE_VAULT": str(settings.vault_path),
            "MEMTROVE_CONFIG_DIR": str(settings.config_dir),
        }
        body = {"query": text, "env": env, **options}
        with contextlib.suppress(WarmUnavailable, KeyError, TypeError, ValueError):
            answer = server.post(f"/warm/{method}", body, token=token, timeout=WARM_TIMEOUT)
            return SearchResults.from_dict(answer)
    with open_vault(ctx) as vault:
        run: Callable[..., SearchResults] = getattr(vault, method)
        with user_errors():
            return run(text, **options)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def split_collections(values: list[str] | None) -> list[str] | None:
    """``-c a -c b,c`` -> ``["a", "b", "c"]``; None when no collection was named."""
    names = [name for item in values or [] for name in item.split(",") if name]
    return names or None


def print_results(results: Sequence[SearchResult]) -> None:
    """Ranked results as the search commands print them (``no results`` when empty)."""
    if not results:
        console.print("no results")
    for rank, r in enumerate(results, 1):
        console.print(
            f"[bold]{rank:>2}. {r.score:.3f}[/]  {escape(r.collection)}/{escape(r.path)}  "
            f"[dim]\\[{r.content_type}] #{r.docid}[/]",
            markup=True,
        )
        console.print(f"    {r.title}", markup=False)
        if r.snippet:
            console.print(f"    [dim]{escape(r.snippet)}[/]", markup=True)
        if r.content is not None:
            for line in r.content.splitlines():
                console.print(f"    | {line}", markup=False)
