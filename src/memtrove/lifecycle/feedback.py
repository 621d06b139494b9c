"""The feedback loop: which surfaced documents the assistant's reply used, and what that
teaches the vault.

**Per turn.** ``context-surfacing`` logs each injection with the session's turn index (the
number of prompts before it). The transcript's prompts are counted from the end: the last
prompt is the session's latest surfacing turn, the one before it the turn before, and so on
(a window that starts mid-session still lines up). Each unchecked ``recall_events`` row of
the session is judged against the reply of *its* turn only; an event whose turn is no
longer in the transcript window is marked checked without a verdict (not a negative).

**Reference detection** (:func:`is_referenced`; measured in ``tests/capture`` against real
Claude Code replies, where unrelated notes must never match). A reply, or the turn's tool
calls, uses a document when it names:

- its docid as ``#abc123`` (a bare six-letter hex word such as "decade" is not enough);
- its path: ``collection/path``, the path inside the collection, or a file name of at least
  :data:`MIN_NAME_CHARS` characters with its extension (``auth-design.md``);
- its title, as whole words, when the title is distinctive (at least
  :data:`MIN_TITLE_WORDS` words and :data:`MIN_TITLE_CHARS` characters); a title of any
  length when the reply names it as one: quoted, in backticks or bold, or followed by a word
  such as "note", "record" or "ADR" ("the Timestamp format record");
- a passage of its text the reply quotes (in quotes, backticks or a ``>`` line) of at least
  :data:`MIN_QUOTE_WORDS` words and :data:`MIN_QUOTE_CHARS` characters (not
  ``"application/json"`` or ``"none of the above"``);
- its exact values: identifiers, formats and numbers with a shape (``created_at``,
  ``2006-01-02T15:04:05Z07:00``, ``v1.4.2``, ``0.75``, ``%Y-%m-%d``): one of at least
  :data:`LONG_VALUE_CHARS` characters holding digits or format marks, or two values of
  which one has digits, format marks or an underscore, together at least twice as long
  (``CreateInvoice`` with ``idempotency_key``, not ``key1`` with ``key2``), that the turn's prompt did not already hold (a value the user asked
  about says nothing of the document);
- or at least :data:`MIN_SHARED_PHRASES` distinctive phrases of its text: runs of
  :data:`PHRASE_WORDS` words of which at least three are not stopwords (paths, file names
  and markdown links left out on both sides: a note linking to another shares the link's
  words with a reply that names it), again not counting what the prompt held.

**Bookkeeping**, in one write transaction: ``recall_events.was_referenced`` and
``checked_at``; ``context_usage.was_referenced`` for a run any of whose documents was used;
for each used document ``access_count + 1``, ``last_accessed_at`` and confidence +
:data:`CONFIDENCE_BOOST` (cap 1); ``recall_stats.negative_count`` + 1 per event surfaced
and not used (the definition :data:`memtrove.lifecycle.recall.NEGATIVE` recomputes; an
event checked without a verdict keeps ``was_referenced =`` ``NO_VERDICT``); ``utility_signals`` (surfaced and referenced counts); a co-activation for
every pair of documents used in the same turn. After it, ``usage`` edges
(:mod:`memtrove.graph.relations`) join those pairs, each write its own transaction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from itertools import combinations
from typing import NamedTuple, Protocol

from memtrove.db.connection import Connection, write_transaction
from memtrove.lifecycle.recall import NO_VERDICT
from memtrove.text import to_iso

__all__ = [
    "CONFIDENCE_BOOST",
    "FeedbackReport",
    "Reply",
    "ReplyTurn",
    "Target",
    "apply_feedback",
    "is_referenced",
    "phrases",
    "prepare_reply",
    "target_of",
    "values",
]

CONFIDENCE_BOOST = 0.05
MIN_TITLE_WORDS = 3
MIN_TITLE_CHARS = 15
MIN_NAME_CHARS = 8
PHRASE_WORDS = 6
MIN_SHARED_PHRASES = 2
PHRASE_TEXT_CHARS = 20_000
MIN_QUOTE_CHARS = 24
MIN_QUOTE_WORDS = 4
MIN_VALUE_CHARS = 4
LONG_VALUE_CHARS = 8
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_STOP = frozenset(
    """
    a an the and or but not no for of to in on at by with from into is are was were be been
    it its this that these those there here then than so as if when we you they i he she me
    my our your their them do does did have has had will would can could should may might
    just also only very more most some any all each other such same too what which who how
    use used using can't don't it's i'll we'll let's
    """.split()
)
# Paths, file names and links are names, not phrases: a note that links to another shares
# the link's words with a reply naming it, which says nothing about the note itself.
# Paths and file names start where their word starts ((?<!\S)): tried from every place in a
# long word, they re-scanned it from each (quadratic in a 100 KB reply).
_NAME_LIKE = re.compile(
    r"(?<!\S)\S*[/\\]\S*|(?<!\S)\S+\.[A-Za-z]{1,5}\b|\[[^\]]{0,300}\]\([^)]{0,2000}\)"
)
_GENERIC_TITLES = frozenset({"readme", "notes", "overview", "introduction", "summary", "index"})
# What a reply calls a document when it names one by its title.
_NAMING_WORDS = (
    "note|notes|record|records|doc|docs|document|adr|decision|page|proposal|section|entry|"
    "memo|runbook|guide|rfc|spec|article|write-up|writeup"
)
# A quoted passage: in backticks, straight or curly double quotes, or a Markdown quote line.
_QUOTED = re.compile(
    r"`([^`\n]{1,2000})`|\"([^\"\n]{1,2000})\"|“([^”\n]{1,2000})”|^>[ \t]?(.{1,2000})$", re.M
)
# Candidate values: runs of characters that are not spaces, quotes or brackets.
_VALUE_RUN = re.compile(r"[^\s`\"'“”‘’()\[\]{}<>,;|]{4,200}")
_CAMEL = re.compile(r"[a-z][A-Z]")
_FILE_NAME = re.compile(r"[A-Za-z][\w-]*\.[A-Za-z]{1,5}")


class ReplyTurn(Protocol):
    """A transcript turn (:class:`memtrove.capture.turns.Turn` is one)."""

    @property
    def prompt(self) -> str: ...

    @property
    def reply(self) -> str: ...

    @property
    def calls(self) -> tuple[str, ...]: ...


class Target(NamedTuple):
    """What a reply may name of one document."""

    doc_id: int
    docid: str
    collection: str
    path: str
    title: str
    phrases: frozenset[tuple[str, ...]]
    values: frozenset[str] = frozenset()
    text: str = ""  # the body, lowercase, spaces collapsed (for quoted passages)


class FeedbackReport(NamedTuple):
    checked: int
    referenced: int
    negatives: int
    documents: tuple[str, ...]  # collection/path of the documents used
    usage_edges: int
    unaligned: int  # events whose turn is not in the transcript window

    @property
    def summary(self) -> str:
        return (
            f"{self.checked} recall event(s) checked: {self.referenced} referenced, "
            f"{self.negatives} negative, {len(self.documents)} document(s) used, "
            f"{self.usage_edges} usage edge(s), {self.unaligned} outside the transcript"
        )


def _tokens(text: str) -> list[str]:
    return [token.lower() for token in _TOKEN.findall(text)]


def phrases(text: str) -> frozenset[tuple[str, ...]]:
    """The distinctive word runs of ``text`` (see the module docstring)."""
    words = _tokens(_NAME_LIKE.sub(" ", text[:PHRASE_TEXT_CHARS]))
    found = set()
    for start in range(len(words) - PHRASE_WORDS + 1):
        run = tuple(words[start : start + PHRASE_WORDS])
        if sum(word not in _STOP and len(word) > 2 for word in run) >= 3:
            found.add(run)
    return frozenset(found)


def values(text: str) -> frozenset[str]:
    """The exact values of ``text`` (see the module docstring): identifiers, formats and
    shaped numbers, without surrounding punctuation; never paths, links or file names."""
    found = set()
    for match in _VALUE_RUN.finditer(text):
        value = match.group().strip(".:!?*_=-")
        if len(value) < MIN_VALUE_CHARS or "/" in value or "\\" in value:
            continue
        if _FILE_NAME.fullmatch(value) and not any(c.isdigit() for c in value):
            continue
        digits = any(c.isdigit() for c in value)
        shaped = digits and (any(c.isalpha() for c in value) or any(c in "-:.%_" for c in value))
        named = "_" in value or "%" in value or "::" in value or _CAMEL.search(value)
        if shaped or (named and not value.isupper()):
            found.add(value.lower())
    return frozenset(found)


def _collapsed(text: str) -> str:
    return " ".join(text.lower().split())


def target_of(doc_id: int, docid: str, collection: str, path: str, title: str, body: str) -> Target:
    head = body[:PHRASE_TEXT_CHARS]
    return Target(
        doc_id, docid, collection, path, title, phrases(body), values(head), _collapsed(head)
    )


def _distinctive_title(title: str) -> bool:
    words = _tokens(title)
    return (
        len(words) >= MIN_TITLE_WORDS
        and len(title.strip()) >= MIN_TITLE_CHARS
        and title.strip().lower() not in _GENERIC_TITLES
        and sum(word not in _STOP for word in words) >= 2
    )


def _names(target: Target) -> list[str]:
    names = [f"{target.collection}/{target.path}".lower()]
    if "/" in target.path:
        names.append(target.path.lower())
    file_name = target.path.rsplit("/", 1)[-1].lower()
    if len(file_name) >= MIN_NAME_CHARS and "." in file_name:
        names.append(file_name)
    return names


class Reply(NamedTuple):
    """A turn's reply prepared once for every document checked against it."""

    text: str  # the reply, lowercase
    everything: str  # the reply and the tool calls, lowercase
    phrases: frozenset[tuple[str, ...]]
    values: frozenset[str] = frozenset()  # the reply's values the prompt did not hold
    quotes: tuple[str, ...] = ()  # passages it quotes, lowercase, spaces collapsed


