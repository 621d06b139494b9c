"""The user profile: ``_memtrove/profile.md``, what the vault knows of its user in one page.

Two parts, as the reference product builds them:

- **Known context** (static): bullet items (with their wrapped lines; 10 characters or
  more, cut to 200 at a word) of the newest decision
  documents (20, by effective time) and hub documents (10), at most :data:`STATIC_MAX_ITEMS`
  lines and :data:`STATIC_MAX_TOKENS` tokens (``characters / 4``). A line already taken,
  or within Levenshtein distance 5 of one taken (both read lowercase, first 60 characters),
  is skipped; so is a bullet that is only a link (a hub's table of contents).
- **Current focus** (dynamic): from the handoffs of the last 5 sessions, what was done
  (``Current: ...``) and the next steps (``Next: ...``), 150 characters each; then progress
  documents of the last 7 days (``Progress: title (date)``); at most
  :data:`DYNAMIC_MAX_ITEMS` items and :data:`DYNAMIC_MAX_TOKENS` tokens.

Sources under ``_PRIVATE/``, invalidated or superseded documents, and lines that read as a
prompt injection are left out; the document is written through
:func:`memtrove.index.internal.write_internal`, which redacts secrets. It is a document of
the internal collection like any other, so searches find it; its content type is
``preference`` (never decays, and it is one of the canonical memories a question about the
user lifts: see :data:`memtrove.retrieval.scoring.CANONICAL_TYPES`).

The profile is **stale** when :data:`STALE_SESSIONS` sessions have started since it was
written (``session_log``), or when it does not exist yet and an agent session was recorded
(the reference counts any missing profile as stale; here a vault only indexed, never used
by a session, gets none until ``memtrove profile rebuild``). A profile with nothing to say
is not written at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from memtrove.db.connection import Connection, write_transaction
from memtrove.text import to_iso

__all__ = [
    "DYNAMIC_MAX_ITEMS",
    "DYNAMIC_MAX_TOKENS",
    "PROFILE_CONTENT_TYPE",
    "PROFILE_PATH",
    "STALE_SESSIONS",
    "STATIC_MAX_ITEMS",
    "STATIC_MAX_TOKENS",
    "UserProfile",
    "build_profile",
    "parse_profile",
    "profile_is_stale",
    "read_profile",
    "render_profile",
    "write_profile",
]

PROFILE_COLLECTION = "_memtrove"  # memtrove.index.internal's MEMORY_COLLECTION
PROFILE_PATH = "profile.md"
PROFILE_TITLE = "User Profile"
PROFILE_CONTENT_TYPE = "preference"
STATIC_MAX_TOKENS, STATIC_MAX_ITEMS = 500, 30
DYNAMIC_MAX_TOKENS, DYNAMIC_MAX_ITEMS = 300, 10
STALE_SESSIONS = 5
DECISION_SOURCES, HUB_SOURCES, RECENT_SESSIONS, PROGRESS_SOURCES = 20, 10, 5, 5
PROGRESS_DAYS = 7
ITEM_CHARS = 150
SIMILAR_DISTANCE = 5
STATIC_HEADING, DYNAMIC_HEADING = "Known Context", "Current Focus"

_BULLET_START = re.compile(r"^[-*]\s+(\S.*)$")
_NESTED = re.compile(r"^\s+(?:[-*+]|\d+[.)])\s")
MAX_FACT_CHARS = 200
_LINK_ONLY = re.compile(r"^(?:\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\))[\s.,;:]*$")
_HEADING = re.compile(r"^#{1,3}\s+(.+?)\s*$")


class UserProfile(NamedTuple):
    """The profile document: where it is, its text, its two parts and when it was written."""

    path: str  # collection/path
    body: str
    known: tuple[str, ...]
    current: tuple[str, ...]
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "body": self.body,
            "static": list(self.known),
            "dynamic": list(self.current),
            "updated_at": self.updated_at,
        }

    def text(self) -> str:
        from memtrove.retrieval.presentation import strip_frontmatter

        body = strip_frontmatter(self.body).strip()
        return f"{self.path} (updated {self.updated_at[:19]})\n\n{body}"


def _tokens(text: str) -> int:
    return -(-len(text) // 4)


def _within(items: Iterable[str], max_items: int, max_tokens: int) -> list[str]:
    """The first items that fit ``max_items`` and ``max_tokens`` (the first that does not
    fit ends the list, as in the reference)."""
    kept: list[str] = []
    used = 0
    for item in items:
        if len(kept) >= max_items or used + _tokens(item) > max_tokens:
            break
        kept.append(item)
        used += _tokens(item)
    return kept


def _clean(line: str) -> str | None:
    """``line`` as a profile may hold it, or None: no injection, one line, no markup."""
    from memtrove.security.guard import find_injection

    text = " ".join(line.split())
    if not text or find_injection(text, limit=None) is not None:
        return None
    return text


def _bullets(body: str) -> Iterable[str]:
    """The body's top-level bullet items, each with its wrapped continuation lines, cut to
    200 characters at a word."""
    from memtrove.retrieval.presentation import strip_frontmatter

    items: list[str] = []
    current: list[str] | None = None
    for line in strip_frontmatter(body).splitlines():
        found = _BULLET_START.match(line)
        if found:
            current = [found.group(1)]
            items.append("")
        elif current is not None and line.startswith((" ", "\t")) and line.strip():
            if _NESTED.match(line):  # a nested list ends the item
                current = None
                continue
            current.append(line.strip())
        else:
            current = None
        if current is not None:
            items[-1] = " ".join(current)
    for item in items:
        text = _clean(item)
        if text and len(text) >= 10 and not _LINK_ONLY.match(text):
            yield _shortened(text, MAX_FACT_CHARS)


def _similar(key: str, taken: Sequence[str]) -> bool:
    from rapidfuzz.distance import Levenshtein

    return any(
        Levenshtein.distance(key, other, score_cutoff=SIMILAR_DISTANCE - 1) < SIMILAR_DISTANCE
        for other in taken
    )


def _source_bodies(connection: Connection, content_type: str, limit: int) -> list[str]:
    rows = connection.execute(
        "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash "
        "WHERE d.active = 1 AND d.invalidated_at IS NULL AND d.superseded_by IS NULL "
        "AND d.content_type = ? AND d.path NOT LIKE ? AND d.path NOT LIKE ? "
        "AND NOT (d.collection = ? AND d.path = ?) "
        "ORDER BY COALESCE(d.authored_at, d.modified_at) DESC, d.id DESC LIMIT ?",
        (content_type, "_PRIVATE/%", "%/_PRIVATE/%", PROFILE_COLLECTION, PROFILE_PATH, limit),
    ).fetchall()
    return [str(row[0]) for row in rows]


def static_facts(connection: Connection) -> list[str]:
    """Known context: decision bullets, then hub bullets (module docstring)."""
    facts: list[str] = []
    keys: list[str] = []
    bodies = [
        *_source_bodies(connection, "decision", DECISION_SOURCES),
        *_source_bodies(connection, "hub", HUB_SOURCES),
    ]
    for body in bodies:
        for bullet in _bullets(body):
            key = bullet.lower().strip()[:60]
            if key in keys or _similar(key, keys):
                continue
            keys.append(key)
            facts.append(bullet)
    return _within(facts, STATIC_MAX_ITEMS, STATIC_MAX_TOKENS)


def _section(body: str, names: Sequence[str]) -> str | None:
    """The text under the first heading named one of ``names`` (to the next heading),
    lines joined, when it is longer than 10 characters."""
    lines: list[str] = []
    inside = False
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            if inside:
                break
            inside = heading.group(1).strip().lower() in names
            continue
        if inside and line.strip():
            lines.append(line.strip().removeprefix("- ").removeprefix("* "))
    text = _clean("; ".join(lines)) if lines else None
    return text if text and len(text) > 10 else None


def _shortened(text: str, limit: int = ITEM_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return (cut or text[: limit - 1]) + "…"


def dynamic_items(connection: Connection, now: datetime) -> list[str]:
    """Current focus: the recent handoffs' state and next steps, then recent progress."""
    items: list[str] = []
    rows = connection.execute(
        "SELECT handoff_path FROM session_log WHERE handoff_path IS NOT NULL "
        "ORDER BY started_at DESC, session_id DESC LIMIT ?",
        (RECENT_SESSIONS,),
    ).fetchall()
    for (reference,) in rows:
        collection, _, path = str(reference).partition("/")
        found = connection.execute(
            "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash "
            "WHERE d.collection = ? AND d.path = ? AND d.active = 1",
            (collection, path),
        ).fetchone()
        if found is None:
            continue
        body = str(found[0])
        done = _section(body, ("current state", "done"))
        upcoming = _section(body, ("next session should", "next steps"))
        if done:
            items.append(f"Current: {_shortened(done)}")
        if upcoming:
            items.append(f"Next: {_shortened(upcoming)}")
    since = to_iso(now - timedelta(days=PROGRESS_DAYS))
    progress = connection.execute(
        "SELECT title, COALESCE(authored_at, modified_at) FROM documents "
        "WHERE active = 1 AND invalidated_at IS NULL AND content_type = ? "
        "AND COALESCE(authored_at, modified_at) >= ? AND path NOT LIKE ? AND path NOT LIKE ? "
        "ORDER BY COALESCE(authored_at, modified_at) DESC, id DESC LIMIT ?",
        ("progress", since, "_PRIVATE/%", "%/_PRIVATE/%", PROGRESS_SOURCES),
    ).fetchall()
    for title, effective in progress:
        text = _clean(str(title))
        if text:
            items.append(f"Progress: {text} ({str(effective)[:10]})")
    return _within(items, DYNAMIC_MAX_ITEMS, DYNAMIC_MAX_TOKENS)


