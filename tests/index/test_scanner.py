from __future__ import annotations

import os
import socket
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.index.scanner import (
    EXCLUDED_DIRS,
    MAX_FILE_BYTES,
    compile_pattern,
    scan_collection,
)
from tests.conftest import write


def matches(pattern: str, path: str) -> bool:
    return compile_pattern(pattern).match(path) is not None


def scanned(root: Path, pattern: str = "**/*.md") -> list[str]:
    return [file.path for file in scan_collection(root, pattern).files]


# -- glob translation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/z/a.md", True),
        ("**/*.md", ".hidden.md", True),
        ("**/*.md", "a.txt", False),
        ("**/*.md", "a.mdx", False),
        ("**/*.md", "a.md/b", False),
        ("*.md", "a.md", True),
        ("*.md", "x/a.md", False),
        ("notes/**", "notes/a.md", True),
        ("notes/**", "notes/x/y.txt", True),
        ("notes/**", "notes", False),
        ("notes/**", "other/notes/a.md", False),
        ("notes/**", "notesx/a.md", False),
        ("x/**/y.md", "x/y.md", True),
        ("x/**/y.md", "x/a/b/y.md", True),
        ("x/**/y.md", "x/ay.md", False),
        ("**", "a/b/c", True),
        ("{a,b}.md", "a.md", True),
        ("{a,b}.md", "b.md", True),
        ("{a,b}.md", "c.md", False),
        ("{a,b}.md", "ab.md", False),
        ("*.{md,markdown}", "x.markdown", True),
        ("*.{md,markdown}", "x.txt", False),
        ("{notes,docs/**}/*.md", "docs/deep/er/a.md", True),
        ("{a,{b,c}}.md", "c.md", True),
        ("{a,}x.md", "x.md", True),
        ("[abc].md", "b.md", True),
        ("[abc].md", "d.md", False),
        ("[a-c].md", "b.md", True),
        ("[!abc].md", "d.md", True),
        ("[!abc].md", "a.md", False),
        ("[^abc].md", "a.md", False),
        ("?.md", "a.md", True),
        ("?.md", "ab.md", False),
        ("?.md", ".md", False),
        ("a?c.md", "a/c.md", False),
        ("*.md", "/.md", False),
    ],
)
def test_glob_translation(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("a.md", "a.md"),
        ("a+b (1).md", "a+b (1).md"),
        ("$x^.md", "$x^.md"),
        ("[a.md", "[a.md"),  # unclosed bracket is literal
        ("{a,b.md", "{a,b.md"),  # unclosed brace is literal
        ("a\\b.md", "a\\b.md"),
    ],
)
def test_regex_characters_are_literal(pattern: str, path: str) -> None:
    assert matches(pattern, path)
    assert not matches(pattern, "x" + path)


def test_dot_is_not_a_wildcard() -> None:
    assert not matches("a.md", "axmd")


def test_empty_or_slash_pattern_means_all_markdown() -> None:
    for pattern in ("", "   ", "/"):
        assert matches(pattern, "x/y.md")
        assert not matches(pattern, "x/y.txt")


def test_leading_slash_and_spaces_are_ignored() -> None:
    assert matches("  /docs/*.md ", "docs/a.md")


def test_star_does_not_cross_folders_but_double_star_does() -> None:
    assert not matches("docs/*", "docs/a/b.md")
    assert matches("docs/**", "docs/a/b.md")
    assert matches("docs**", "docs/a/b.md")


