"""Session focus: a topic one session steers context-surfacing towards.

``memtrove focus set "<topic>"`` writes the topic to ``<root>/<session id>.focus``, the root
being ``MEMTROVE_FOCUS_ROOT`` when set, else ``sessions/`` in the cache folder
(``$XDG_CACHE_HOME/memtrove/sessions``). Nothing goes into the vault: a focus cannot leak
into another session. ``MEMTROVE_SESSION_FOCUS`` is a topic for every session that has no
focus file (one process-wide value: for trying a topic out, not for several sessions).

Context-surfacing applies :func:`apply_topic_boost` after composite scoring and before the
adaptive threshold: a document whose title, ``collection/path`` and first 800 characters
of body contain every token of the topic (lowercase, tokens of 2+ characters) is multiplied
by :data:`BOOST` (1.4), every other by :data:`DEMOTE` (0.75; never below the 0.5 floor);
when no document matches, nothing changes (a topic never empties an answer).

Session ids are input from outside (a hook payload, an environment variable, an option):
only ids of letters, digits, ``.``, ``_`` and ``-`` (up to 128, not starting with a dot)
name a file; any other is refused by the commands and means "no focus" for the hook, so
no id can reach outside the focus folder. Reading never fails: a missing, unreadable,
empty, oversized or non-UTF-8 file is no focus.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

__all__ = [
    "BOOST",
    "DEMOTE",
    "DEMOTE_FLOOR",
    "MAX_TOPIC_CHARS",
    "FocusError",
    "apply_topic_boost",
    "clear_focus",
    "focus_file",
    "focus_root",
    "matches_topic",
    "read_focus",
    "session_topic",
    "valid_session_id",
    "write_focus",
]

BOOST, DEMOTE, DEMOTE_FLOOR = 1.4, 0.75, 0.5
MAX_TOPIC_CHARS = 256
BODY_CHARS = 800
FOCUS_FOLDER = "sessions"
SUFFIX = ".focus"
_SESSION_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")

D = TypeVar("D")


class FocusError(ValueError):
    """A session id that cannot name a focus file, or a topic that cannot be one."""


def valid_session_id(session_id: str) -> bool:
    """Whether ``session_id`` may name a focus file (see the module docstring)."""
    return bool(_SESSION_ID.fullmatch(session_id)) and ".." not in session_id


def focus_root(env: Mapping[str, str], cache_dir: str | Path) -> Path:
    """``MEMTROVE_FOCUS_ROOT`` when set, else ``<cache_dir>/sessions``."""
    override = env.get("MEMTROVE_FOCUS_ROOT", "").strip()
    if override:
        return Path(os.path.abspath(os.path.expanduser(override)))
    return Path(cache_dir) / FOCUS_FOLDER


def focus_file(root: Path, session_id: str) -> Path:
    """``<root>/<session_id>.focus``; FocusError for an id that cannot name a file."""
    if not valid_session_id(session_id):
        shown = session_id[:60].encode("unicode_escape").decode("ascii")
        raise FocusError(
            f"invalid session id {shown!r}: use letters, digits, '.', '_' and '-' "
            "(at most 128, not starting with a dot)"
        )
    return root / f"{session_id}{SUFFIX}"


def _topic(text: str) -> str:
    return " ".join(text.split())


def write_focus(root: Path, session_id: str, topic: str) -> str:
    """Set the session's focus topic (whitespace collapsed); the topic written.
    FocusError for a bad id or an empty or over-long topic; OSError when the file cannot
    be written."""
    path = focus_file(root, session_id)
    cleaned = _topic(topic)
    if not cleaned:
        raise FocusError("the focus topic is empty")
    if len(cleaned) > MAX_TOPIC_CHARS:
        raise FocusError(f"the focus topic is longer than {MAX_TOPIC_CHARS} characters")
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(cleaned, encoding="utf-8")
    os.replace(partial, path)
    return cleaned


def read_focus(root: Path, session_id: str) -> str | None:
    """The session's focus topic, or None (no valid id, no file, or a file that is not a
    topic: see the module docstring). Never raises."""
    if not session_id or not valid_session_id(session_id):
        return None
    path = root / f"{session_id}{SUFFIX}"
    try:
        if not path.is_file():
            return None
        with path.open("rb") as handle:
            raw = handle.read(MAX_TOPIC_CHARS * 4 + 1)
        topic = _topic(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return topic if topic and len(topic) <= MAX_TOPIC_CHARS else None


def clear_focus(root: Path, session_id: str) -> bool:
    """Remove the session's focus; whether there was one. FocusError for a bad id."""
    path = focus_file(root, session_id)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def session_topic(root: Path, session_id: str, fallback: str = "") -> str | None:
    """The topic steering ``session_id``: its focus file, else ``fallback``
    (``MEMTROVE_SESSION_FOCUS``), else None."""
    found = read_focus(root, session_id)
    if found:
        return found
    cleaned = _topic(fallback)
    return cleaned[:MAX_TOPIC_CHARS] if cleaned else None


def _tokens(topic: str) -> list[str]:
    return [token for token in topic.lower().split() if len(token) >= 2]


def matches_topic(title: str, key: str, body: str, topic: str) -> bool:
    """Whether every topic token (2+ characters, lowercase) occurs in the title, the
    ``collection/path`` or the first 800 characters of the body."""
    tokens = _tokens(topic)
    if not tokens:
        return False
    haystack = f"{title} {key} {body[:BODY_CHARS]}".lower()
    return all(token in haystack for token in tokens)


def apply_topic_boost(
    ranked: list[tuple[D, float]],
    topic: str | None,
    describe: Callable[[D], tuple[str, str, str]],
    *,
    order: Callable[[D], int] | None = None,
    boost: float = BOOST,
    demote: float = DEMOTE,
) -> list[tuple[D, float]]:
    """``ranked`` with the focus topic applied (module docstring), re-sorted best first
    within each ``order`` group; unchanged without a topic or without a match.
    ``describe`` gives a document's title, ``collection/path`` and body.

    Scores stay in [0, 1] as the threshold and tiers expect: when a boosted score passes
    1.0, every score is divided by the best (ratios, hence the order, are kept)."""
    if not topic or not ranked:
        return ranked
    matched = [matches_topic(*describe(document), topic) for document, _ in ranked]
    if not any(matched):
        return ranked
    factor = max(demote, DEMOTE_FLOOR)
    steered = [
        (document, score * (boost if hit else factor))
        for (document, score), hit in zip(ranked, matched, strict=True)
    ]
    best = max(score for _, score in steered)
    if best > 1.0:
        steered = [(document, score / best) for document, score in steered]
    group = order or (lambda _: 0)
    return sorted(steered, key=lambda item: (group(item[0]), -item[1]))