def render_profile(known: Sequence[str], current: Sequence[str]) -> str:
    """The profile document's text."""
    lines = ["---", "tags: [auto-generated, profile]", "---", "", f"# {PROFILE_TITLE}", ""]
    for heading, items in ((STATIC_HEADING, known), (DYNAMIC_HEADING, current)):
        if items:
            lines += [f"## {heading}", "", *(f"- {item}" for item in items), ""]
    return "\n".join(lines)


def parse_profile(body: str) -> tuple[list[str], list[str]]:
    """The known-context and current-focus lines of a profile document's text."""
    parts: dict[str, list[str]] = {STATIC_HEADING: [], DYNAMIC_HEADING: []}
    section: list[str] | None = None
    for line in body.splitlines():
        if line.startswith("## "):
            section = parts.get(line[3:].strip())
            continue
        bullet = re.match(r"^-\s+(.+)", line)
        if bullet and section is not None:
            section.append(bullet.group(1).strip())
    return parts[STATIC_HEADING], parts[DYNAMIC_HEADING]


def build_profile(connection: Connection, now: datetime) -> tuple[list[str], list[str]]:
    """The profile's two parts as the vault stands (nothing is written)."""
    return static_facts(connection), dynamic_items(connection, now)


def read_profile(connection: Connection) -> UserProfile | None:
    """The profile document, or None when it was never written (or was forgotten)."""
    row = connection.execute(
        "SELECT c.doc, d.modified_at FROM documents d JOIN content c ON c.hash = d.hash "
        "WHERE d.collection = ? AND d.path = ? AND d.active = 1",
        (PROFILE_COLLECTION, PROFILE_PATH),
    ).fetchone()
    if row is None:
        return None
    body = str(row[0])
    known, current = parse_profile(body)
    return UserProfile(
        f"{PROFILE_COLLECTION}/{PROFILE_PATH}", body, tuple(known), tuple(current), str(row[1])
    )