def test_newlines_in_names_are_matched() -> None:
    assert matches("**/*.md", "we\nird.md")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("[]].md", "].md", True),  # `]` first in a class is a member
        ("[]a].md", "a.md", True),
        ("[!]].md", "].md", False),
        ("[!]].md", "x.md", True),
        ("[z-a].md", "[z-a].md", True),  # a reversed range is not a class
        ("[\\].md", "\\.md", True),
        ("[a--b].md", "-.md", True),
        ("[a--b].md", "c.md", False),
        ("[a&&b].md", "&.md", True),
        ("[[].md", "[.md", True),
        ("[a-].md", "-.md", True),
        ("[!].md", "[!].md", True),  # never closed: literal
    ],
)
def test_awkward_bracket_classes_compile(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_negated_class_does_not_match_a_slash() -> None:
    assert not matches("a[!x]b", "a/b")
    assert matches("a[!x]b", "a-b")


_GLOB_CHARS = st.sampled_from(list("ab/.*?[]!^-{},\\|&~()$+"))


@given(st.one_of(st.text(max_size=30), st.text(_GLOB_CHARS, max_size=20)), st.text(max_size=20))
def test_any_pattern_compiles_without_error_or_warning(pattern: str, path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile_pattern.cache_clear()
        compiled = compile_pattern(pattern)
    compiled.match(path)


# -- scanning ---------------------------------------------------------------------------------


def test_scan_lists_matching_files_sorted_with_size_and_mtime(notes: Path) -> None:
    write(notes, "b.md", "bee")
    write(notes, "a.md", "a")
    write(notes, "sub/deeper/c.md", "see")
    write(notes, "other.txt", "no")
    result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["a.md", "b.md", "sub/deeper/c.md"]
    bee = result.files[1]
    assert bee.size == 3
    assert bee.absolute == str(notes / "b.md")
    assert bee.mtime_ns == (notes / "b.md").stat().st_mtime_ns
    assert result.skipped == []
    assert result.unreadable_dirs == []
    assert not result.root_missing


def test_scan_respects_the_pattern(notes: Path) -> None:
    write(notes, "top.md", "x")
    write(notes, "notes/in.md", "x")
    write(notes, "notes/deep/in.txt", "x")
    write(notes, "docs/d.md", "x")
    assert scanned(notes, "*.md") == ["top.md"]
    assert scanned(notes, "notes/**") == ["notes/deep/in.txt", "notes/in.md"]
    assert scanned(notes, "{docs,notes}/*.md") == ["docs/d.md", "notes/in.md"]


@pytest.mark.parametrize(
    "folder",
    [*sorted(EXCLUDED_DIRS), ".anything", ".hidden_notes"],
)
def test_excluded_folders_are_never_entered_at_any_depth(notes: Path, folder: str) -> None:
    write(notes, "kept.md", "x")
    write(notes, f"{folder}/top.md", "x")
    write(notes, f"a/b/{folder}/deep.md", "x")
    write(notes, f"a/b/{folder}/sub/deeper.md", "x")
    assert scanned(notes) == ["kept.md"]
    assert scanned(notes, "**") == ["kept.md"]


def test_names_like_excluded_folders_are_fine_as_files_and_longer_names(notes: Path) -> None:
    write(notes, "build.md", "x")
    write(notes, "builds/a.md", "x")
    write(notes, "my_vendor/a.md", "x")
    write(notes, "dist-notes/a.md", "x")
    write(notes, ".dotfile.md", "x")
    assert scanned(notes) == [
        ".dotfile.md",
        "build.md",
        "builds/a.md",
        "dist-notes/a.md",
        "my_vendor/a.md",
    ]


def test_exclusion_is_case_sensitive(notes: Path) -> None:
    write(notes, "Build/a.md", "x")
    write(notes, "_private/a.md", "x")
    assert scanned(notes) == ["Build/a.md", "_private/a.md"]


def test_a_dot_folder_root_is_still_scanned(tmp_path: Path) -> None:
    root = tmp_path / ".notes"
    write(root, "a.md", "x")
    assert scanned(root) == ["a.md"]


def test_symlinked_files_are_skipped_and_reported(notes: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", "secret.md", "outside the collection")
    write(notes, "real.md", "x")
    (notes / "link.md").symlink_to(outside)
    (notes / "inner-link.md").symlink_to(notes / "real.md")
    (notes / "dangling.md").symlink_to(notes / "missing.md")
    (notes / "link.txt").symlink_to(outside)
    result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["real.md"]
    assert sorted(result.skipped) == [
        ("dangling.md", "symbolic link (not followed)", ""),
        ("inner-link.md", "symbolic link (not followed)", ""),
        ("link.md", "symbolic link (not followed)", ""),
    ]


def test_symlinked_folders_are_not_followed(notes: Path, tmp_path: Path) -> None:
    write(tmp_path / "outside", "a.md", "x")
    write(notes, "real/b.md", "x")
    (notes / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    (notes / "loop").symlink_to(notes, target_is_directory=True)
    result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["real/b.md"]
    # a folder link is reported (not entered), wherever it points
    assert result.skipped == [
        ("linked", "symbolic link (not followed)", "folder not entered"),
        ("loop", "symbolic link (not followed)", "folder not entered"),
    ]
    assert ("linked", "symbolic link (not followed)", "") in scan_collection(notes, "**").skipped


def test_files_over_5_mb_are_skipped_from_their_size(notes: Path) -> None:
    at_limit = notes / "at-limit.md"
    with at_limit.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES)
    too_big = notes / "too-big.md"
    with too_big.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["at-limit.md"]
    assert result.files[0].size == MAX_FILE_BYTES
    assert result.skipped == [("too-big.md", "larger than 5 MB", "5,242,881 bytes")]


def test_missing_root(tmp_path: Path) -> None:
    result = scan_collection(tmp_path / "nope", "**/*.md")
    assert result.root_missing
    assert result.files == []
    assert result.unreadable_dirs == []


def test_root_that_is_a_file_counts_as_missing(tmp_path: Path) -> None:
    file = write(tmp_path, "file.md", "x")
    assert scan_collection(file, "**/*.md").root_missing


def test_empty_root(notes: Path) -> None:
    result = scan_collection(notes, "**/*.md")
    assert result.files == []
    assert not result.root_missing


# -- unreadable folders and files -------------------------------------------------------------


@pytest.fixture
def unreadable(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Make folders unlistable: chmod 000 when that works, else a failing os.scandir."""
    blocked: list[Path] = []

    def block(folder: Path) -> None:
        blocked.append(folder)
        if os.geteuid() != 0:
            folder.chmod(0)

    if os.geteuid() == 0:  # root reads everything regardless of mode bits
        real_scandir = os.scandir

        def scandir(path: Any = ".") -> Any:
            if any(os.path.samefile(path, folder) for folder in blocked):
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)
    yield block
    for folder in blocked:
        folder.chmod(0o755)


def test_unreadable_folder_is_reported_and_the_rest_scanned(notes: Path, unreadable: Any) -> None:
    write(notes, "ok.md", "x")
    write(notes, "locked/hidden.md", "x")
    write(notes, "a/locked2/hidden.md", "x")
    write(notes, "a/fine.md", "x")
    unreadable(notes / "locked")
    unreadable(notes / "a" / "locked2")
    result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["a/fine.md", "ok.md"]
    assert sorted(result.unreadable_dirs) == ["a/locked2", "locked"]
    assert sorted(result.skipped) == [
        ("a/locked2", "folder not readable", "Permission denied"),
        ("locked", "folder not readable", "Permission denied"),
    ]


def test_unreadable_root_is_reported_as_empty_relative_path(notes: Path, unreadable: Any) -> None:
    write(notes, "a.md", "x")
    unreadable(notes)
    result = scan_collection(notes, "**/*.md")
    assert result.files == []
    assert result.unreadable_dirs == [""]
    assert result.skipped == [(".", "folder not readable", "Permission denied")]
    assert not result.root_missing


class _EntryWithFailingStat:
    """A real os.DirEntry whose stat() fails, as it can for a file removed mid-scan."""

    def __init__(self, entry: os.DirEntry[str]) -> None:
        self._entry = entry
        self.name = entry.name
        self.path = entry.path

    def __getattr__(self, name: str) -> Any:
        return getattr(self._entry, name)

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        raise PermissionError(13, "Permission denied", self.path)


def test_file_whose_stat_fails_is_reported_unreadable(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(notes, "good.md", "x")
    write(notes, "bad.md", "x")
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        return [
            _EntryWithFailingStat(entry) if entry.name == "bad.md" else entry
            for entry in real_scandir(path)
        ]

    monkeypatch.setattr(os, "scandir", scandir)
    result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["good.md"]
    assert result.unreadable_files == ["bad.md"]
    assert result.skipped == [("bad.md", "not readable", "Permission denied")]


def test_non_regular_files_are_skipped_with_their_kind_and_never_opened(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(notes, "a.md", "x")
    os.mkfifo(notes / "pipe.md")  # opening it would block: the scan only stats it
    os.mkfifo(notes / "pipe.txt")  # not taken by the pattern: not reported
    monkeypatch.chdir(notes)  # a socket path must stay under ~100 bytes
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("sock.md")
        (notes / "loop.md").symlink_to("loop.md")
        (notes / "broken.md").symlink_to("nowhere.md")
        result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["a.md"]
    assert result.skipped == [
        ("broken.md", "symbolic link (not followed)", ""),
        ("loop.md", "symbolic link (not followed)", ""),
        ("pipe.md", "not a regular file", "FIFO"),
        ("sock.md", "not a regular file", "socket"),
    ]
    assert result.unreadable_files == []


def test_a_device_is_skipped_as_not_regular(notes: Path) -> None:
    try:
        os.mknod(notes / "null.md", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("creating a device node needs privileges")
    assert scan_collection(notes, "**/*.md").skipped == [
        ("null.md", "not a regular file", "character device")
    ]


def raw_write(folder: Path, name: bytes, data: bytes = b"# x\n") -> None:
    """A file whose name is raw bytes (not necessarily UTF-8)."""
    with open(os.fsencode(folder) + b"/" + name, "wb") as handle:
        handle.write(data)


def test_names_that_are_not_utf8_are_skipped_and_the_rest_scanned(notes: Path) -> None:
    write(notes, "good.md", "x")
    raw_write(notes, b"bad\xff.md")
    raw_write(notes, b"bad\xfe.txt")  # not taken by the pattern: not reported
    bad_folder = os.fsencode(notes) + b"/dir\xfe"
    os.mkdir(bad_folder)
    raw_write(Path(os.fsdecode(bad_folder)), b"inside.md")  # a path no document can have
    (notes / "sub").mkdir()
    raw_write(notes / "sub", b"inner\xc3.md")
    result = scan_collection(notes, "**/*.md")
    assert [f.path for f in result.files] == ["good.md"]
    assert result.skipped == [
        ("bad\ufffd.md", "name not valid UTF-8", ""),
        ("dir\ufffd", "name not valid UTF-8", "folder not entered"),
        ("sub/inner\ufffd.md", "name not valid UTF-8", ""),
    ]
    for path, _, _ in result.skipped:
        path.encode("utf-8")  # printable and storable
    assert result.unreadable_files == [] and result.unreadable_dirs == []


def test_an_excluded_name_that_is_not_utf8_is_reported_as_excluded(notes: Path) -> None:
    raw_write(notes, b"bad\xff.ru.md")
    assert scan_collection(notes, "**/*.md", ["*.ru.md"]).skipped == [
        ("bad\ufffd.ru.md", "excluded by pattern", "")
    ]


# -- exclude globs ----------------------------------------------------------------------------


def excluded(result: Any) -> list[str]:
    return sorted(path for path, reason, _ in result.skipped if reason == "excluded by pattern")


def test_exclude_globs_take_files_out_and_report_them(notes: Path) -> None:
    for name in ("a.md", "a.ru.md", "deep/b.md", "deep/b.ru.md", "i18n/de/c.md", "i18n.md"):
        write(notes, name, "x")
    write(notes, "i18n/de/c.txt", "not taken by the pattern, so not reported either")
    result = scan_collection(notes, "**/*.md", ["**/*.ru.md", "i18n/**"])
    assert [f.path for f in result.files] == ["a.md", "deep/b.md", "i18n.md"]
    assert excluded(result) == ["a.ru.md", "deep/b.ru.md", "i18n/de/c.md"]
    assert scanned(notes) == sorted([*excluded(result), "a.md", "deep/b.md", "i18n.md"])


@pytest.mark.parametrize("glob", ["vendored", "vendored/", "vendored/**", "**/vendored", "*ored"])
def test_a_glob_matching_a_folder_excludes_everything_under_it(notes: Path, glob: str) -> None:
    write(notes, "keep.md", "x")
    write(notes, "vendored/a.md", "x")
    write(notes, "vendored/deep/b.md", "x")
    result = scan_collection(notes, "**/*.md", [glob.strip("/")])
    assert [f.path for f in result.files] == ["keep.md"]
    assert excluded(result) == ["vendored/a.md", "vendored/deep/b.md"]


def test_exclusion_comes_before_the_size_check(notes: Path) -> None:
    write(notes, "big.ru.md", "x")
    too_big = notes / "huge.ru.md"
    with too_big.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    result = scan_collection(notes, "**/*.md", ["*.ru.md"])
    assert result.files == [] and excluded(result) == ["big.ru.md", "huge.ru.md"]


def test_an_excluded_symlink_is_reported_as_excluded(notes: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", "x.md", "x")
    (notes / "link.ru.md").symlink_to(outside)
    (notes / "link.md").symlink_to(outside)
    result = scan_collection(notes, "**/*.md", ["*.ru.md"])
    assert sorted(result.skipped) == [
        ("link.md", "symbolic link (not followed)", ""),
        ("link.ru.md", "excluded by pattern", ""),
    ]


def test_an_unreadable_excluded_folder_is_not_kept(notes: Path, unreadable: Any) -> None:
    write(notes, "ok.md", "x")
    write(notes, "vendor-docs/a.md", "x")
    unreadable(notes / "vendor-docs")
    result = scan_collection(notes, "**/*.md", ["vendor-docs"])
    assert [f.path for f in result.files] == ["ok.md"]
    assert result.unreadable_dirs == [] and result.skipped == []