def prepare_reply(reply: str, calls: Sequence[str] = (), prompt: str = "") -> Reply:
    """``reply`` (with the turn's tool ``calls`` and the ``prompt`` it answers) prepared once
    for every document checked against it."""
    text = reply.lower()
    everything = "\n".join((text, *(call.lower() for call in calls)))
    head = reply[: PHRASE_TEXT_CHARS * 5]
    words = _tokens(_NAME_LIKE.sub(" ", head))
    runs = frozenset(
        tuple(words[start : start + PHRASE_WORDS]) for start in range(len(words) - PHRASE_WORDS + 1)
    ) - phrases(prompt)
    quotes = {
        _collapsed(next(group for group in match.groups() if group is not None))
        for match in _QUOTED.finditer(head)
    }
    kept = tuple(
        sorted(
            quote
            for quote in quotes
            if len(quote) >= MIN_QUOTE_CHARS and len(quote.split()) >= MIN_QUOTE_WORDS
        )
    )
    return Reply(text, everything, runs, values(head) - values(prompt[:PHRASE_TEXT_CHARS]), kept)


def _named_title(title: str, text: str) -> bool:
    """Whether ``text`` names ``title`` as a title: quoted, in backticks or bold, or followed
    by a word such as "note" or "record"."""
    words = title.lower().split()
    if not words or title.strip().lower() in _GENERIC_TITLES or len(title.strip()) < 3:
        return False
    spelled = r"\s+".join(re.escape(word) for word in words)
    if spelled not in text and words[0] not in text:
        return False
    framed = rf"([\"'“‘`]|\*\*){spelled}([\"'”’`]|\*\*)"
    followed = rf"(?<!\w){spelled}[\"'”’`*]*\s+(?:{_NAMING_WORDS})(?!\w)"
    return re.search(f"{framed}|{followed}", text) is not None


