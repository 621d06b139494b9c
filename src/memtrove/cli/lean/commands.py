"""The read commands themselves: ``search``, ``vsearch``, ``query``, ``get`` and ``status``,
and ``update`` (the no-change re-run a watcher or a hook pays every time).

Each does what its Typer command does (:mod:`memtrove.cli.reading`,
:mod:`memtrove.cli.retrieval`, :mod:`memtrove.cli.indexing`) and prints the same. A search
goes to a running ``memtrove serve`` of the same vault when there is one (:func:`ask_server`,
shared with the Typer commands); otherwise, and for ``get`` and ``status``, the vault is opened
here. Nothing below :mod:`memtrove.warm` and :mod:`memtrove.paths` loads until then.
"""

from __future__ import annotations

import contextlib
import os

from memtrove.cli.lean.output import echo_lines, error, print_json, warning
from memtrove.cli.lean.views import (
    print_results,
    print_stages,
    print_status,
    print_update,
    selected_lines,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from memtrove.cli.lean.parsing import Parsed
    from memtrove.vault import Vault

__all__ = ["WARM_TIMEOUT", "Failed", "ask_server", "run", "split_collections"]

WARM_TIMEOUT = 120.0  # seconds a CLI search waits for a running server before running itself
_QUERY_ONLY = ("intent", "compact", "diverse", "candidate_limit")
_RESULT_TEXT = ("docid", "collection", "path", "title", "snippet", "content_type", "modified_at")


class Failed(Exception):
    """A failure already reported on stderr; the command exits with ``code``."""

    def __init__(self, code: int = 1) -> None:
        super().__init__(code)
        self.code = code


def run(parsed: Parsed) -> int:
    """Run one parsed read command; its exit status (errors are one line on stderr)."""
    from memtrove.paths import config_location, vault_location

    vault = parsed.vault or os.environ.get("MEMTROVE_VAULT") or None
    # As the CLI's root: Settings.from_env(vault=Path(value)); Path tidies the spelling.
    vault_path = vault_location(None, _as_path(vault))
    config_dir = config_location()
    options = parsed.options
    try:
        if parsed.command == "get":
            _get(vault_path, config_dir, parsed.arguments[0], options)
        elif parsed.command == "status":
            _status(vault_path, config_dir, as_json=options["as_json"])
        elif parsed.command == "update":
            _update(vault_path, config_dir, options)
        else:
            _search(vault_path, config_dir, parsed.command, " ".join(parsed.arguments), options)
    except Failed as failed:
        return failed.code
    return 0


def _as_path(value: str | None) -> str | None:
    """``str(Path(value))``: what the CLI's ``--vault`` becomes (a server's URL stays as it
    is). Without a ``~`` the spelling Path tidies is tidied again by ``os.path.abspath``, so
    pathlib is not needed."""
    from memtrove.locations import is_server_url

    if value is None or "~" not in value or is_server_url(value):
        return value
    from pathlib import Path

    return str(Path(value))


# -- searching ------------------------------------------------------------------------------------


def _search(
    vault_path: str, config_dir: str, method: str, text: str, options: dict[str, Any]
) -> None:
    arguments: dict[str, Any] = {
        "limit": options["limit"],
        "collections": split_collections(options["collection"]),
        "content_types": options["content_type"] or None,
        "since": options["since"],
        "until": options["until"],
        "min_score": options["min_score"],
    }
    if method == "query":
        arguments |= {
            "intent": options["intent"],
            "compact": not options["full"],
            "diverse": options["diverse"],
        }
        if options["candidate_limit"] is not None:  # else Vault.query's default, as in the CLI
            arguments["candidate_limit"] = options["candidate_limit"]
    answer = ask_server(method, text, arguments, vault_path, config_dir)
    if answer is None:
        answer = _search_here(vault_path, config_dir, method, text, arguments)
    if method != "search":
        for message in answer["warnings"]:
            warning(message)
    if options["as_json"]:
        shown = [_shown(result) for result in answer["results"]]
        print_json({"query": text, "results": shown, **_how(answer)})
        return
    print_results(answer["results"])
    if method == "query":
        print_stages(answer["stages"], answer["skipped"])


def split_collections(values: list[str] | None) -> list[str] | None:
    """``-c a -c b,c`` -> ``["a", "b", "c"]``; None when no collection was named."""
    names = [name for item in values or [] for name in item.split(",") if name]
    return names or None


def _how(answer: Mapping[str, Any]) -> dict[str, Any]:
    how = {key: answer[key] for key in ("stages", "skipped", "warnings")}
    # an older server's answer has no basis or degraded fields: none are made up for it
    optional = ("scoreBasis", "degraded", "degradedReason", "degradedLegs")
    how.update({k: answer[k] for k in optional if k in answer})
    return how


def _shown(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result as ``SearchResult.to_dict()`` gives it (``score`` rounded, ``content`` only
    when there is some)."""
    shown = {key: value for key, value in result.items() if key != "doc_id"}
    shown["score"] = round(shown["score"], 6)
    if shown.get("content", "") is None:
        del shown["content"]
    return shown


def ask_server(
    method: str, text: str, arguments: Mapping[str, Any], vault_path: str, config_dir: str
) -> dict[str, Any] | None:
    """``Vault.<method>(text, **arguments)`` by a running ``memtrove serve`` of this vault
    (see :mod:`memtrove.warm`): its answer, checked, or None when there is no server or it
    did not answer (any refusal, a bad argument included, is then met in-process, where it
    is reported). A vault URL is sent without its password (the server only compares it)."""
    from memtrove.locations import shown_location
    from memtrove.paths import cache_location
    from memtrove.warm import WarmUnavailable, find_server, forwarded_env

    server = find_server(cache_location(), vault_path)
    token = os.environ.get("MEMTROVE_API_TOKEN", "").strip() or None
    if server is None or (token is None and server.token_required):
        return None
    env = forwarded_env(os.environ) | {
        "MEMTROVE_VAULT": shown_location(vault_path),
        "MEMTROVE_CONFIG_DIR": config_dir,
    }
    body = {"query": text, "env": env, **arguments}
    try:
        answer = server.post(f"/warm/{method}", body, token=token, timeout=WARM_TIMEOUT)
        return _checked(answer)
    except (WarmUnavailable, KeyError, TypeError, ValueError):
        return None


def _checked(answer: dict[str, Any]) -> dict[str, Any]:
    """The server's answer if it has the shape of ``SearchResults`` (TypeError otherwise)."""
    results, stages = answer["results"], answer["stages"]
    skipped, warnings = answer["skipped"], answer["warnings"]
    if not (isinstance(results, list) and isinstance(stages, list)):
        raise TypeError("results and stages must be lists")
    if not (isinstance(skipped, dict) and isinstance(warnings, list)):
        raise TypeError("skipped must be an object and warnings a list")
    texts = [*stages, *skipped, *skipped.values(), *warnings]
    for result in results:
        texts += [result[key] for key in _RESULT_TEXT]
        texts += [result.get("content") or "", *(result.get("also_at") or ())]
        if isinstance(result["score"], bool) or not isinstance(result["score"], (int, float)):
            raise TypeError("a score must be a number")
    if not all(isinstance(item, str) for item in texts):
        raise TypeError("texts must be strings")
    return answer


def _search_here(
    vault_path: str, config_dir: str, method: str, text: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """The search in this process, as the same data the server answers (exact scores)."""
    if method != "query":
        arguments = {k: v for k, v in arguments.items() if k not in _QUERY_ONLY}
    with _opened(vault_path, config_dir) as vault:
        results = getattr(vault, method)(text, **arguments)
    rows = [{**r.to_dict(), "score": r.score, "content": r.content} for r in results]
    return {**results.to_dict(), "results": rows}


# -- reading --------------------------------------------------------------------------------------


def _get(vault_path: str, config_dir: str, reference: str, options: dict[str, Any]) -> None:
    with _opened(vault_path, config_dir) as vault:
        document = vault.get(reference)
    from_line = options["from_line"]
    selected, total = selected_lines(document.body, from_line, options["max_lines"])
    if from_line > max(total, 1):
        error(f"--from-line {from_line} is past the end ({total} lines)")
        raise Failed(1)
    if options["as_json"]:
        data = document.to_dict()
        data["body"] = "\n".join(selected)
        data["from_line"] = from_line
        data["total_lines"] = total
        print_json(data)
        return
    width = len(str(from_line + len(selected)))
    numbered = options["line_numbers"]
    echo_lines(
        (
            f"{number:>{width}}  {line}" if numbered else line
            for number, line in enumerate(selected, from_line)
        ),
        stored=True,
    )


def _status(vault_path: str, config_dir: str, *, as_json: bool) -> None:
    with _opened(vault_path, config_dir) as vault:
        info = vault.status()
    if as_json:
        print_json(info.to_dict())
    else:
        print_status(info)


def _update(vault_path: str, config_dir: str, options: dict[str, Any]) -> None:
    """``memtrove update`` (without ``--embed``): index what changed, print the report."""
    from memtrove.vault.profile import refresh_after_update

    with _opened(vault_path, config_dir, create=True) as vault, _progress() as progress:
        report = vault.update(options["collection"] or None, progress=progress)
        refresh_after_update(vault, warning)  # a stale user profile is rebuilt
    if options["as_json"]:
        print_json(report.to_dict())
    else:
        print_update(report, verbose=options["verbose"])


@contextlib.contextmanager
def _progress() -> Iterator[Any]:
    """On a terminal, one transient ``indexing done/total`` line on stderr (the Typer
    command draws a Rich bar there); elsewhere nothing."""
    import sys
    import time

    if not sys.stderr.isatty():
        yield None
        return
    shown = [0.0]

    def advance(done: int, total: int, current: str) -> None:
        now = time.monotonic()
        if now - shown[0] >= 0.1 or done == total:
            shown[0] = now
            sys.stderr.write(f"\rindexing {done}/{total} {current[-40:]}\033[K")
            sys.stderr.flush()

    try:
        yield advance
    finally:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


# -- the vault ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _opened(vault_path: str, config_dir: str, *, create: bool = False) -> Iterator[Vault]:
    """The vault, opened as the CLI opens it (a read command never creates one):
    memtrove's errors, while opening or using it, become one line on stderr and exit status
    1; it is closed on the way out."""
    from memtrove.errors import MemtroveError
    from memtrove.vault import Vault

    try:
        vault = Vault.open(vault_path, config_dir=config_dir, create=create)
        try:
            yield vault
        finally:
            vault.close()
    except MemtroveError as failure:
        error(str(failure))
        raise Failed(1) from None
