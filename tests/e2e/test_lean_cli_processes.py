"""The lean read commands against the Typer CLI, as real processes on one real vault.

Every argument list runs twice: as users run it (``python -m memtrove ...``: the lean path
when it understands the command line) and with ``MEMTROVE_LEAN=off`` (the Typer CLI alone).
Standard output, standard error and the exit status must be the same, for results, JSON,
empty answers, memtrove's errors and usage errors (which the lean path leaves to Typer).
The notes include text Rich would change (markup, emoji codes, tabs, backslashes) and ANSI
codes that ``typer.echo`` strips.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, write

HOSTILE = {
    "markup.md": "# Markup [bold]shouting[/bold] and [link=x]links[/link]\n\n"
    "The markup note keeps [red]colour[/] tags, a \\[escaped] bracket and a path C:\\temp\\.\n",
    "emoji.md": "# Emoji :smile: in the title :thumbs_up:\n\n"
    "The emoji note meets at 12:30:45 with :+1: and :not_an_emoji: and :smile-text: codes.\n",
    "tabs.md": "# Tabs\tand controls\n\nThe tabs note has\ta tab, a bell \x07 and a carriage\rreturn.\n",
    "ansi.md": "# ANSI colours\n\nThe ansi note is \x1b[31mred\x1b[0m and \x1b[1mbold\x1b[0m.\n",
    "wide.md": "# Wide 漢字 and café ☕\n\nThe wide note: naïve façade, 東京 and emoji ☕ at 10:00.\n",
}
DOCUMENT = "demo/problems/2026-08-05-thumbnail-worker-memory-leak.md"


def run(arguments: list[str], env: dict[str, str], *, lean: bool = True) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *arguments],
        env=env if lean else env | {"MEMTROVE_LEAN": "off"},
        capture_output=True,
        timeout=120,
    )
    return (
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def environment(root: Path) -> dict[str, str]:
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "FORCE_COLOR"))}
    return env | {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MEMTROVE_VAULT": str(root / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(root / "config"),
        "MEMTROVE_SERVER": "off",
    }


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A vault of the examples (embedded) plus a collection of hostile notes."""
    root = tmp_path_factory.mktemp("lean-vault")
    env = environment(root)
    hostile = root / "hostile"
    for name, text in HOSTILE.items():
        write(hostile, name, text)
    for arguments in (
        ["bootstrap", str(EXAMPLES), "--name", "demo"],
        ["collection", "add", str(hostile), "--name", "hostile"],
        ["update", "--embed"],
    ):
        code, _, err = run(arguments, env)
        assert code == 0, err
    return env


def docid_of(env: dict[str, str], query: str) -> str:
    code, out, err = run(["search", query, "-n", "1"], env)
    assert code == 0, err
    found = re.search(r"#([0-9a-f]{6,})", out)
    assert found, out
    return found[1]


