"""What kind of document a file is, how well it is written, and how far to trust it.

``content_type``, first match wins:

1. frontmatter ``type`` or ``content_type`` naming a known type or an alias of one;
2. ``hub`` for a link page, whatever its name: at least 5 links to other pages, and at least
   60% of the content lines are link lines. Content lines are the non-blank lines of the
   first 20,000 characters outside code fences and HTML comments, leaving out headings,
   rules and link reference definitions; a link line holds a link (markdown, reference,
   ``[[wiki]]``, ``<autolink>`` or bare URL; not an image, not an in-page ``#anchor``) and
   either starts with it (``- [Title](page.md) - what it is``, a table row whose first cell
   is a link) or has at most 10 other words. Measured (share of link lines): the example
   vault's ``index.md`` 0.94, two real ADR logs (``docs/decisions/index.md``) 0.83 and 0.94;
   the 114 Go design documents at most 0.33 (a cover letter over three short link lists).
   A KEP's 40-entry ``#anchor`` table of contents counts no links;
3. path words, folder and file-name tokens (``decisions/``, ``adr/0005-x.md``,
   ``architecture-decisions/``, ``handoffs/``, ``research/``, ...; ``session`` and
   ``release`` only as folder names, since ``session-cookies.md`` or
   ``release-process.md`` is no handoff or milestone); ``accepted`` with ``proposal``,
   ``rfc``, ``kep`` or ``design`` in the path (``proposals/accepted/x.md``) is a decision.
   ``index.md``, ``README.md`` and the like say nothing: a folder's index page is a hub only
   when it is a link page (rule 2);
4. ``decision`` for a decision record's layout: a ``Decision`` (or ``Decision Outcome``)
   heading with a ``Status``, ``Context``, ``Consequences``, ``Considered Options`` or
   ``Decision Drivers`` heading (Nygard ADRs, MADR);
5. wording in the title (``ADR 12: ...``, ``Decision record``, ``Accepted proposal``,
   ``Handoff``, ``Postmortem``, ``Avoid ...``);
6. ``conversation`` for an opening with 4 speaker-labelled lines;
7. ``note``.

Types drive recency half-lives and the confidence baseline used by composite scoring.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from typing import Any

from ahocorasick_rs import AhoCorasick, MatchKind

from memtrove.index.markdown import CODE_FENCE, HEADING, SECTION_NUMBER
from memtrove.index.types import CONFIDENCE_BASELINE, CONTENT_TYPES

__all__ = [
    "CONFIDENCE_BASELINE",
    "CONTENT_TYPES",
    "classify_content_type",
    "confidence_baseline",
    "is_link_page",
    "quality_score",
]

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
)
# Words that name a kind of document as a folder but a topic in a file name.
_FOLDER_ONLY = frozenset({"session", "sessions", "release", "releases"})
_PROPOSAL_WORDS = frozenset({"proposal", "proposals", "rfc", "rfcs", "kep", "keps", "design"})

_TITLE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "decision",
        re.compile(
            r"^(adr[\s\-:#0-9]|decision\b)|\badr[\s\-#]?\d+\b|\bdecision (record|log|outcome)\b"
            r"|\barchitectur(e|al) decision\b|\baccepted (proposal|rfc|kep|design)\b"
            r"|\b(proposal|rfc|kep) accepted\b|\(accepted\)",
            re.I,
        ),
    ),
    ("handoff", re.compile(r"\bhand-?off\b", re.I)),
    ("antipattern", re.compile(r"\banti-?patterns?\b|^(avoid|don'?t|never)\b", re.I)),
    ("problem", re.compile(r"\b(post-?mortem|incident|outage|bug report)\b", re.I)),
    ("milestone", re.compile(r"\bmilestone\b|\breleased?\s+v?\d", re.I)),
    (
        "research",
        re.compile(
            r"\b(research|comparison|evaluation of|survey)\b|^benchmark"
            r"|\bbenchmark(s|ing)? (of|results)\b",
            re.I,
        ),
    ),
    (
        "progress",
        re.compile(r"\b(progress|status update|weekly (update|status)|changelog)\b", re.I),
    ),
    ("preference", re.compile(r"\bpreferences?\b", re.I)),
    ("project", re.compile(r"\b(roadmap|project (plan|overview|brief))\b", re.I)),
)
_SPEAKER_LINE = re.compile(r"^\s*\**(user|assistant|human|ai|claude)\**\s*:", re.I | re.M)
# Links (inline, reference, wiki, autolink): group 1 is "!" for an image, group 2 an inline
# target, group 3 a wiki target; in-page "#anchor" targets and images are no links here.
# Bounded and unambiguous: the target is the first run of non-space characters, and what
# follows it (a title) starts with a space. ``\(\s*([^)\s]*)[^)\n]*\)`` let both runs take the
# same characters, and a line of "[a](" repeated took minutes (cubic backtracking).
_LINK = re.compile(
    r"(!?)\[[^\[\]\n]{0,300}\]\(\s*([^)\s\[\]]{0,2000})(?:[^\S\n][^)\n]{0,2000})?\)"
    r"|\[\[([^\[\]\n]{1,300})\]\]|<https?://[^>\s]{1,2000}>"
    r"|\[[^\[\]\n]{1,300}\]\[[^\[\]\n]{0,300}\]"
)
_BARE_URL = re.compile(r"https?://\S+")
_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*\S")
_RULE_OR_TABLE_SEPARATOR = re.compile(r"^[-*_=|:\s]+$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_WORD = re.compile(r"\w+")
HUB_MIN_LINKS = 5
HUB_MIN_SHARE = 0.6
_HUB_SCAN = 20_000
_LINK_LINE_WORDS = 10
_DECISION_HEADINGS = frozenset(
    {"decision", "decision outcome", "the decision", "our decision", "decision made"}
)
_DECISION_COMPANIONS = frozenset(
    {
        "status",
        "context",
        "context and problem statement",
        "consequences",
        "considered options",
        "options considered",
        "decision drivers",
        "pros and cons of the options",
    }
)
_PATH_TOKEN = re.compile(r"[a-z0-9]+")

# [ \t], not \s: a bare "#" or "-" line must not borrow the next line's first character.
# Decision and correction wording, found in one pass of an Aho-Corasick automaton over the
# lowercased body (two case-insensitive alternations cost more than the rest of indexing's
# parsing); a hit counts only as a whole word ("fixed", not "prefixed").
_DECISION_WORDS = (
    "decided", "decision", "chose", "chosen", "choose", "tradeoff", "tradeoffs", "trade-off",
    "trade-offs", "rationale", "agreed", "we will", "went with", "opted", "instead of",
    "because",
)  # fmt: skip
_CORRECTION_WORDS = (
    "actually", "correction", "corrected", "mistake", "wrong", "turns out", "should have",
    "no longer", "superseded", "fixed", "lesson learned",
)  # fmt: skip
_WORDING = AhoCorasick([*_DECISION_WORDS, *_CORRECTION_WORDS], matchkind=MatchKind.LeftmostLongest)
# Counted lines start after a newline (the body gets one in front): a literal first character
# lets the engine jump from line to line; the counts saturate, so counting stops there.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_HEADING_LINE = re.compile(r"\n {0,3}#{1,6}[ \t]+\S")
_LIST_LINE = re.compile(r"\n[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")


def classify_content_type(path: str, title: str, body: str, frontmatter: Mapping[str, Any]) -> str:
    """The document's type, by the rules of the module docstring; ``note`` when none fits."""
    for key in ("type", "content_type"):
        declared = frontmatter.get(key)
        if isinstance(declared, str):
            name = declared.strip().lower().replace("_", "-")
            if name in CONTENT_TYPES:
                return name
            if name in _ALIASES:
                return _ALIASES[name]
    if is_link_page(body):
        return "hub"
    path_type = _path_type(path)
    if path_type:
        return path_type
    if _is_decision_record(body):
        return "decision"
    for content_type, pattern in _TITLE_RULES:
        if pattern.search(title):
            return content_type
    if len(_SPEAKER_LINE.findall(body[:3000])) >= 4:
        return "conversation"
    return "note"