def _shares_values(target: Target, reply: Reply) -> bool:
    """One value of :data:`LONG_VALUE_CHARS` with digits or format marks, or two values one
    of them shaped: a camelCase word alone is as often a product's name (TypeScript,
    GitHub) as an identifier, and ``hello_world`` is everybody's example."""
    shared = target.values & reply.values
    if any(len(value) >= LONG_VALUE_CHARS and _formatted(value) for value in shared):
        return True
    return (
        len(shared) >= 2
        and sum(map(len, shared)) >= 2 * LONG_VALUE_CHARS  # not key1 and key2
        and any(_formatted(value) or "_" in value for value in shared)
    )


def _formatted(value: str) -> bool:
    return any(c.isdigit() for c in value) or "%" in value or "::" in value


def is_referenced(target: Target, reply: str | Reply, calls: Sequence[str] = ()) -> bool:
    """Whether ``reply`` (or the turn's tool ``calls``) uses ``target``."""
    prepared = reply if isinstance(reply, Reply) else prepare_reply(reply, calls)
    if not prepared.everything.strip():
        return False
    everything = prepared.everything
    if target.docid and re.search(rf"#{re.escape(target.docid.lower())}\b", everything):
        return True
    for name in _names(target):
        if name in everything and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", everything):
            return True
    if _distinctive_title(target.title):
        title = r"\s+".join(re.escape(word) for word in target.title.lower().split())
        if re.search(rf"(?<!\w){title}(?!\w)", prepared.text):
            return True
    if target.title and _named_title(target.title, prepared.text):
        return True
    if target.text and any(quote in target.text for quote in prepared.quotes):
        return True
    if _shares_values(target, prepared):
        return True
    return len(target.phrases & prepared.phrases) >= MIN_SHARED_PHRASES