SEARCHES = [
    ["search", "thumbnail worker memory leak"],
    ["search", "thumbnail", "worker", "-n", "2"],
    ["search", "--json", "cache", "-n3"],
    ["search", "cache", "-c", "demo", "--limit=2"],
    ["search", "note", "-c", "demo,hostile", "-c", "hostile", "-t", "note", "-t", "decision"],
    ["search", "zzzznothingmatchesthis"],
    ["search", "zzzznothingmatchesthis", "--json"],
    ["search", "cache", "--since", "2026-01-01", "--until", "2026-12-31", "--num", "4"],
    ["search", "cache", "--since", "not a date"],
    ["search", "cache", "-t", "no-such-type"],
    ["search", "cache", "--min-score", "0.5"],
    ["search", "markup", "note"],
    ["search", "emoji", "note"],
    ["search", "tabs", "note", "--json"],
    ["search", "wide", "note"],
    ["search", "--", "-n", "cache"],
    ["search", ""],
    ["search", "cache", "-n", "0"],
    ["search", "cache", "-n", "abc"],
    ["search", "cache", "--min-score", "2"],
    ["search", "cache", "--bogus"],
    ["search", "cache", "--json=yes"],
    ["search"],
    ["search", "--help"],
    ["search", "cache", "-h"],
]
VECTOR_SEARCHES = [
    ["vsearch", "memory leak in the thumbnail worker", "-n", "2"],
    ["vsearch", "caching", "--json", "-n", "2"],
    ["vsearch", "emoji", "-c", "hostile", "-t", "note"],
    ["vsearch", "caching", "--min-score", "0.99"],
    ["vsearch", "caching", "--min-score", "1.5"],
    ["query", "thumbnail worker memory leak", "-n", "3"],
    ["query", "cache", "--json", "--full", "-n", "1"],
    ["query", "cache", "--no-diverse", "--candidate-limit", "5", "-n", "2"],
    ["query", "cache", "--diverse", "--intent", "debugging a leak", "-t", "problem"],
    ["query", "latest decisions", "-n", "2"],
    ["query", "markup", "-c", "hostile", "--full"],
    ["query", "x", "--candidate-limit", "0"],
    ["query", "x", "--full=1"],
]
READS = [
    ["get", DOCUMENT],
    ["get", DOCUMENT, "--line-numbers", "--from-line", "3", "--max-lines", "2"],
    ["get", DOCUMENT, "--json", "--max-lines", "4"],
    ["get", "hostile/ansi.md"],
    ["get", "hostile/ansi.md", "--json"],
    ["get", "#ffffffff"],
    ["get", DOCUMENT, "--from-line", "999"],
    ["get", DOCUMENT, "--max-lines", "0"],
    ["get"],
    ["get", "a", "b"],
    ["status"],
    ["status", "--json"],
    ["status", "extra"],
]


def same_both_ways(arguments: list[str], env: dict[str, str]) -> None:
    lean = run(arguments, env)
    typer = run(arguments, env, lean=False)
    assert lean == typer, arguments


@pytest.mark.parametrize("group", [SEARCHES, VECTOR_SEARCHES, READS], ids=["search", "vq", "read"])
def test_lean_commands_print_what_the_typer_cli_prints(
    group: list[list[str]], env: dict[str, str]
) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda arguments: same_both_ways(arguments, env), group))


def test_docid_references_and_global_options(env: dict[str, str], tmp_path: Path) -> None:
    docid = docid_of(env, "thumbnail worker memory leak")
    vault = env["MEMTROVE_VAULT"]
    cases = [
        ["get", f"#{docid}", "--line-numbers"],
        ["get", docid[:6], "--max-lines", "1"],
        ["--vault", vault, "search", "cache", "-n", "1"],
        [f"--vault={vault}", "status"],
        ["--vault", "", "status"],
        ["--vault", str(tmp_path / "fresh.sqlite"), "search", "cache"],
        ["--vault", str(tmp_path / "fresh.sqlite"), "status"],
        ["--vault", str(tmp_path), "search", "cache"],
        ["search", "cache", "--vault", vault],
        ["--version"],
    ]
    for arguments in cases:
        same_both_ways(arguments, env)


