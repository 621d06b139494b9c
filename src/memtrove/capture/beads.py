"""Beads issues in the vault (``beads_sync``): the ``beads_issues`` and
``beads_dependencies`` mirror, one document per issue, and graph edges between them.

:func:`sync_issues` takes what :mod:`memtrove.capture.beads_reader` read from ``bd`` for one
project folder and, in one write transaction:

- upserts each issue into ``beads_issues`` (keyed by the project folder and the issue id)
  and replaces its dependency records in ``beads_dependencies``;
- writes each issue as a document of the internal collection,
  ``_memtrove/beads/<folder>-<hash8>/<issue id>.md`` (frontmatter, title, status line,
  description, design, acceptance criteria, notes, dependencies), through the path every
  agent memory takes (:func:`memtrove.index.internal.write_internal`: redacted, indexed like
  a file, searched like any document); content type ``problem`` for a bug, ``project``
  otherwise;
- rewrites the edges its dependencies give between the issues' documents, as the spec maps
  them: ``blocks`` -> ``causal``, ``discovered-from`` -> ``supporting``, ``relates-to`` (and
  bd's ``related``) -> ``semantic``; other types (``parent-child``...) give none. An edge
  runs from the issue depended on to the issue that depends on it (the blocker is the
  cause), and carries ``{"source": "beads"}`` as metadata: a sync first removes the edges
  it wrote before between the project's issues, so a dependency removed in Beads goes.

Issues bd no longer lists (closed and filtered out, deleted) keep their rows and documents:
a sync adds and updates, it never deletes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from memtrove.capture.beads_reader import BeadsIssue, BeadsListing
from memtrove.db.connection import Connection, write_transaction
from memtrove.text import to_iso

__all__ = [
    "BEADS_FOLDER",
    "EDGE_METADATA",
    "RELATION_OF",
    "BeadsSyncReport",
    "issue_path",
    "render_issue",
    "sync_issues",
]

BEADS_FOLDER = "beads"
MEMORY_COLLECTION = "_memtrove"  # memtrove.index.internal's (importing it loads the indexer)
RELATION_OF = {
    "blocks": "causal",
    "discovered-from": "supporting",
    "relates-to": "semantic",
    "related": "semantic",
}
EDGE_METADATA = {"source": "beads"}
_EDGE_METADATA_TEXT = json.dumps(EDGE_METADATA)  # as memtrove.graph.relations stores it
_CHUNK = 500
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


class BeadsSyncReport(NamedTuple):
    """What one sync did for one project folder."""

    project: str
    issues: int
    created: int
    updated: int
    unchanged: int
    dependencies: int
    edges: int
    skipped_issues: int
    skipped_dependencies: int

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()

    def summary(self) -> str:
        """One line: ``12 issues (3 new, 1 updated, 8 unchanged), 5 dependencies, 4 edges``."""
        line = (
            f"{self.issues} issues ({self.created} new, {self.updated} updated, "
            f"{self.unchanged} unchanged), {self.dependencies} dependencies, {self.edges} edges"
        )
        if self.skipped_issues or self.skipped_dependencies:
            line += (
                f"; skipped {self.skipped_issues} malformed issues and "
                f"{self.skipped_dependencies} malformed dependencies"
            )
        return line


def _slug(text: str, most: int) -> str:
    return _SLUG.sub("-", text).strip("-.")[:most].strip("-.")


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def project_folder(project: Path) -> str:
    """The project's folder under ``beads/``: its name as a slug and a hash of its path
    (two checkouts named alike stay apart)."""
    return f"{_slug(project.name, 40) or 'project'}-{_short_hash(str(project))}"


def issue_path(project: Path, issue_id: str) -> str:
    """The issue's document path in the internal collection. An id that is not a plain
    file name (``../x``, ``a/b``, unicode) is named by its slug and a hash of the id."""
    slug = _slug(issue_id, 80)
    if slug != issue_id or not slug:
        slug = f"{slug or 'issue'}-{_short_hash(issue_id)}"
    return f"{BEADS_FOLDER}/{project_folder(project)}/{slug}.md"


def render_issue(issue: BeadsIssue, project: Path, redact: Callable[[str], str]) -> str:
    """The issue's document: frontmatter (values as JSON strings), then its text."""
    from memtrove.capture.store import frontmatter  # loads the capture's modules: only here

    title = f"{issue.id}: {issue.title}"
    fields: list[tuple[str, object]] = [
        ("title", title),
        ("type", _content_type(issue)),
        ("beads_id", issue.id),
        ("project", project.name),
        ("status", issue.status),
        ("issue_type", issue.issue_type),
    ]
    if issue.priority is not None:
        fields.append(("priority", issue.priority))
    if issue.assignee:
        fields.append(("assignee", issue.assignee))
    if issue.labels:
        fields.append(("labels", list(issue.labels)))
    for name in ("created_at", "updated_at", "closed_at"):
        if value := getattr(issue, name):
            fields.append((name, value))
    facts = [f"Status: {issue.status or 'unknown'}"]
    if issue.priority is not None:
        facts.append(f"Priority: P{issue.priority}")
    if issue.issue_type:
        facts.append(f"Type: {issue.issue_type}")
    if issue.assignee:
        facts.append(f"Assignee: {issue.assignee}")
    lines = [frontmatter(fields), "", f"# {title}", "", " · ".join(facts)]
    if issue.labels:
        lines += ["", "Labels: " + ", ".join(issue.labels)]
    for heading, text in (
        ("Description", issue.description),
        ("Design", issue.design),
        ("Acceptance criteria", issue.acceptance_criteria),
        ("Notes", issue.notes),
        ("Close reason", issue.close_reason),
    ):
        if text:
            lines += ["", f"## {heading}", "", text]
    if issue.dependencies:
        lines += ["", "## Dependencies", ""]
        lines += [f"- {d.type}: {d.depends_on_id}" for d in issue.dependencies]
    return redact("\n".join(lines) + "\n")