class _Event(NamedTuple):
    event_id: int
    doc_id: int
    usage_id: int | None
    turn_index: int


def _pending(connection: Connection, session_id: str) -> list[_Event]:
    rows = connection.execute(
        "SELECT id, doc_id, usage_id, turn_index FROM recall_events "
        "WHERE session_id = ? AND checked_at IS NULL ORDER BY id LIMIT 2000",
        (session_id,),
    ).fetchall()
    return [
        _Event(int(a), int(b), int(c) if c is not None else None, int(d)) for a, b, c, d in rows
    ]


def _targets(connection: Connection, ids: Sequence[int]) -> dict[int, Target]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = connection.execute(
        "SELECT d.id, d.docid, d.collection, d.path, d.title, c.doc FROM documents d "
        f"JOIN content c ON c.hash = d.hash WHERE d.id IN ({marks})",
        list(ids),
    ).fetchall()
    return {int(r[0]): target_of(int(r[0]), *(str(v) for v in r[1:])) for r in rows}


def _latest_turn(connection: Connection, session_id: str) -> int | None:
    row = connection.execute(
        "SELECT MAX(turn_index) FROM context_usage WHERE session_id = ? "
        "AND hook_name = 'context-surfacing'",
        (session_id,),
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def apply_feedback(
    connection: Connection,
    session_id: str,
    turns: Sequence[ReplyTurn],
    now: datetime,
    *,
    retry_seconds: float = 5.0,
) -> FeedbackReport:
    """Judge the session's unchecked recall events against the transcript's turns and
    record the verdicts (see the module docstring)."""
    from memtrove.graph.relations import upsert_relation

    events = _pending(connection, session_id)
    if not events:
        return FeedbackReport(0, 0, 0, (), 0, 0)
    prompted = [turn for turn in turns if turn.prompt]
    latest = _latest_turn(connection, session_id)
    targets = _targets(connection, sorted({event.doc_id for event in events}))
    verdicts: dict[int, bool | None] = {}  # event id -> used (None: turn not in the window)
    prepared: dict[int, Reply] = {}
    for event in events:
        position = len(prompted) - 1 - ((latest if latest is not None else 0) - event.turn_index)
        target = targets.get(event.doc_id)
        if latest is None or not 0 <= position < len(prompted) or target is None:
            verdicts[event.event_id] = None
            continue
        if position not in prepared:
            turn = prompted[position]
            prepared[position] = prepare_reply(turn.reply, turn.calls, turn.prompt)
        verdicts[event.event_id] = is_referenced(target, prepared[position])
    stamp = to_iso(now)
    used_docs: dict[int, None] = {}
    pairs: set[tuple[int, int]] = set()
    by_turn: dict[int, set[int]] = {}
    negatives = 0
    with write_transaction(connection, retry_seconds=retry_seconds):
        for event in events:
            verdict = verdicts[event.event_id]
            connection.execute(
                "UPDATE recall_events SET checked_at = ?, was_referenced = ? WHERE id = ?",
                (stamp, NO_VERDICT if verdict is None else int(verdict), event.event_id),
            )
            if verdict is None:
                continue
            connection.execute(
                "INSERT INTO utility_signals (doc_id, surfaced_count, referenced_count, "
                "last_surfaced, last_referenced) VALUES (?, 1, ?, ?, ?) ON CONFLICT (doc_id) "
                "DO UPDATE SET surfaced_count = utility_signals.surfaced_count + 1, "
                "referenced_count = utility_signals.referenced_count + excluded.referenced_count, "
                "last_surfaced = excluded.last_surfaced, last_referenced = "
                "COALESCE(excluded.last_referenced, utility_signals.last_referenced)",
                (event.doc_id, int(verdict), stamp, stamp if verdict else None),
            )
            if verdict:
                used_docs.setdefault(event.doc_id)
                by_turn.setdefault(event.turn_index, set()).add(event.doc_id)
                if event.usage_id is not None:
                    connection.execute(
                        "UPDATE context_usage SET was_referenced = 1 WHERE id = ?",
                        (event.usage_id,),
                    )
            else:
                negatives += 1
                connection.execute(
                    "INSERT INTO recall_stats (doc_id, negative_count) VALUES (?, 1) "
                    "ON CONFLICT (doc_id) DO UPDATE "
                    "SET negative_count = recall_stats.negative_count + 1",
                    (event.doc_id,),
                )
        for doc_id in used_docs:
            connection.execute(
                "UPDATE documents SET access_count = access_count + 1, last_accessed_at = ?, "
                "confidence = CASE WHEN confidence + ? < 1.0 THEN confidence + ? ELSE 1.0 END "
                "WHERE id = ?",
                (stamp, CONFIDENCE_BOOST, CONFIDENCE_BOOST, doc_id),
            )
        for docs in by_turn.values():
            pairs.update(combinations(sorted(docs), 2))
        connection.executemany(
            "INSERT INTO co_activations (doc_a, doc_b, count, last_seen) VALUES (?, ?, 1, ?) "
            "ON CONFLICT (doc_a, doc_b) DO UPDATE SET count = co_activations.count + 1, "
            "last_seen = excluded.last_seen",
            [(a, b, stamp) for a, b in sorted(pairs)],
        )
    for a, b in sorted(pairs):
        upsert_relation(connection, a, b, "usage", 1.0, {"source": "feedback-loop"})
    referenced = sum(1 for verdict in verdicts.values() if verdict)
    unaligned = sum(1 for verdict in verdicts.values() if verdict is None)
    used = tuple(f"{targets[d].collection}/{targets[d].path}" for d in used_docs if d in targets)
    return FeedbackReport(len(events), referenced, negatives, used, len(pairs), unaligned)