def test_errors_are_the_same_lines(env: dict[str, str], tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not a database" * 100)
    bare = environment(tmp_path / "bare")
    write(tmp_path / "bare-notes", "one.md", "# One\n\nA single note about caching.\n")
    for arguments in (["collection", "add", str(tmp_path / "bare-notes")], ["update"]):
        code, _, err = run(arguments, bare)
        assert code == 0, err
    cases = [
        (["--vault", str(corrupt), "search", "cache"], env),
        (["--vault", str(corrupt), "get", "#abc"], env),
        (["--vault", str(corrupt), "status"], env),
        (["vsearch", "caching"], bare),  # no vectors yet
        (["query", "caching", "--json"], bare),
        # a read command never creates a vault: one line naming the path, exit 1
        (["--vault", str(tmp_path / "none" / "v.sqlite"), "search", "cache"], env),
        (["--vault", str(tmp_path / "none" / "v.sqlite"), "get", "#abc"], env),
        (["--vault", str(tmp_path / "none" / "v.sqlite"), "status", "--json"], env),
    ]
    for arguments, environment_ in cases:
        lean = run(arguments, environment_)
        assert lean == run(arguments, environment_, lean=False), arguments
        if arguments[-1] != "--json":
            assert "Traceback" not in lean[2]
    assert not (tmp_path / "none").exists()


def test_the_lean_path_loads_neither_typer_nor_rich(env: dict[str, str]) -> None:
    """Only Rich's table of emoji names may load (to tell ``:smile:`` from ``12:30:45``)."""
    allowed = {"rich", "rich._extension", "rich._emoji_codes"}
    for arguments in (
        ["search", "memory leak", "-c", "demo"],
        ["get", DOCUMENT],
        ["status"],
        ["update"],
    ):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "memtrove", *arguments],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
        heavy = {name for name in loaded if name.split(".")[0] in ("typer", "click", "rich")}
        assert heavy <= allowed, arguments
        assert "numpy" not in loaded, arguments
        if arguments[0] == "search":  # building dataclasses was a quarter of a cold search
            assert not loaded & {"dataclasses", "inspect", "json", "hashlib"}, arguments


def test_a_reader_that_went_away_is_met_alike(env: dict[str, str]) -> None:
    """``memtrove search ... | head -0``: exit 1 and nothing on stderr, both ways (with stdout
    block-buffered, as it is for a pipe unless PYTHONUNBUFFERED is set; Python's own answer
    would be a warning and status 120)."""
    env = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}
    for arguments in (["search", "cache"], ["search", "cache", "--json"], ["get", DOCUMENT]):
        answers = []
        for lean in (True, False):
            process = subprocess.Popen(
                [sys.executable, "-m", "memtrove", *arguments],
                env=env if lean else env | {"MEMTROVE_LEAN": "off"},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            assert process.stdout is not None and process.stderr is not None
            process.stdout.close()  # before the command writes a line
            answers.append((process.wait(timeout=120), process.stderr.read()))
        assert answers == [(1, b""), (1, b"")], arguments


def _timeless(printed: tuple[int, str, str]) -> tuple[int, str, str]:
    code, out, err = printed
    out = re.sub(r"\(\d+\.\d\ds\)", "(<s>)", out)
    return code, re.sub(r'"elapsed_seconds": [0-9.e-]+', '"elapsed_seconds": 0', out), err


def test_update_prints_what_the_typer_cli_prints(tmp_path: Path) -> None:
    """The no-change re-run a watcher pays runs lean: the same report, skips and notices
    included, both ways (the elapsed time aside); ``--embed`` and ``--help`` stay Typer's."""
    env = environment(tmp_path)
    notes = tmp_path / "notes"
    write(notes, "a.md", "# A\n\nalpha note\n")
    write(notes, "big.md", "# Big\n\n" + "x" * (6 * 1024 * 1024))  # skipped: over 5 MB
    code, _, err = run(["collection", "add", str(notes), "--name", "n"], env)
    assert code == 0, err
    first = run(["update"], env)  # indexes a.md: from here on, each run is a no-change re-run
    assert first[0] == 0 and "+1 ~0 =0 -0" in first[1], first
    for arguments in (["update"], ["update", "--json"], ["update", "-v"], ["update", "-c", "n"]):
        lean, typer = run(arguments, env), run(arguments, env, lean=False)
        assert _timeless(lean) == _timeless(typer), arguments
        assert (lean[0] == 0 and "skipped 1:" in lean[1]) or "--json" in arguments
    assert "+0 ~0 =1 -0" in run(["update"], env)[1]
    assert _timeless(run(["update", "-c", "nope"], env)) == _timeless(
        run(["update", "-c", "nope"], env, lean=False)
    )
    help_text = run(["update", "--help"], env)
    assert help_text[0] == 0 and "--embed" in help_text[1]