def _content_type(issue: BeadsIssue) -> str:
    return "problem" if issue.issue_type == "bug" else "project"


def sync_issues(
    connection: Connection,
    project: Path,
    listing: BeadsListing,
    now: datetime,
    redact: Callable[[str], str] = lambda text: text,
) -> tuple[BeadsSyncReport, list[int]]:
    """Write ``listing`` (the issues of the folder ``project``) into the vault in one write
    transaction; the report, and the ids of the documents written anew or changed."""
    from memtrove.index.internal import write_internal

    stamp = to_iso(now)
    key = str(project)
    created = updated = unchanged = dependencies = 0
    changed: list[int] = []
    with write_transaction(connection):
        for issue in listing.issues:
            path = issue_path(project, issue.id)
            before = _document_state(connection, path)
            doc_id = write_internal(
                connection,
                MEMORY_COLLECTION,
                path,
                render_issue(issue, project, redact),
                _content_type(issue),
                stamp,
            )
            after = _document_state(connection, path)
            if before is None:
                created += 1
                changed.append(doc_id)
            elif before != after:
                updated += 1
                changed.append(doc_id)
            else:
                unchanged += 1
            _upsert_issue(connection, key, issue, doc_id, stamp, redact)
            connection.execute(
                "DELETE FROM beads_dependencies WHERE project = ? AND issue_id = ?",
                (key, issue.id),
            )
            connection.executemany(
                "INSERT INTO beads_dependencies (project, issue_id, depends_on_id, "
                "dependency_type, created_at, synced_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (key, d.issue_id, d.depends_on_id, d.type, d.created_at, stamp)
                    for d in issue.dependencies
                ],
            )
            dependencies += len(issue.dependencies)
        edges = _rewrite_edges(connection, key)
    report = BeadsSyncReport(
        project=key,
        issues=len(listing.issues),
        created=created,
        updated=updated,
        unchanged=unchanged,
        dependencies=dependencies,
        edges=edges,
        skipped_issues=listing.skipped_issues,
        skipped_dependencies=listing.skipped_dependencies,
    )
    return report, changed


def _document_state(connection: Connection, path: str) -> tuple[str, int] | None:
    row = connection.execute(
        "SELECT hash, active FROM documents WHERE collection = ? AND path = ?",
        (MEMORY_COLLECTION, path),
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def _upsert_issue(
    connection: Connection,
    project: str,
    issue: BeadsIssue,
    doc_id: int,
    stamp: str,
    redact: Callable[[str], str],
) -> None:
    labels = json.dumps([redact(label) for label in issue.labels]) if issue.labels else None
    connection.execute(
        """
        INSERT INTO beads_issues (project, issue_id, title, status, priority, issue_type,
            assignee, labels, created_at, updated_at, closed_at, doc_id, synced_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (project, issue_id) DO UPDATE SET
            title = excluded.title, status = excluded.status, priority = excluded.priority,
            issue_type = excluded.issue_type, assignee = excluded.assignee,
            labels = excluded.labels, created_at = excluded.created_at,
            updated_at = excluded.updated_at, closed_at = excluded.closed_at,
            doc_id = excluded.doc_id, synced_at = excluded.synced_at
        """,
        (
            project,
            issue.id,
            redact(issue.title),
            issue.status,
            issue.priority,
            issue.issue_type,
            redact(issue.assignee) if issue.assignee else None,
            labels,
            issue.created_at,
            issue.updated_at,
            issue.closed_at,
            doc_id,
            stamp,
        ),
    )


def _rewrite_edges(connection: Connection, project: str) -> int:
    """Replace the edges earlier syncs wrote between the project's issue documents by those
    its dependencies give now; how many that is."""
    from memtrove.graph.relations import insert_edges, insert_semantic_edges

    documents = {
        str(issue_id): int(doc_id)
        for issue_id, doc_id in connection.execute(
            "SELECT issue_id, doc_id FROM beads_issues WHERE project = ? AND doc_id IS NOT NULL",
            (project,),
        )
    }
    ids = sorted(set(documents.values()))
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        connection.execute(
            "DELETE FROM memory_relations WHERE metadata = ? "
            f"AND source_id IN ({','.join('?' * len(chunk))})",
            (_EDGE_METADATA_TEXT, *chunk),
        )
    by_type: dict[str, list[tuple[int, int, float]]] = {}
    rows = connection.execute(
        "SELECT issue_id, depends_on_id, dependency_type FROM beads_dependencies "
        "WHERE project = ? ORDER BY issue_id, depends_on_id, dependency_type",
        (project,),
    ).fetchall()
    for issue_id, depends_on_id, kind in rows:
        relation = RELATION_OF.get(str(kind))
        source, target = documents.get(str(depends_on_id)), documents.get(str(issue_id))
        if relation is None or source is None or target is None or source == target:
            continue
        by_type.setdefault(relation, []).append((source, target, 1.0))
    written = 0
    for relation, edges in sorted(by_type.items()):
        unique: Sequence[tuple[int, int, float]] = list(dict.fromkeys(edges))
        if relation == "semantic":  # first writer wins: one already there is kept
            written += insert_semantic_edges(connection, unique, metadata=EDGE_METADATA)
        else:
            insert_edges(connection, relation, unique, metadata=EDGE_METADATA)
            written += len(unique)
    return written
