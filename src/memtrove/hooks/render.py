"""Rendering the ``<vault-context>`` block of ``context-surfacing`` within a token budget.

::

    <vault-routing>If searching memory for this: use ... NOT query.</vault-routing>
    <vault-context>
    <instruction>Treat the following as background facts you already know ...</instruction>
    <facts>
    **Title** (decision)
    collection/path.md (also at: collection/copy.md)
    ...the passage that best matches the prompt...

    ---

    **Title**
    collection/other.md
    ...a shorter passage...
    </facts>
    <relationships>
    - Source title --[causal]--> Target title
    </relationships>
    <vault-facts>
    subject predicate object
    </vault-facts>
    </vault-context>

Entries are tiered by composite score: HOT (> 0.8) shows a 300-character passage, WARM
(> 0.6) 150 characters, COLD 80 characters: every entry carries text a model can use, and
a title with a path alone is never injected. As the adaptive threshold does, a score is
also judged against the best one: within 85 % of it counts as HOT, within 70 % as WARM; the
higher of the two tiers wins. A passage is plain text, without line-number headers (they
cost tokens and tell a model nothing). Identical copies of a document at other paths are
named on its path line (``also at: ...``), not shown again.
``<relationships>`` and ``<vault-facts>``
appear only when they have lines, and are the first parts dropped for budget. Unlike the
reference, the budget bounds the whole ``additionalContext`` (frame, routing hint and every
part): a first entry that does not fit is shown at a lower tier, or not at all.
"""

import re
from collections.abc import Sequence
from typing import NamedTuple

from memtrove.hooks.events import estimate_tokens
from memtrove.patterns import LazyPattern
from memtrove.retrieval.snippets import Highlighter
from memtrove.security.guard import escape, sanitize

__all__ = [
    "ENTRY_SEPARATOR",
    "INSTRUCTION",
    "Entry",
    "Link",
    "Rendered",
    "asks_why",
    "checked_copies",
    "extract_snippet",
    "render_context",
    "routing_hint",
    "snippet_chars",
    "truncate",
]

INSTRUCTION = (
    "Treat the following as background facts you already know unless the user corrects them."
)
ENTRY_SEPARATOR = "\n\n---\n\n"
KEPT_BEFORE_RELATIONSHIPS = 3  # entries never given up to make room for relationships
HOT_SCORE, WARM_SCORE = 0.8, 0.6
HOT_RATIO, WARM_RATIO = 0.85, 0.70
HOT_CHARS, WARM_CHARS, COLD_CHARS = 300, 150, 80
MAX_ALSO_AT = 3

_HEADER_FIELD = LazyPattern(
    r"(?:\*\*)?(?:authors?|last[- ]updated|updated|created|creation-date|date|status|"
    r"discussion|url|reviewers?|approvers?|owning-sig|participating-sigs|title|kep-number|"
    r"see-also|replaces|superseded-by|stage|latest-milestone|milestone|editors?|"
    r"contributors|version|tags|proposal|issue)(?:\*\*)?\s*:",
    re.I,
)
_LINKS_ONLY = LazyPattern(
    r"(?:[-*+]|\d+\.)?\s*(?:\[[^\]]*\]\([^)]*\)[\s.,;|]*|<br\s*/?>|&lt;br&gt;)+"
)
_RULE = LazyPattern(r"[-=*_|:\s]{3,}|<br\s*/?>|&lt;br&gt;")
_REASONS = LazyPattern(
    r"\b(?:decision|decided|rationale|reasons?|why|consequences?|alternatives?|motivation|"
    r"trade-?offs?|drawbacks|considered)\b",
    re.I,
)
_FRONTMATTER = LazyPattern(r"\A---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*\r?$\n?", re.S | re.M)

_ROUTES = (
    (
        re.compile(
            r"\b(?:last session|yesterday|prior session|previous session|last time we|handoff"
            r"|what happened last|what did we do|cross.session|earlier today|what we discussed"
            r"|when we last)\b",
            re.I,
        ),
        "If searching memory for this: use session_log for the last sessions, then "
        "memory_retrieve.",
    ),
    (
        re.compile(
            r"^why\b|\b(?:why did|why was|why were|what caused|what led to|reason for|decided to"
            r"|decision about|trade.?off|instead of|chose to)\b",
            re.I,
        ),
        "If searching memory for this: use intent_search (then find_causal_links on what it "
        "finds), or memory_retrieve.",
    ),
    (
        re.compile(
            r"\b(?:similar to|related to|what else|what other|reminds? me of|like this)\b", re.I
        ),
        "If searching memory for this: use find_similar on the note it is like, or "
        "memory_retrieve.",
    ),
)


def asks_why(prompt: str) -> bool:
    """Whether ``prompt`` asks for a reason (the why route of :func:`routing_hint`)."""
    return _ROUTES[1][0].search(prompt) is not None


class Entry(NamedTuple):
    """One surfaced document, already checked by the prompt-injection filter."""

    key: str  # collection/path
    title: str
    content_type: str
    score: float
    body: str
    also_at: tuple[str, ...] = ()  # identical copies at other paths (collection/path)


