"""Printing as the Typer CLI prints, without importing Rich or Typer.

The Typer commands print through a Rich console (markup, emoji codes, control characters
removed, tabs expanded, styles on a terminal) and ``typer.echo`` (ANSI codes removed when
stdout is not a terminal). Loading Rich costs more than a whole BM25 search, so this module
writes the text itself whenever Rich would write exactly that text: output that is not a
terminal and a line with nothing Rich would change. Any other line goes through a Rich
console made like the CLI's (:func:`rich_console`), so the output is the same either way.
"""

from __future__ import annotations

import os
import sys

from memtrove.patterns import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from rich.console import Console

__all__ = [
    "echo_lines",
    "error",
    "escape",
    "print_json",
    "print_line",
    "rich_console",
    "stdout_is_plain",
    "unexpected",
    "warning",
]

# Characters Rich removes or expands (BEL, BS, VT, FF, CR; tab), other C0 and C1 controls,
# DEL, lone surrogates and line separators: a line holding one goes through Rich.
_UNUSUAL = LazyPattern("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_ANSI = LazyPattern(r"\033\[[;?0-9]*[a-zA-Z]")  # what typer.echo strips off a non-terminal
_MARKUP_TAG = LazyPattern(r"(\\*)(\[[a-z#/@][^[]*?])")  # what rich.markup.escape escapes
_TAG = LazyPattern(r"((\\*)\[([a-z#/@][^[]*?)])")  # a tag, as rich.markup reads them
_FORMAT_TAGS = ("bold", "dim", "/")
_EMOJI_VARIANTS = ("-emoji", "-text")
_console: Console | None = None
_emoji_names: Mapping[str, str] | None = None
_stdout_plain: bool | None = None  # decided once per process, at the first line


def rich_console() -> Console:
    """The Rich console of the CLI's stdout (no highlighting; long lines never wrapped)."""
    global _console
    if _console is None:
        from rich.console import Console

        _console = Console(highlight=False, soft_wrap=True)
    return _console


_CONTROLS = LazyPattern("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROLS_BUT_TAB = LazyPattern(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def printable(text: str, *, tabs: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters (escape sequences, bells,
    carriage returns, line breaks) and bidirectional overrides from a file name or a stored
    document show as ``\\x1b``-style escapes instead of acting on the terminal. ``tabs``
    keeps tab characters (document lines)."""
    if text.isprintable():
        return text
    pattern = _CONTROLS_BUT_TAB if tabs else _CONTROLS
    return pattern.sub(lambda m: _escaped(m[0]), text)


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """``rich.markup.escape``: ``text`` inside markup shows as itself."""
    escaped = _MARKUP_TAG.sub(lambda m: f"{m[1]}{m[1]}\\{m[2]}", text)
    if escaped.endswith("\\") and not escaped.endswith("\\\\"):
        return escaped + "\\"
    return escaped


def stdout_is_plain(env: Mapping[str, str] | None = None) -> bool:
    """Whether Rich would treat stdout as a file, not a terminal (so it adds no styles):
    ``TTY_COMPATIBLE`` and ``FORCE_COLOR`` decide as in Rich, else ``isatty``."""
    env = os.environ if env is None else env
    compatible = env.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "0"
    if "FORCE_COLOR" in env:
        return env["FORCE_COLOR"] == ""
    try:
        return not sys.stdout.isatty()
    except ValueError:
        return True


def _plain_stdout() -> bool:
    global _stdout_plain
    if _stdout_plain is None:
        _stdout_plain = stdout_is_plain()
    return _stdout_plain


def print_line(markup: str, *, tags: int = 0, markup_on: bool = True) -> None:
    """Print one line as ``console.print(markup, markup=markup_on)`` does; ``tags`` is how
    many markup tags the format itself put in (``[bold]``, ``[dim]``, ``[/]``)."""
    plain = _rendered(markup, tags) if markup_on else markup
    unusual = not plain.isprintable() and _UNUSUAL.search(plain) if plain else False
    if plain is None or not _plain_stdout() or unusual or _has_emoji_code(plain):
        rich_console().print(markup, markup=markup_on)
        return
    sys.stdout.write(plain + "\n")


def _rendered(markup: str, tags: int) -> str | None:
    """The text of ``markup`` as ``rich.markup.render`` makes it, or None when the markup
    holds tags other than the format's own (from data: Rich decides what they do)."""
    if "[" not in markup:
        return markup
    pieces: list[str] = []
    position = seen = 0
    for match in _TAG.finditer(markup):
        whole, escapes, tag = match.groups()
        start, end = match.span()
        if start > position:
            pieces.append(markup[position:start].replace("\\[", "["))
        position = end
        backslashes, escaped = divmod(len(escapes), 2)
        pieces.append("\\" * backslashes)
        if escaped:
            pieces.append(whole[len(escapes) :])
            continue
        if tag not in _FORMAT_TAGS:
            return None
        seen += 1
    pieces.append(markup[position:].replace("\\[", "["))
    return "".join(pieces) if seen == tags else None


def _has_emoji_code(text: str) -> bool:
    """Whether Rich would replace an emoji code (``:name:``) in ``text``. Every name between
    two colons is checked, whatever markup splits the text into."""
    parts = text.split(":")
    if len(parts) < 3:
        return False
    names = [part for part in parts[1:-1] if part and not any(c.isspace() for c in part)]
    if not names:
        return False
    known = _known_emoji()
    for name in names:
        for variant in _EMOJI_VARIANTS:
            if name.endswith(variant) and name[: -len(variant)].lower() in known:
                return True
        if name.lower() in known:
            return True
    return False


def _known_emoji() -> Mapping[str, str]:
    global _emoji_names
    if _emoji_names is None:
        from rich._emoji_codes import EMOJI

        _emoji_names = EMOJI
    return _emoji_names


def echo_lines(lines: Iterable[str], *, stored: bool = False) -> None:
    """``typer.echo`` of each line: ANSI escape codes are removed unless stdout is a
    terminal. ``stored`` (a document's own text): on a terminal its control characters
    show as escapes (:func:`printable`) instead of acting on the terminal."""
    try:
        strip = not sys.stdout.isatty()
    except ValueError:
        strip = True
    if strip:
        text = "".join(_ANSI.sub("", line) + "\n" for line in lines)
    elif stored:
        text = "".join(printable(line, tabs=True) + "\n" for line in lines)
    else:
        text = "".join(line + "\n" for line in lines)
    sys.stdout.write(text)
    sys.stdout.flush()


def print_json(data: Any) -> None:
    import json

    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def error(message: str) -> None:
    """``memtrove: error: message`` on stderr, whitespace folded into one line."""
    text = " ".join(str(message).split())
    print(f"memtrove: error: {text}", file=sys.stderr)


def warning(message: str) -> None:
    print(f"memtrove: warning: {message}", file=sys.stderr)


def unexpected(failure: BaseException) -> None:
    """The CLI's last resort for a failure no command handles: one line, never a traceback."""
    message = " ".join(str(failure).split()) or type(failure).__name__
    print(f"memtrove: error: unexpected {type(failure).__name__}: {message}", file=sys.stderr)
