"""Writing a capture: observation, decision and antipattern documents in ``_memtrove``.

Paths and merge policies (per observation type, as the inventory names them):

- every observation: ``agent/observations/<YYYY-MM-DD>-<sid8>-<type>-<hash8>.md``,
  ``dedup_check``: ``hash8`` is the SHA-256 of the type and the normalised title, and an
  active observation of the same type and hash from the last 7 days (any session) means
  the new one is skipped;
- decisions: ``dedup_check`` as observations, and also ``agent/decisions/<YYYY-MM-DD>-<sid8>.md``,
  ``merge_recent`` (7 d): one document per session (dated by its first decision; a new one
  after 7 days), to which later decisions of the session are added as ``## <title>``
  sections (a decision already there by title is not repeated); the observation of a
  decision or rule is then written as a ``record`` (content type), which searches leave
  out unless asked: its text is found once, in the session's document;
- antipatterns (an observation saying what to avoid, see
  :func:`~memtrove.capture.observations.is_avoidance`): ``agent/antipatterns/<YYYY-MM-DD>-<sid8>.md``,
  ``merge_recent`` as decisions;
- preferences: ``update_existing``: an active preference observation with the same title
  (any date or session) is rewritten in place rather than a second one written;
- milestones: ``always_new`` (the hash still makes a rerun of the same turn idempotent).

Everything of one capture is written by :func:`write_capture` inside the caller's write
transaction, so a capture is all there or not there.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from memtrove.capture.observations import Observation, is_avoidance
from memtrove.db.connection import Connection
from memtrove.errors import DocumentNotFoundError
from memtrove.index.documents import SUMMARY_COLUMNS, get_document, summary_of
from memtrove.results import DocumentSummary
from memtrove.retrieval.filters import RECORD_TYPE
from memtrove.text import to_iso

__all__ = [
    "ANTIPATTERNS_FOLDER",
    "DECISIONS_FOLDER",
    "MERGE_POLICY",
    "OBSERVATIONS_FOLDER",
    "OBSERVATION_CONTENT_TYPE",
    "Written",
    "frontmatter",
    "observation_hash",
    "observation_path",
    "recent_documents",
    "session_observations",
    "session_path",
    "short_session",
    "write_capture",
]

OBSERVATIONS_FOLDER = "agent/observations"
DECISIONS_FOLDER = "agent/decisions"
ANTIPATTERNS_FOLDER = "agent/antipatterns"
OBSERVATION_CONTENT_TYPE = "observation"
MERGE_WINDOW_DAYS = 7
MAX_SECTIONS = 50  # decisions (or antipatterns) kept in one session document
MERGE_POLICY = {
    "decision": "dedup_check",
    "preference": "update_existing",
    "milestone": "always_new",
    "problem": "dedup_check",
    "discovery": "dedup_check",
    "feature": "dedup_check",
    "bugfix": "dedup_check",
    "change": "dedup_check",
    "refactor": "dedup_check",
    "decisions": "merge_recent",
    "antipatterns": "merge_recent",
}
MEMORY_COLLECTION = "_memtrove"  # memtrove.index.internal's (importing it loads the indexer)
_SECTION = re.compile(r"^## (.+)\n\n([\s\S]*?)(?=^## |\Z)", re.M)


class Written(NamedTuple):
    """What one capture wrote: doc ids of the observations (in order, with their
    observation), of the session's decision and antipattern documents (None: none)."""

    observations: list[tuple[int, Observation]]
    decisions_id: int | None
    antipatterns_id: int | None
    skipped: int


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def short_session(session_id: str) -> str:
    """``<sid8>``: the first 8 characters of a UUID session id (Claude Code's), else the
    first 8 hex digits of the id's SHA-256, so ids sharing a prefix (``run-1``, ``run-2``)
    never share documents; ``unknown`` without an id."""
    if not session_id:
        return "unknown"
    if _UUID.fullmatch(session_id):
        return session_id[:8].lower()
    digest = hashlib.sha256(session_id.encode("utf-8", errors="surrogatepass")).hexdigest()
    return digest[:8]


def observation_hash(observation: Observation) -> str:
    key = f"{observation.type}\x00{' '.join(observation.title.lower().split())}"
    return hashlib.sha256(key.encode("utf-8", errors="surrogatepass")).hexdigest()[:8]


def observation_path(day: str, session_id: str, observation: Observation) -> str:
    sid = short_session(session_id)
    return (
        f"{OBSERVATIONS_FOLDER}/{day}-{sid}-{observation.type}-{observation_hash(observation)}.md"
    )


def session_path(folder: str, day: str, session_id: str) -> str:
    return f"{folder}/{day}-{short_session(session_id)}.md"


