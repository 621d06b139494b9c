"""The read commands' arguments, parsed as the Typer CLI parses them (click's rules).

Only well-formed command lines are taken: the options each command declares (long, short,
``--name=value``, ``-n5``), interspersed with its arguments, ``--`` ending the options, the
last of a repeated option winning, ``-c``/``-t`` accumulating. Anything else (``--help``,
an unknown option, a missing argument, a value out of range or not in its plain form) is
:class:`NotUnderstood`, and the caller hands the whole command line to the Typer CLI, whose
message and exit status 2 stay the only ones users see.
"""

from __future__ import annotations

from memtrove.patterns import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = ["COMMANDS", "NotUnderstood", "Parsed", "parse"]

COMMANDS = ("search", "vsearch", "query", "get", "status", "update")
_INTEGER = LazyPattern(r"0|[1-9][0-9]{0,8}")
_FRACTION = LazyPattern(r"(0|[1-9][0-9]{0,8})(\.[0-9]{1,17})?")

# option -> (destination, kind, lowest, highest); kinds: int, float, text, many (repeatable),
# true and false (flags).
_Spec = tuple[str, str, float | None, float | None]
_SEARCH: dict[str, _Spec] = {
    "-n": ("limit", "int", 1, 1000),
    "--num": ("limit", "int", 1, 1000),
    "--limit": ("limit", "int", 1, 1000),
    "-c": ("collection", "many", None, None),
    "--collection": ("collection", "many", None, None),
    "-t": ("content_type", "many", None, None),
    "--type": ("content_type", "many", None, None),
    "--since": ("since", "text", None, None),
    "--until": ("until", "text", None, None),
    "--min-score": ("min_score", "float", 0.0, 1.0),
    "--json": ("as_json", "true", None, None),
}
_QUERY: dict[str, _Spec] = {
    **_SEARCH,
    "--intent": ("intent", "text", None, None),
    "--full": ("full", "true", None, None),
    "--diverse": ("diverse", "true", None, None),
    "--no-diverse": ("diverse", "false", None, None),
    "--candidate-limit": ("candidate_limit", "int", 1, 1000),
}
_GET: dict[str, _Spec] = {
    "--from-line": ("from_line", "int", 1, None),
    "--max-lines": ("max_lines", "int", 1, None),
    "--line-numbers": ("line_numbers", "true", None, None),
    "--json": ("as_json", "true", None, None),
}
_STATUS: dict[str, _Spec] = {"--json": ("as_json", "true", None, None)}
# update --embed is the Typer CLI's (it embeds, with its own progress and report)
_UPDATE: dict[str, _Spec] = {
    "-c": ("collection", "many", None, None),
    "--collection": ("collection", "many", None, None),
    "--json": ("as_json", "true", None, None),
    "-v": ("verbose", "true", None, None),
    "--verbose": ("verbose", "true", None, None),
}
_SEARCH_DEFAULTS: dict[str, Any] = {
    "limit": 10,
    "collection": None,
    "content_type": None,
    "since": None,
    "until": None,
    "min_score": 0.0,
    "as_json": False,
}
# command -> (options, defaults, positional arguments: None for one or more)
_COMMANDS: dict[str, tuple[dict[str, _Spec], dict[str, Any], int | None]] = {
    "search": (_SEARCH, _SEARCH_DEFAULTS, None),
    "vsearch": (_SEARCH, _SEARCH_DEFAULTS, None),
    "query": (
        _QUERY,
        {
            **_SEARCH_DEFAULTS,
            "intent": None,
            "full": False,
            "diverse": True,
            "candidate_limit": None,  # Vault.query's own default
        },
        None,
    ),
    "get": (_GET, {"from_line": 1, "max_lines": None, "line_numbers": False, "as_json": False}, 1),
    "status": (_STATUS, {"as_json": False}, 0),
    "update": (_UPDATE, {"collection": None, "as_json": False, "verbose": False}, 0),
}


class NotUnderstood(Exception):
    """A command line the lean path leaves to the Typer CLI."""


class Parsed:
    """One read command: its name, ``--vault`` (None: not given), arguments and options."""

    __slots__ = ("arguments", "command", "options", "vault")

    def __init__(
        self, command: str, vault: str | None, arguments: list[str], options: dict[str, Any]
    ) -> None:
        self.command = command
        self.vault = vault
        self.arguments = arguments
        self.options = options


def parse(argv: Sequence[str]) -> Parsed:
    """``[--vault PATH] COMMAND ARGS...`` -> :class:`Parsed`; :class:`NotUnderstood` for
    anything the Typer CLI should answer."""
    tokens = list(argv)
    vault: str | None = None
    while tokens and tokens[0].startswith("-"):
        token = tokens.pop(0)
        if token == "--vault" and tokens:
            vault = tokens.pop(0)
        elif token.startswith("--vault="):
            vault = token.removeprefix("--vault=")
        else:
            raise NotUnderstood(token)
    if not tokens or tokens[0] not in _COMMANDS:
        raise NotUnderstood("not a read command")
    if vault == "":
        raise NotUnderstood("an empty --vault")
    command = tokens.pop(0)
    specs, defaults, wanted = _COMMANDS[command]
    options = dict(defaults)
    arguments = _parse_command(tokens, specs, options)
    if (wanted is None and not arguments) or (wanted is not None and len(arguments) != wanted):
        raise NotUnderstood("arguments")
    return Parsed(command, vault, arguments, options)


def _parse_command(
    tokens: list[str], specs: dict[str, _Spec], options: dict[str, Any]
) -> list[str]:
    arguments: list[str] = []
    while tokens:
        token = tokens.pop(0)
        if token == "--":
            arguments.extend(tokens)
            break
        if len(token) < 2 or not token.startswith("-"):
            arguments.append(token)
            continue
        name, attached = token, None
        if token.startswith("--"):
            if "=" in token:
                name, attached = token.split("=", 1)
        elif len(token) > 2:
            name, attached = token[:2], token[2:]
        spec = specs.get(name)
        if spec is None:
            raise NotUnderstood(token)
        destination, kind, lowest, highest = spec
        if kind in ("true", "false"):
            if attached is not None:
                raise NotUnderstood(token)
            options[destination] = kind == "true"
            continue
        if attached is None:
            if not tokens:
                raise NotUnderstood(token)
            attached = tokens.pop(0)
        options[destination] = _value(kind, attached, lowest, highest, options.get(destination))
    return arguments


def _value(kind: str, text: str, lowest: float | None, highest: float | None, before: Any) -> Any:
    if kind == "text":
        return text
    if kind == "many":
        return [*(before or []), text]
    pattern = _INTEGER if kind == "int" else _FRACTION
    if not pattern.fullmatch(text):
        raise NotUnderstood(text)
    number = int(text) if kind == "int" else float(text)
    if (lowest is not None and number < lowest) or (highest is not None and number > highest):
        raise NotUnderstood(text)
    return number
