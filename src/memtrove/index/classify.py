"""What kind of document a file is, how well it is written, and how far to trust it.

``content_type`` comes from frontmatter (``type`` or ``content_type``) when it names a known
type or an alias of one, else from the path's folder and file names, else from wording in
the title and opening; ``note`` when nothing matches. Types drive recency half-lives and
the confidence baseline used by composite scoring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CONFIDENCE_BASELINE",
    "CONTENT_TYPES",
    "classify_content_type",
    "confidence_baseline",
    "quality_score",
]

CONTENT_TYPES: tuple[str, ...] = (
    "decision",
    "deductive",
    "preference",
    "note",
    "handoff",
    "conversation",
    "progress",
    "research",
    "hub",
    "antipattern",
    "project",
    "milestone",
    "problem",
)

CONFIDENCE_BASELINE: Mapping[str, float] = {
    "decision": 0.85,
    "deductive": 0.85,
    "preference": 0.80,
    "hub": 0.80,
    "antipattern": 0.75,
    "problem": 0.75,
    "research": 0.70,
    "milestone": 0.70,
    "project": 0.65,
    "handoff": 0.60,
    "conversation": 0.55,
    "progress": 0.50,
    "note": 0.50,
}

_ALIASES: Mapping[str, str] = {
    "adr": "decision",
    "decisions": "decision",
    "decision-record": "decision",
    "preferences": "preference",
    "notes": "note",
    "handoffs": "handoff",
    "session": "handoff",
    "chat": "conversation",
    "transcript": "conversation",
    "status": "progress",
    "changelog": "progress",
    "moc": "hub",
    "index": "hub",
    "anti-pattern": "antipattern",
    "antipatterns": "antipattern",
    "pitfall": "antipattern",
    "lesson": "antipattern",
    "projects": "project",
    "milestones": "milestone",
    "release": "milestone",
    "incident": "problem",
    "postmortem": "problem",
    "bug": "problem",
    "problems": "problem",
}

# Path words (folder or file-name tokens) -> type, checked in this order.
_PATH_RULES: tuple[tuple[str, frozenset[str]], ...] = (
    ("antipattern", frozenset({"antipattern", "antipatterns", "anti", "pitfalls", "pitfall"})),
    ("decision", frozenset({"decision", "decisions", "adr", "adrs"})),
    ("deductive", frozenset({"deductive", "deductions"})),
    ("preference", frozenset({"preference", "preferences"})),
    ("handoff", frozenset({"handoff", "handoffs", "session", "sessions"})),
    ("conversation", frozenset({"conversation", "conversations", "chat", "chats", "transcript"})),
    ("progress", frozenset({"progress", "status", "changelog", "standup", "weekly"})),
    ("research", frozenset({"research", "investigation", "investigations", "spike"})),
    ("milestone", frozenset({"milestone", "milestones", "release", "releases"})),
    ("problem", frozenset({"problem", "problems", "incident", "incidents", "postmortem", "bugs"})),
    ("project", frozenset({"project", "projects", "roadmap"})),
    ("hub", frozenset({"hub", "moc", "hubs"})),
)
_HUB_FILES = frozenset({"index.md", "readme.md", "moc.md", "hub.md", "_index.md"})

_TITLE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("decision", re.compile(r"^(adr[\s\-:#0-9]|decision\b)|\bdecision record\b", re.I)),
    ("handoff", re.compile(r"\bhand-?off\b", re.I)),
    ("antipattern", re.compile(r"\banti-?patterns?\b|^(avoid|don'?t|never)\b", re.I)),
    ("problem", re.compile(r"\b(post-?mortem|incident|outage|bug report)\b", re.I)),
    ("milestone", re.compile(r"\bmilestone\b|\breleased?\s+v?\d", re.I)),
    ("research", re.compile(r"\b(research|comparison|benchmark|evaluation of|survey)\b", re.I)),
    (
        "progress",
        re.compile(r"\b(progress|status update|weekly (update|status)|changelog)\b", re.I),
    ),
    ("preference", re.compile(r"\bpreferences?\b", re.I)),
    ("project", re.compile(r"\b(roadmap|project (plan|overview|brief))\b", re.I)),
)
_SPEAKER_LINE = re.compile(r"^\s*\**(user|assistant|human|ai|claude)\**\s*:", re.I | re.M)
_LINK = re.compile(r"\[[^\]\n]+\]\([^)\n]+\)|\[\[[^\]\n]+\]\]")
_PATH_TOKEN = re.compile(r"[a-z0-9]+")

# [ \t], not \s: a bare "#" or "-" line must not borrow the next line's first character.
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.M)
_LIST_LINE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S", re.M)
_DECISION_WORDS = re.compile(
    r"\b(decided|decision|chose|chosen|choose|tradeoffs?|trade-offs?|rationale|agreed|"
    r"we will|went with|opted|instead of|because)\b",
    re.I,
)
_CORRECTION_WORDS = re.compile(
    r"\b(actually|correction|corrected|mistake|wrong|turns out|should have|"
    r"no longer|superseded|fixed|lesson learned)\b",
    re.I,
)


def classify_content_type(path: str, title: str, body: str, frontmatter: Mapping[str, Any]) -> str:
    """The document's type: frontmatter, then path, then wording, else ``note``."""
    for key in ("type", "content_type"):
        declared = frontmatter.get(key)
        if isinstance(declared, str):
            name = declared.strip().lower().replace("_", "-")
            if name in CONTENT_TYPES:
                return name
            if name in _ALIASES:
                return _ALIASES[name]
    lowered = path.lower()
    tokens = set(_PATH_TOKEN.findall(lowered))
    if "anti" in tokens and "pattern" not in tokens and "patterns" not in tokens:
        tokens.discard("anti")
    for content_type, words in _PATH_RULES:
        if tokens & words:
            return content_type
    if lowered.rsplit("/", 1)[-1] in _HUB_FILES:
        return "hub"
    for content_type, pattern in _TITLE_RULES:
        if pattern.search(title):
            return content_type
    opening = body[:3000]
    if len(_SPEAKER_LINE.findall(opening)) >= 4:
        return "conversation"
    lines = [line for line in opening.splitlines() if line.strip()]
    links = len(_LINK.findall(opening))
    if links >= 5 and links >= len(lines) * 0.5:
        return "hub"
    return "note"


def confidence_baseline(content_type: str) -> float:
    return CONFIDENCE_BASELINE.get(content_type, 0.5)


def quality_score(body: str, has_frontmatter: bool) -> float:
    """0-1: length, headings, lists, decision and correction wording, frontmatter (+0.2).

    Each part saturates, so padding a note does not buy score: length up to 0.25 (full at
    1,500 characters, log-shaped), headings up to 0.2 (4 of them), list items up to 0.15
    (6 of them), decision wording 0.1, correction wording 0.1, frontmatter 0.2.
    """
    length = len(body.strip())
    if length == 0:
        return 0.2 if has_frontmatter else 0.0
    score = 0.25 * min(1.0, math.log1p(length / 100) / math.log1p(15))
    score += 0.2 * min(len(_HEADING_LINE.findall(body)), 4) / 4
    score += 0.15 * min(len(_LIST_LINE.findall(body)), 6) / 6
    if _DECISION_WORDS.search(body):
        score += 0.1
    if _CORRECTION_WORDS.search(body):
        score += 0.1
    if has_frontmatter:
        score += 0.2
    return round(min(1.0, score), 4)