class Rendered(NamedTuple):
    """The injected text, the entries it shows (in order) and its estimated tokens."""

    text: str
    shown: list[Entry]
    tokens: int


def checked_copies(paths: Sequence[str]) -> tuple[str, ...]:
    """The other paths of an injected document's identical copies, each checked by the
    injection filter like the path it stands beside."""
    return tuple(path for path in paths if sanitize(path))


def routing_hint(prompt: str) -> str | None:
    """A tool-routing hint for timeline, causal or discovery questions (raw prompt)."""
    for pattern, hint in _ROUTES:
        if pattern.search(prompt):
            return hint
    return None


def snippet_chars(score: float, best: float | None = None) -> int:
    """The passage length of a score's tier: 300 (HOT), 150 (WARM) or 80 (COLD).

    ``best`` (the best score of the injection) adds the relative cut-offs.
    """
    relative = score / best if best and best > 0 else 0.0
    if score > HOT_SCORE or relative >= HOT_RATIO:
        return HOT_CHARS
    if score > WARM_SCORE or relative >= WARM_RATIO:
        return WARM_CHARS
    return COLD_CHARS


def truncate(text: str, limit: int) -> str:
    """Cut at a paragraph, sentence, line or word boundary past half of ``limit``."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for boundary in ("\n\n", ". ", "\n"):
        cut = head.rfind(boundary)
        if cut > limit // 2:
            return head[: cut + (1 if boundary == ". " else 0)].rstrip()
    cut = head.rfind(" ")
    return (head[:cut] if cut > limit // 2 else head[: limit - 1]).rstrip() + "…"


def extract_snippet(
    body: str, highlighter: Highlighter, max_chars: int, *, why: bool = False
) -> str:
    """The passage of ``body`` that best answers, as plain text of at most ``max_chars``.

    It starts at the prose line the highlighter rates best: headings, a document's header
    fields (``Author:``, ``Last updated:``, ``Status:``...), tables of contents, link-only
    lines and table rules are never where a passage starts (the entry already shows the
    title, and they tell a model nothing); for a heading that matches best, the passage is
    the first prose under it. ``why`` (a why-question) prefers lines under a section that
    gives reasons (Decision, Rationale, Consequences, Alternatives, Motivation, Trade-offs).
    With no match at all it is the document's first prose. It runs to a paragraph break once
    it says something, skipping the same kinds of lines; a heading after that ends it.
    Frontmatter is never shown.
    """
    lines = body.splitlines()
    match = _FRONTMATTER.match(body)
    skip = match.group(0).count("\n") if match else 0
    rest = lines[skip:]
    start = _start_line(rest, highlighter.line_scores("\n".join(rest)), why)
    picked: list[str] = []
    length = 0
    for index in range(skip + start, len(lines)):
        line = " ".join(lines[index].split())
        if not line:
            if picked and length >= max_chars // 3:  # a paragraph break ends the passage
                break
            continue
        if _not_prose(line):
            if picked and line.startswith("#"):  # the next section: this passage is done
                break
            continue
        picked.append(line)
        length += len(line) + 1
        if length >= max_chars:
            break
    if not picked:
        return ""
    return truncate("\n".join(picked), max_chars)


def _not_prose(line: str) -> bool:
    """A line a passage never starts with: a heading, a header field, a link-only line (a
    table of contents), a table rule or a horizontal rule."""
    return bool(
        line.startswith("#")
        or _HEADER_FIELD.match(line)
        or _LINKS_ONLY.fullmatch(line)
        or _RULE.fullmatch(line)
    )


def _start_line(lines: Sequence[str], scores: dict[int, int], why: bool) -> int:
    """Where the passage starts (see :func:`extract_snippet`)."""
    heading = ""
    best, best_score = -1, 0
    best_heading, best_heading_score = -1, 0
    for index, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith("#"):
            heading = line
        score = scores.get(index, 0)
        if not score:
            continue
        if _not_prose(line):
            if line.startswith("#") and score > best_heading_score:
                best_heading, best_heading_score = index, score
            continue
        if why and _REASONS.search(heading):
            score += 2
        if score > best_score:
            best, best_score = index, score
    if best < 0 <= best_heading:
        best = best_heading  # the prose under the heading that matched
    if best < 0:
        best = 0
    return next(
        (
            i
            for i in range(best, len(lines))
            if lines[i].strip() and not _not_prose(lines[i].strip())
        ),
        best,
    )


def _entry_text(entry: Entry, snippet: str) -> str:
    type_tag = f" ({entry.content_type})" if entry.content_type != "note" else ""
    where = escape(entry.key)
    if entry.also_at:
        copies = ", ".join(escape(path) for path in entry.also_at[:MAX_ALSO_AT])
        more = (
            f" and {len(entry.also_at) - MAX_ALSO_AT} more"
            if len(entry.also_at) > MAX_ALSO_AT
            else ""
        )
        where = f"{where} (also at: {copies}{more})"
    text = f"**{entry.title}**{type_tag}\n{where}"
    return f"{text}\n{snippet}" if snippet else text


def _frame(routing: str | None, facts: str, extra_parts: Sequence[str]) -> str:
    inner = [f"<instruction>{INSTRUCTION}</instruction>", f"<facts>\n{facts}\n</facts>"]
    inner.extend(extra_parts)
    block = "<vault-context>\n" + "\n".join(inner) + "\n</vault-context>"
    return f"<vault-routing>{routing}</vault-routing>\n{block}" if routing else block


def _part(tag: str, lines: Sequence[str], room_chars: int) -> str | None:
    """``<tag>`` with as many of ``lines`` as fit in ``room_chars``; None if none fit."""
    fitted: list[str] = []
    used = len(f"<{tag}>\n\n</{tag}>") + 1  # the part and the newline that joins it
    for line in lines:
        if used + len(line) + 1 > room_chars:
            break
        fitted.append(line)
        used += len(line) + 1
    return f"<{tag}>\n" + "\n".join(fitted) + f"\n</{tag}>" if fitted else None


class Link(NamedTuple):
    """A relationship line and the entries (by key) at its two ends."""

    source: str
    target: str
    line: str


def render_context(
    entries: Sequence[Entry],
    highlighter: Highlighter,
    budget_tokens: int,
    *,
    routing: str | None = None,
    relationships: Sequence[Link] = (),
    vault_facts: Sequence[str] = (),
    facts_tokens: int = 0,
    why: bool = False,
) -> Rendered:
    """Fit entries, best first, then relationships and vault facts, into the budget
    (``why``: the prompt asks why; passages prefer the sections that give reasons).

    Each entry takes its tier's snippet; when that does not fit, the shorter tiers are
    tried, down to COLD, so a long first entry still surfaces with a short passage. Rendering stops at the
    first entry that fits at no tier. A snippet the injection filter rejects drops its
    entry (the caller has checked title, path and body already). Returns empty text when
    no entry fits.

    Vault facts keep their sub-budget (``facts_tokens``) when there are any. Relationships
    are shown only between entries that are shown; they get room by leaving out the last
    entries, but never the first three (they are the first thing dropped when room is short).
    """
    budget_chars = budget_tokens * 4  # estimate_tokens(text) <= budget iff len <= 4 * budget
    frame = len(_frame(routing, "", ()))
    facts_block = _part("vault-facts", vault_facts, facts_tokens * 4)
    reserve = len(facts_block) + 1 if facts_block else 0
    texts, shown, used = _fit(entries, highlighter, budget_chars - reserve, frame, why)
    if not texts:
        return Rendered(text="", shown=[], tokens=0)
    relations: str | None = None
    links = _links_among(relationships, shown)
    if links:
        wanted = _part("relationships", links, budget_chars)
        room = budget_chars - reserve - (len(wanted) + 1 if wanted else 0)
        fewer_texts, fewer, fewer_used = _fit(entries, highlighter, room, frame, why)
        if len(fewer) >= min(KEPT_BEFORE_RELATIONSHIPS, len(shown)):
            texts, shown, used = fewer_texts, fewer, fewer_used
        relations = _part(
            "relationships", _links_among(relationships, shown), budget_chars - reserve - used
        )
    parts: list[str] = []
    if relations:
        parts.append(relations)
        used += len(relations) + 1
    known = _part("vault-facts", vault_facts, min(budget_chars - used, facts_tokens * 4))
    if known:
        parts.append(known)
    text = _frame(routing, ENTRY_SEPARATOR.join(texts), parts)
    return Rendered(text=text, shown=shown, tokens=estimate_tokens(text))


def _links_among(links: Sequence[Link], shown: Sequence[Entry]) -> list[str]:
    keys = {entry.key for entry in shown}
    return [link.line for link in links if link.source in keys and link.target in keys]


def _fit(
    entries: Sequence[Entry], highlighter: Highlighter, budget_chars: int, used: int, why: bool
) -> tuple[list[str], list[Entry], int]:
    """The entries' texts that fit in ``budget_chars`` (``used`` already taken)."""
    best = max((entry.score for entry in entries), default=0.0)
    texts: list[str] = []
    shown: list[Entry] = []
    for entry in entries:
        separator = len(ENTRY_SEPARATOR) if texts else 0
        fitted: str | None = None
        rejected = False
        tier = snippet_chars(entry.score, best)
        for chars in dict.fromkeys((tier, WARM_CHARS, COLD_CHARS)):
            if chars > tier:
                continue
            snippet = sanitize(extract_snippet(entry.body, highlighter, chars, why=why))
            if snippet is None:
                rejected = True
                break
            text = _entry_text(entry, snippet)
            if used + separator + len(text) <= budget_chars:
                fitted = text
                break
        if rejected:
            continue
        if fitted is None:
            break
        texts.append(fitted)
        shown.append(entry)
        used += separator + len(fitted)
    return texts, shown, used
