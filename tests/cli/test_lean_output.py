"""The lean printer against Rich: every line prints exactly as the CLI's Rich console prints it.

The reference below is the Typer CLI's own printing code (``console.print`` with the
markup it builds); the lean views must print the same bytes for any text, hostile text
included (markup, escapes, emoji codes, controls, tabs, surrogates, wide characters).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable, Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.markup import escape as rich_escape

from memtrove.cli.lean import output, views

PIECES = st.one_of(
    st.sampled_from(list("[]\\/:#@=_- abcxyz019\t\n\r\x07\x1b漢☕é")),
    st.sampled_from(["[bold]", "[/]", "[dim]", "\\[", ":smile:", ":+1:", "12:30:45", "[/x]"]),
    st.characters(codec="utf-8"),
)
TEXT = st.lists(PIECES, max_size=12).map("".join)


@contextlib.contextmanager
def captured() -> Iterator[io.StringIO]:
    """stdout as a file (not a terminal), for the lean printer and any Rich it falls back to."""
    buffer = io.StringIO()
    saved, sys.stdout = sys.stdout, buffer
    output._stdout_plain = None
    output._console = None
    try:
        yield buffer
    finally:
        sys.stdout = saved
        output._stdout_plain = None
        output._console = None


def rich_prints(draw: Callable[[Console], None]) -> str:
    target = io.StringIO()
    draw(Console(file=target, highlight=False, soft_wrap=True))
    return target.getvalue()


def lean_prints(draw: Callable[[], None]) -> str:
    with captured() as buffer:
        draw()
    return buffer.getvalue()


def same_or_same_failure(reference: Callable[[Console], None], lean: Callable[[], None]) -> None:
    """The same output; or, where Rich refuses the markup data made, the same refusal."""
    try:
        expected = rich_prints(reference)
    except Exception as error:
        with pytest.raises(type(error)):
            lean_prints(lean)
        return
    assert lean_prints(lean) == expected


def reference_results(console: Console, results: list[dict[str, object]]) -> None:
    """``memtrove.cli.common.print_results`` as the Typer CLI has it: Rich, with control
    characters of the data made visible (``output.printable``)."""
    shown = output.printable
    if not results:
        console.print("no results")
    for rank, r in enumerate(results, 1):
        console.print(
            f"[bold]{rank:>2}. {r['score']:.3f}[/]  {rich_escape(shown(str(r['collection'])))}/"
            f"{rich_escape(shown(str(r['path'])))}  "
            f"[dim]\\[{shown(str(r['content_type']))}] #{r['docid']}[/]",
            markup=True,
        )
        console.print(f"    {shown(str(r['title']))}", markup=False)
        if r["snippet"]:
            console.print(f"    [dim]{rich_escape(shown(str(r['snippet'])))}[/]", markup=True)
        if r["content"] is not None:
            for line in str(r["content"]).splitlines():
                console.print(f"    | {shown(line, tabs=True)}", markup=False)


def result(text: str, **changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "docid": "ab12cd",
        "collection": "notes",
        "path": "a/b.md",
        "title": "A title",
        "score": 0.5,
        "snippet": "a snippet",
        "content_type": "note",
        "modified_at": "2026-01-01T00:00:00Z",
        "content": None,
    }
    return row | changes


@pytest.mark.parametrize(
    "field", ["collection", "path", "title", "snippet", "content_type", "docid", "content"]
)
@settings(max_examples=150, deadline=None)
@given(text=TEXT)
@example(text="x\\")
@example(text="a\\[1]")
@example(text="c[a/b]  ")
@example(text=":smile-emoji: at 10:00:00 :thumbs_up:")
def test_each_field_prints_as_rich_prints_it(field: str, text: str) -> None:
    rows = [result(text, **{field: text}), result("", snippet="")]
    if field == "collection":
        rows[1]["path"] = "]x"  # an unescaped bracket across two values
    same_or_same_failure(
        lambda console: reference_results(console, rows), lambda: views.print_results(rows)
    )


def test_no_results_and_the_stages_line() -> None:
    expected = rich_prints(lambda console: console.print("no results"))
    assert lean_prints(lambda: views.print_results([])) == expected

    stages, skipped = ["bm25", "vector"], {"rerank": "no [reranker]: set :smile: URL\\"}
    line = "stages: bm25 > vector  (skipped rerank: no [reranker]: set :smile: URL\\)"
    expected = rich_prints(lambda console: console.print(f"[dim]{rich_escape(line)}[/]"))
    assert lean_prints(lambda: views.print_stages(stages, skipped)) == expected


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_escape_is_richs(text: str) -> None:
    assert output.escape(text) == rich_escape(text)


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_unescaped_lines_print_as_rich_prints_them(text: str) -> None:
    """``status`` prints data inside markup without escaping it: Rich decides what a tag
    in the data does (the lean printer hands such a line to Rich)."""
    line = f"collection  {text}: 3 docs"
    same_or_same_failure(lambda console: console.print(line), lambda: output.print_line(line))


def test_a_terminal_gets_richs_styles(monkeypatch: pytest.MonkeyPatch) -> None:
    """FORCE_COLOR makes Rich style its output: the lean printer then leaves every line to it."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    rows = [result("x")]
    forced = Console(file=io.StringIO(), highlight=False, soft_wrap=True)
    assert forced.is_terminal
    with captured() as buffer:
        views.print_results(rows)
    assert "\x1b[1m" in buffer.getvalue()
    monkeypatch.setenv("FORCE_COLOR", "")
    assert output.stdout_is_plain()
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert not output.stdout_is_plain()


def test_echo_strips_ansi_codes_off_a_file() -> None:
    assert lean_prints(lambda: output.echo_lines(["\x1b[31mred\x1b[0m", "", "plain"])) == (
        "red\n\nplain\n"
    )


def test_printable_shows_terminal_controls_as_escapes() -> None:
    assert output.printable("plain é 日本") == "plain é 日本"
    assert output.printable("evil\x1b[31mred\x07") == "evil\\x1b[31mred\\x07"
    assert output.printable("two\nlines\r") == "two\\x0alines\\x0d"
    assert (
        output.printable("bidi \u202egnp.exe \u2066x\u2069")
        == "bidi \\u202egnp.exe \\u2066x\\u2069"
    )
    assert output.printable("a\tb") == "a\\x09b" and output.printable("a\tb", tabs=True) == "a\tb"
    assert output.printable("c1 \x9b2J") == "c1 \\x9b2J"
