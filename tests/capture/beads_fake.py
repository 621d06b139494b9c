"""A fake ``bd`` (the Beads issue tracker's command) for the Beads tests: a small Python
script named ``bd`` in a folder the test puts first on PATH.

It records each call (arguments, working directory, ``BD_DISABLE_METRICS``) in
``calls.jsonl`` beside itself, then answers as ``mode`` says: ``ok`` prints the bytes of
``answer.json`` (what :func:`FakeBd.answer` wrote), ``fail`` prints an error on stderr and
exits 1, ``hang`` sleeps, ``flood`` prints without end.

The answer's shape is the one real bd prints for ``bd list --json``: a JSON array of
``IssueWithCounts`` (steveyegge/beads ``cmd/bd/list.go``, the ``jsonOutput`` branch: each
``types.Issue`` with its ``labels`` and ``dependencies`` filled in, plus
``dependency_count`` and ``dependent_count``), whose fields are the json tags of ``Issue``
and ``Dependency`` in steveyegge/beads ``internal/types/types.go`` (``id``, ``title``,
``description``, ``design``, ``acceptance_criteria``, ``notes``, ``status``, ``priority``,
``issue_type``, ``assignee``, ``created_at``, ``updated_at``, ``closed_at``,
``close_reason``, ``labels``, ``dependencies`` of ``{issue_id, depends_on_id, type,
created_at, created_by}``; empty optional fields left out, as ``omitempty`` does).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = """#!{python}
import json, os, sys, time
from pathlib import Path

here = Path(__file__).resolve().parent
with (here / "calls.jsonl").open("a", encoding="utf-8") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(),
                          "metrics": os.environ.get("BD_DISABLE_METRICS")}}) + "\\n")
mode = (here / "mode").read_text().strip()
if mode == "fail":
    sys.stderr.write("Error: no beads database found\\n(run 'bd init' first)\\n")
    sys.exit(1)
if mode == "hang":
    time.sleep(120)
if mode == "flood":
    block = b"[" + b" " * (1 << 20)
    while True:
        sys.stdout.buffer.write(block)
sys.stdout.buffer.write((here / "answer.json").read_bytes())
"""


def dependency(issue: str, on: str, kind: str) -> dict[str, Any]:
    """A dependency record as bd prints it: ``issue`` depends on ``on``."""
    return {
        "issue_id": issue,
        "depends_on_id": on,
        "type": kind,
        "created_at": "2026-11-02T09:15:00.123456-07:00",
        "created_by": "alice",
    }


def issue(
    issue_id: str, title: str, *, dependencies: list[dict[str, Any]] | None = None, **fields: Any
) -> dict[str, Any]:
    """An issue as bd prints it (``IssueWithCounts``)."""
    record: dict[str, Any] = {
        "id": issue_id,
        "title": title,
        "description": fields.pop("description", ""),
        "status": fields.pop("status", "open"),
        "priority": fields.pop("priority", 2),
        "issue_type": fields.pop("issue_type", "task"),
        "created_at": "2026-11-01T10:00:00.000000-07:00",
        "updated_at": "2026-11-03T16:42:10.5-07:00",
        **fields,
    }
    if dependencies:
        record["dependencies"] = dependencies
    record["dependency_count"] = len(dependencies or [])
    record["dependent_count"] = 0
    return record


def tracker() -> list[dict[str, Any]]:
    """A small project: bd-a1 blocks bd-b2, bd-c3 was discovered from bd-a1, bd-d4 relates
    to bd-c3, and bd-e5 is a child of the epic bd-a1."""
    return [
        issue(
            "bd-a1",
            "Token refresh epic",
            description="Rotate refresh tokens on every use.",
            issue_type="epic",
            priority=1,
            assignee="alice",
            labels=["auth", "backend"],
            design="A rotating family of refresh tokens.",
        ),
        issue(
            "bd-b2",
            "Store token families in Postgres",
            description="The pelican table keeps one row per token family.",
            dependencies=[dependency("bd-b2", "bd-a1", "blocks")],
        ),
        issue(
            "bd-c3",
            "Logout loses the session",
            description="Found while rotating tokens: logout drops the cormorant cookie.",
            issue_type="bug",
            priority=0,
            dependencies=[dependency("bd-c3", "bd-a1", "discovered-from")],
        ),
        issue(
            "bd-d4",
            "Cookie flags audit",
            description="Check SameSite on every cookie.",
            dependencies=[dependency("bd-d4", "bd-c3", "related")],
        ),
        issue(
            "bd-e5",
            "Write the rotation docs",
            status="closed",
            closed_at="2026-11-04T08:00:00-07:00",
            close_reason="Done in the wiki",
            dependencies=[dependency("bd-e5", "bd-a1", "parent-child")],
        ),
    ]


class FakeBd:
    """The fake ``bd``'s folder: what it answers, and the calls it saw."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / "bd"
        script.write_text(SCRIPT.format(python=sys.executable), encoding="utf-8")
        script.chmod(0o755)
        self.mode("ok")
        self.answer(tracker())

    def mode(self, mode: str) -> None:
        (self.folder / "mode").write_text(mode, encoding="utf-8")

    def answer(self, value: Any) -> None:
        """Answer ``value`` as JSON (bytes and str as they are)."""
        data = value if isinstance(value, bytes) else None
        if data is None:
            text = value if isinstance(value, str) else json.dumps(value, indent=2)
            data = text.encode("utf-8")
        (self.folder / "answer.json").write_bytes(data)
        self.mode("ok")

    def calls(self) -> list[dict[str, Any]]:
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def install(monkeypatch: pytest.MonkeyPatch, folder: Path) -> FakeBd:
    """The fake ``bd`` in ``folder``, first on PATH."""
    fake = FakeBd(folder)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    return fake
