"""Reading a project's Beads issues: ``bd list --json --limit 0`` run in the project folder.

``bd`` (the Beads issue tracker's command) is run as an argument list, never through a
shell, with ``BD_DISABLE_METRICS=1`` added to the environment it is given, standard input
closed, in a session of its own (so a time-out stops it and anything it started), at most
:data:`DEFAULT_TIMEOUT` seconds, and at most :data:`MAX_OUTPUT_BYTES` of its output read.

What it prints is hostile input. bd prints a JSON array of issues (``IssueWithCounts`` in
beads' ``cmd/bd/list.go``: the ``Issue`` fields of ``internal/types/types.go`` plus
``dependency_count`` and ``dependent_count``), each with its ``dependencies`` records
(``issue_id``, ``depends_on_id``, ``type``, ``created_at``, ``created_by``). An answer that is
not a JSON array (or ``null``, none) is refused in one line; an item without a string ``id``
and ``title`` is skipped and counted, as is a dependency without string ids and type; a
field of the wrong type is taken as missing; every text is cut to a bound and stripped of
control characters.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, NamedTuple

from memtrove.errors import MemtroveError
from memtrove.text import error_line

__all__ = [
    "BD_ARGUMENTS",
    "DEFAULT_TIMEOUT",
    "MAX_OUTPUT_BYTES",
    "BeadsDependency",
    "BeadsError",
    "BeadsIssue",
    "BeadsListing",
    "parse_listing",
    "read_issues",
    "run_bd",
]

BD_ARGUMENTS = ("list", "--json", "--limit", "0")
DEFAULT_TIMEOUT = 30.0
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
MAX_ISSUES = 100_000
MAX_ID_CHARS = 200
MAX_TITLE_CHARS = 500  # bd's own limit
MAX_TEXT_CHARS = 20_000  # each of description, design, acceptance criteria, notes
MAX_SHORT_CHARS = 200  # status, type, assignee, dates, a label
MAX_LABELS = 100
MAX_DEPENDENCIES = 1_000  # per issue
_STDERR_BYTES = 4096
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class BeadsError(MemtroveError):
    """``bd`` is missing, failed, ran out of time or printed what is not an issue list."""

    status = 502


class BeadsDependency(NamedTuple):
    """One dependency record: ``issue_id`` depends on ``depends_on_id`` (``type``)."""

    issue_id: str
    depends_on_id: str
    type: str
    created_at: str | None


class BeadsIssue(NamedTuple):
    """One issue as bd printed it, validated and bounded."""

    id: str
    title: str
    description: str
    design: str
    acceptance_criteria: str
    notes: str
    status: str
    priority: int | None
    issue_type: str
    assignee: str | None
    labels: tuple[str, ...]
    created_at: str | None
    updated_at: str | None
    closed_at: str | None
    close_reason: str
    dependencies: tuple[BeadsDependency, ...]


class BeadsListing(NamedTuple):
    """The issues read, and how many issues and dependency records were skipped."""

    issues: list[BeadsIssue]
    skipped_issues: int
    skipped_dependencies: int


def read_issues(
    project: Path, environ: Mapping[str, str], *, timeout: float = DEFAULT_TIMEOUT
) -> BeadsListing:
    """Run ``bd list --json --limit 0`` in ``project`` and parse what it prints."""
    return parse_listing(run_bd(project, environ, timeout=timeout))


def run_bd(
    project: Path,
    environ: Mapping[str, str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    limit: int = MAX_OUTPUT_BYTES,
) -> bytes:
    """What ``bd list --json --limit 0`` prints on standard output in ``project`` (``bd``
    looked up on ``environ``'s PATH); BeadsError, one line, when it cannot be run, fails,
    runs past ``timeout`` seconds or prints more than ``limit`` bytes."""
    executable = shutil.which("bd", path=environ.get("PATH", os.defpath))
    if executable is None:
        raise BeadsError(
            "bd (the Beads issue tracker) is not installed or not on PATH: "
            "see https://github.com/steveyegge/beads"
        )
    try:
        process = subprocess.Popen(
            [executable, *BD_ARGUMENTS],
            cwd=project,
            env={**environ, "BD_DISABLE_METRICS": "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        raise BeadsError(f"cannot run bd: {error_line(str(error), 200)}") from None
    assert process.stdout is not None and process.stderr is not None
    out = _Reader(process.stdout, limit, on_full=lambda: _stop(process))
    err = _Reader(process.stderr, _STDERR_BYTES)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        _stop(process)
        raise BeadsError(f"bd list did not answer within {timeout:g} s") from None
    finally:
        out.join()
        err.join()
    if out.overflowed:
        raise BeadsError(f"bd list printed more than {limit // (1024 * 1024)} MB; refused")
    if process.returncode != 0:
        said = _printable(err.data.decode("utf-8", "replace"), 300) or "no message"
        raise BeadsError(f"bd list failed (exit {process.returncode}): {said}")
    return bytes(out.data)


class _Reader:
    """Reads a pipe on a thread: at most ``limit`` bytes kept; past it, ``on_full`` is
    called once (stdout) or the rest is read and dropped (stderr, so bd never blocks)."""

    def __init__(self, stream: IO[bytes], limit: int, on_full: Any = None) -> None:
        self.data = bytearray()
        self.overflowed = False
        self._stream, self._limit, self._on_full = stream, limit, on_full
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while chunk := self._stream.read1(65536):  # type: ignore[attr-defined]
                room = self._limit - len(self.data)
                self.data += chunk[: max(room, 0)]
                if len(chunk) > room and not self.overflowed:
                    self.overflowed = True
                    if self._on_full is not None:
                        self._on_full()
                        return
        except (OSError, ValueError):
            return
        finally:
            if self._on_full is not None or self.overflowed:
                self._stream.close()

    def join(self) -> None:
        self._thread.join(5.0)
        if not self._stream.closed:
            with contextlib.suppress(OSError):
                self._stream.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill bd and whatever it started (its own session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5.0)


# -- the answer --------------------------------------------------------------------------


def parse_listing(data: bytes) -> BeadsListing:
    """The issues of bd's JSON answer; BeadsError, one line, when it is not a JSON array."""
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        raise BeadsError("bd list printed something that is not JSON") from None
    if parsed is None:
        parsed = []  # an empty list, as Go prints a nil slice
    if not isinstance(parsed, list):
        raise BeadsError(
            f"bd list printed a JSON {type(parsed).__name__}, not a list of issues"
        ) from None
    issues: list[BeadsIssue] = []
    seen: set[str] = set()
    skipped = skipped_dependencies = 0
    for item in parsed:
        issue, dropped = _issue(item) if len(issues) < MAX_ISSUES else (None, 0)
        skipped_dependencies += dropped
        if issue is None or issue.id in seen:
            skipped += 1
            continue
        seen.add(issue.id)
        issues.append(issue)
    return BeadsListing(issues, skipped, skipped_dependencies)


def _issue(item: Any) -> tuple[BeadsIssue | None, int]:
    """An issue, or None when it has no usable id and title; and the dependencies dropped."""
    if not isinstance(item, dict):
        return None, 0
    issue_id = _identifier(item.get("id"))
    title = _line(item.get("title"), MAX_TITLE_CHARS)
    if issue_id is None or not title:
        return None, 0
    dependencies, dropped = _dependencies(issue_id, item.get("dependencies"))
    labels = item.get("labels")
    priority = item.get("priority")
    return (
        BeadsIssue(
            id=issue_id,
            title=title,
            description=_text(item.get("description")),
            design=_text(item.get("design")),
            acceptance_criteria=_text(item.get("acceptance_criteria")),
            notes=_text(item.get("notes")),
            status=_line(item.get("status"), MAX_SHORT_CHARS),
            priority=priority
            if isinstance(priority, int)
            and not isinstance(priority, bool)
            and -1000 < priority < 1000
            else None,
            issue_type=_line(item.get("issue_type"), MAX_SHORT_CHARS),
            assignee=_line(item.get("assignee"), MAX_SHORT_CHARS) or None,
            labels=tuple(
                dict.fromkeys(
                    label
                    for raw in (labels if isinstance(labels, list) else [])[:MAX_LABELS]
                    if (label := _line(raw, MAX_SHORT_CHARS))
                )
            ),
            created_at=_line(item.get("created_at"), MAX_SHORT_CHARS) or None,
            updated_at=_line(item.get("updated_at"), MAX_SHORT_CHARS) or None,
            closed_at=_line(item.get("closed_at"), MAX_SHORT_CHARS) or None,
            close_reason=_text(item.get("close_reason")),
            dependencies=dependencies,
        ),
        dropped,
    )


def _dependencies(issue_id: str, value: Any) -> tuple[tuple[BeadsDependency, ...], int]:
    """The issue's dependency records that name it (or no issue), another issue and a type."""
    if not isinstance(value, list):
        return (), 0
    found: dict[tuple[str, str], BeadsDependency] = {}
    dropped = max(len(value) - MAX_DEPENDENCIES, 0)
    for record in value[:MAX_DEPENDENCIES]:
        if not isinstance(record, dict):
            dropped += 1
            continue
        owner = record.get("issue_id", issue_id)
        target = _identifier(record.get("depends_on_id"))
        kind = _line(record.get("type"), MAX_SHORT_CHARS)
        if owner != issue_id or target is None or target == issue_id or not kind:
            dropped += 1
            continue
        created = _line(record.get("created_at"), MAX_SHORT_CHARS) or None
        found.setdefault((target, kind), BeadsDependency(issue_id, target, kind, created))
    return tuple(found.values()), dropped


def _identifier(value: Any) -> str | None:
    """An issue id: a string of at most :data:`MAX_ID_CHARS` characters, none of them
    control characters or spaces."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID_CHARS:
        return None
    if _LINE_CONTROLS.search(value) or value != value.strip() or " " in value:
        return None
    return value


def _line(value: Any, most: int) -> str:
    """A one-line text field (spaces folded, control characters dropped), or ''."""
    if not isinstance(value, str):
        return ""
    return " ".join(_LINE_CONTROLS.sub(" ", value[: most * 4]).split())[:most]


def _text(value: Any) -> str:
    """A multi-line text field (control characters but newlines and tabs dropped), or ''."""
    if not isinstance(value, str):
        return ""
    text = value[:MAX_TEXT_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text).strip()


def _printable(text: str, most: int) -> str:
    return error_line(_LINE_CONTROLS.sub(" ", text), most) if text.strip() else ""