def frontmatter(fields: Sequence[tuple[str, object]]) -> str:
    """YAML frontmatter; strings as JSON strings (valid YAML), lists one item a line."""
    lines = ["---"]
    for key, value in fields:
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}:" if value else f"{key}: []")
            lines.extend(f"  - {json.dumps(str(item), ensure_ascii=False)}" for item in value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            lines.append(f"{key}: {round(float(value), 3)}")
        else:
            lines.append(f"{key}: {json.dumps(str(value), ensure_ascii=False)}")
    lines.append("---")
    return "\n".join(lines)


def render_observation(
    observation: Observation, session_id: str, authored_at: str, redact: Callable[[str], str]
) -> str:
    title = redact(observation.title)
    facts = [redact(fact) for fact in observation.facts]
    head = frontmatter(
        (
            ("title", title),
            ("type", OBSERVATION_CONTENT_TYPE),
            ("observation_type", observation.type),
            ("session_id", session_id),
            ("authored_at", authored_at),
            ("facts", facts),
            ("source", observation.source),
            ("confidence", observation.confidence),
        )
    )
    parts = [head, "", f"# {title}", "", redact(observation.narrative)]
    if facts:
        parts += ["", "## Facts", "", *(f"- {fact}" for fact in facts)]
    if observation.triples:
        lines = [redact(f"- {t.subject} | {t.predicate} | {t.object}") for t in observation.triples]
        parts += ["", "## Triples", "", *lines]
    return "\n".join(parts) + "\n"


def _existing_sections(connection: Connection, path: str) -> list[tuple[str, str]]:
    try:
        document = get_document(connection, f"{MEMORY_COLLECTION}/{path}")
    except DocumentNotFoundError:
        return []
    return [(title.strip(), body.strip()) for title, body in _SECTION.findall(document.body)]


def _section_text(observation: Observation, redact: Callable[[str], str]) -> str:
    lines = [redact(observation.narrative)]
    lines += [f"- {redact(fact)}" for fact in observation.facts if fact != observation.narrative]
    return "\n".join(lines)


def _write_session_document(
    connection: Connection,
    path: str,
    content_type: str,
    heading: str,
    items: Sequence[Observation],
    session_id: str,
    authored_at: str,
    now: str,
    redact: Callable[[str], str],
) -> int | None:
    """Merge ``items`` into the session's document at ``path`` (merge_recent)."""
    from memtrove.index.internal import write_internal

    sections = _existing_sections(connection, path)
    known = {title.lower() for title, _ in sections}
    added = False
    for item in items:
        title = redact(item.title)
        if title.lower() not in known and len(sections) < MAX_SECTIONS:
            sections.append((title, _section_text(item, redact)))
            known.add(title.lower())
            added = True
    if not added:
        return None
    titles = [title for title, _ in sections]
    title = titles[0] if len(titles) == 1 else f"{titles[0]} (+{len(titles) - 1} more)"
    sources = sorted({item.source for item in items})
    head = frontmatter(
        (
            ("title", title),
            ("type", content_type),
            ("session_id", session_id),
            ("authored_at", authored_at),
            ("source", sources[0] if len(sources) == 1 else "observer"),
            ("confidence", max(item.confidence for item in items)),
            (f"{content_type}s", titles),
        )
    )
    body = [head, "", f"# {heading}", ""]
    for section_title, text in sections:
        body += [f"## {section_title}", "", text, ""]
    return write_internal(connection, MEMORY_COLLECTION, path, "\n".join(body), content_type, now)


def _recent_session_path(
    connection: Connection, folder: str, day: str, session_id: str, since: str
) -> str:
    """merge_recent: the session's document in ``folder`` from the last 7 days, else a new
    one dated ``day``."""
    row = connection.execute(
        "SELECT path FROM documents WHERE collection = ? AND path LIKE ? AND active = 1 "
        "AND modified_at >= ? ORDER BY modified_at DESC LIMIT 1",
        (MEMORY_COLLECTION, f"{folder}/%-{short_session(session_id)}.md", since),
    ).fetchone()
    return str(row[0]) if row else session_path(folder, day, session_id)


def _duplicate(connection: Connection, observation: Observation, since: str) -> int | None:
    """dedup_check: an active observation of the same type and hash since ``since`` (its id)."""
    pattern = f"{OBSERVATIONS_FOLDER}/%-{observation.type}-{observation_hash(observation)}.md"
    row = connection.execute(
        "SELECT id FROM documents WHERE collection = ? AND path LIKE ? AND active = 1 "
        "AND modified_at >= ? ORDER BY modified_at DESC LIMIT 1",
        (MEMORY_COLLECTION, pattern, since),
    ).fetchone()
    return None if row is None else int(row[0])


def _existing_preference(connection: Connection, title: str) -> str | None:
    """update_existing: the path of an active preference observation titled ``title``."""
    row = connection.execute(
        "SELECT path FROM documents WHERE collection = ? AND path LIKE ? AND active = 1 "
        "AND lower(title) = lower(?) ORDER BY modified_at DESC LIMIT 1",
        (MEMORY_COLLECTION, f"{OBSERVATIONS_FOLDER}/%-preference-%", title),
    ).fetchone()
    return str(row[0]) if row else None


def write_capture(
    connection: Connection,
    session_id: str,
    observations: Sequence[Observation],
    now: datetime,
    *,
    authored_at: str | None = None,
    redact: Callable[[str], str] = lambda text: text,
) -> Written:
    """Write ``observations`` by the merge policies above; call inside a write transaction."""
    from memtrove.index.internal import count_duplicate, save_memory

    stamp = to_iso(now)
    day = stamp[:10]
    authored = authored_at or stamp
    since = to_iso(now - timedelta(days=MERGE_WINDOW_DAYS))
    written: list[tuple[int, Observation]] = []
    skipped = 0
    for observation in observations:
        path = observation_path(day, session_id, observation)
        policy = MERGE_POLICY.get(observation.type, "dedup_check")
        if policy == "update_existing":
            path = _existing_preference(connection, redact(observation.title)) or path
        elif policy == "dedup_check" and (twin := _duplicate(connection, observation, since)):
            exists = connection.execute(
                "SELECT 1 FROM documents WHERE collection = ? AND path = ?",
                (MEMORY_COLLECTION, path),
            ).fetchone()
            if exists is None:  # the same observation from another session or day: counted
                count_duplicate(connection, twin, stamp)
                skipped += 1
                continue
        text = render_observation(observation, session_id, authored, redact)
        # a decision's or rule's text is searched in its session document: this is its record
        merged = observation.type == "decision" or is_avoidance(observation)
        content_type = RECORD_TYPE if merged else OBSERVATION_CONTENT_TYPE
        saved = save_memory(connection, MEMORY_COLLECTION, path, text, content_type, stamp)
        if saved.action == "deduplicated":  # saved in the last 30 minutes: counted on it
            skipped += 1
            continue
        written.append((saved.doc_id, observation))
    kept = [observation for _, observation in written]
    decisions = [o for o in kept if o.type == "decision"]
    avoid = [o for o in kept if is_avoidance(o)]
    sid = short_session(session_id)

    def session_document(
        folder: str, content_type: str, heading: str, items: list[Observation]
    ) -> int | None:
        """The session's ``content_type`` document (merged into a recent one); None when
        there are no ``items``."""
        if not items:
            return None
        path = _recent_session_path(connection, folder, day, session_id, since)
        title = f"{heading} of session {sid} ({day})"
        return _write_session_document(
            connection, path, content_type, title, items, session_id, authored, stamp, redact
        )

    decisions_id = session_document(DECISIONS_FOLDER, "decision", "Decisions", decisions)
    antipatterns_id = session_document(ANTIPATTERNS_FOLDER, "antipattern", "Antipatterns", avoid)
    return Written(written, decisions_id, antipatterns_id, skipped)


def session_observations(
    connection: Connection, session_id: str, now: datetime
) -> list[tuple[int, Observation]]:
    """The session's observations of the last 7 days (type from the path, title, body),
    oldest first: what a new capture links its causes to."""
    since = to_iso(now - timedelta(days=MERGE_WINDOW_DAYS))
    rows = connection.execute(
        "SELECT d.id, d.path, d.title, c.doc FROM documents d JOIN content c ON c.hash = d.hash "
        "WHERE d.collection = ? AND d.path LIKE ? AND d.active = 1 AND d.modified_at >= ? "
        "ORDER BY d.modified_at, d.id LIMIT 200",
        (MEMORY_COLLECTION, f"{OBSERVATIONS_FOLDER}/%-{short_session(session_id)}-%", since),
    ).fetchall()
    found: list[tuple[int, Observation]] = []
    for doc_id, path, title, text in rows:
        parts = str(path).rsplit("/", 1)[-1].removesuffix(".md").split("-")
        kind = parts[-2] if len(parts) >= 2 else ""
        body = str(text).split("\n---\n", 1)[-1]
        found.append((int(doc_id), Observation(kind, str(title), body[:2000])))
    return found


def recent_documents(
    connection: Connection, content_type: str, since: datetime, limit: int
) -> list[DocumentSummary]:
    """Active, valid documents of ``content_type`` modified since ``since``, newest first."""
    rows = connection.execute(
        f"SELECT {SUMMARY_COLUMNS} FROM documents WHERE active = 1 AND invalidated_at IS NULL "
        "AND content_type = ? AND modified_at >= ? ORDER BY modified_at DESC, id DESC LIMIT ?",
        (content_type, to_iso(since), max(0, limit)),
    ).fetchall()
    return [summary_of(row) for row in rows]