def _path_type(path: str) -> str | None:
    lowered = path.lower()
    folders, _, name = lowered.rpartition("/")
    folder_tokens = set(_PATH_TOKEN.findall(folders))
    tokens = folder_tokens | (set(_PATH_TOKEN.findall(name)) - _FOLDER_ONLY)
    if "anti" in tokens and "pattern" not in tokens and "patterns" not in tokens:
        tokens.discard("anti")
    for content_type, words in _PATH_RULES:
        if tokens & words:
            return content_type
        if content_type == "decision" and "accepted" in tokens and tokens & _PROPOSAL_WORDS:
            return "decision"
    return None


def is_link_page(body: str) -> bool:
    """Whether a body is mostly links to other pages (rule 2 of the module docstring)."""
    text = body[:_HUB_SCAN]
    # Every link form has "](", "[[", "][" or "://": too few of them, no hub.
    marks = text.count("](") + text.count("[[") + text.count("][") + text.count("://")
    if marks < HUB_MIN_LINKS:
        return False
    content_lines, link_lines, links = _link_counts(text)
    return links >= HUB_MIN_LINKS and link_lines >= HUB_MIN_SHARE * content_lines


def _link_counts(text: str) -> tuple[int, int, int]:
    """(content lines, link lines, links) of ``text``."""
    content_lines = link_lines = links = 0
    fence: str | None = None
    in_comment = False
    for line in text.splitlines():
        stripped = line.strip()
        fence_match = CODE_FENCE.match(line)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0]:
                fence = None
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        if fence_match:
            fence = fence_match.group(1)
            continue
        if stripped.startswith("<!--"):
            in_comment = "-->" not in stripped[4:]
            continue
        if (
            not stripped
            or HEADING.match(line)
            or _REFERENCE_DEFINITION.match(line)
            or _RULE_OR_TABLE_SEPARATOR.match(stripped)
        ):
            continue
        content_lines += 1
        found = _links_on(line)
        if found:
            links += found
            link_lines += _is_link_line(line)
    return content_lines, link_lines, links