def write_profile(
    connection: Connection,
    now: datetime,
    *,
    redact: Callable[[str], str] = lambda text: text,
    retry_seconds: float | None = None,
) -> tuple[UserProfile | None, int | None]:
    """Rebuild the profile and write it (``redact``: the vault's redaction of stored
    text; its modification time set to ``now`` even when its text is unchanged, so it is
    no longer stale); the profile and its doc id. A vault with nothing to say and no
    profile yet gets none: ``(None, None)``."""
    from memtrove.index.internal import write_internal

    known, current = build_profile(connection, now)
    stamp = to_iso(now)
    with write_transaction(connection, retry_seconds=retry_seconds):
        if not known and not current and read_profile(connection) is None:
            return None, None
        text = redact(render_profile(known, current))
        doc_id = write_internal(
            connection, PROFILE_COLLECTION, PROFILE_PATH, text, PROFILE_CONTENT_TYPE, stamp
        )
        connection.execute("UPDATE documents SET modified_at = ? WHERE id = ?", (stamp, doc_id))
    return read_profile(connection), doc_id


def profile_is_stale(connection: Connection) -> bool:
    """No profile yet while sessions were recorded, or :data:`STALE_SESSIONS` sessions
    started since it was written."""
    profile = read_profile(connection)
    if profile is None:
        return connection.execute("SELECT 1 FROM session_log LIMIT 1").fetchone() is not None
    row = connection.execute(
        "SELECT COUNT(*) FROM session_log WHERE started_at > ?", (profile.updated_at,)
    ).fetchone()
    return int(row[0]) >= STALE_SESSIONS