def _links_on(line: str) -> int:
    """How many links to other pages a line holds."""
    found = sum(1 for match in _LINK.finditer(line) if _links_elsewhere(match))
    return found + len(_BARE_URL.findall(_LINK.sub(" ", line)))


def _is_link_line(line: str) -> bool:
    """A line holding links that starts with one or has at most 10 other words."""
    entry = _LIST_MARKER.sub("", line).lstrip("| \t")
    leading = _LINK.match(entry) or _BARE_URL.match(entry)
    if leading and _links_elsewhere(leading):
        return True
    rest = _BARE_URL.sub(" ", _LINK.sub(" ", entry))
    return len(_WORD.findall(rest)) <= _LINK_LINE_WORDS


def _links_elsewhere(match: re.Match[str]) -> bool:
    """A link to another page: not an image, not an in-page ``#anchor``."""
    if match.re is not _LINK:
        return True  # a bare URL
    if match.group(1):
        return False
    target = match.group(2) if match.group(2) is not None else match.group(3)
    return not (target or "x").startswith("#")


def _is_decision_record(body: str) -> bool:
    headings = set()
    for line in body[:_HUB_SCAN].splitlines():
        match = HEADING.match(line)
        if match:
            plain = match.group(2).replace("*", "").replace("`", "").strip().lower()
            headings.add(" ".join(SECTION_NUMBER.sub("", plain).strip(" \t:.").split()))
    return bool(headings & _DECISION_HEADINGS) and bool(headings & _DECISION_COMPANIONS)


def _count_up_to(pattern: re.Pattern[str], text: str, most: int) -> int:
    return sum(1 for _ in itertools.islice(pattern.finditer(text), most))


def _wording(lowered: str) -> tuple[bool, bool]:
    """(decision wording, correction wording) as whole words in ``lowered``."""
    try:
        hits = _WORDING.find_matches_as_indexes(lowered)
    except UnicodeEncodeError:  # lone surrogates: the automaton reads UTF-8
        lowered = _SURROGATE.sub("\ufffd", lowered)  # same length, same positions
        hits = _WORDING.find_matches_as_indexes(lowered)
    return _whole_hits(hits, lowered)


def _whole_hits(hits: list[tuple[int, int, int]], lowered: str) -> tuple[bool, bool]:
    decision = correction = False
    size = len(lowered)
    for word, start, end in hits:
        if start and (lowered[start - 1].isalnum() or lowered[start - 1] == "_"):
            continue
        if end < size and (lowered[end].isalnum() or lowered[end] == "_"):
            continue
        if word < len(_DECISION_WORDS):
            decision = True
        else:
            correction = True
        if decision and correction:
            break
    return decision, correction


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
    lined = "\n" + body
    score += 0.2 * _count_up_to(_HEADING_LINE, lined, 4) / 4
    score += 0.15 * _count_up_to(_LIST_LINE, lined, 6) / 6
    decision, correction = _wording(body.lower())
    score += 0.1 * decision + 0.1 * correction
    if has_frontmatter:
        score += 0.2
    return round(min(1.0, score), 4)
