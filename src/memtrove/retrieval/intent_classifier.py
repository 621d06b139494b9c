"""Intent classification for ``intent_search``: WHY, WHEN, ENTITY or WHAT.

A heuristic runs first (wording: "why did", "what caused", "when did", "who", a named
component...). When its confidence is below :data:`HEURISTIC_CONFIDENT` (0.8) and an LLM is
configured, the LLM decides; its answer is cached for an hour in ``intent_classifications``
(keyed by the query's hash). A failed or unparseable LLM answer falls back to the heuristic
and is not cached. WHEN questions that name a time ("in March 2024", "last week",
"2023-05-01") carry ``temporal_start``/``temporal_end``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from memtrove.db.connection import Connection, write_unless_locked
from memtrove.errors import InvalidQueryError, ModelError
from memtrove.models.protocols import LLM
from memtrove.retrieval.temporal import MONTHS
from memtrove.text import sha256_hex, to_iso

__all__ = [
    "CACHE_SECONDS",
    "HEURISTIC_CONFIDENT",
    "INTENTS",
    "IntentClassification",
    "check_intent",
    "classify_heuristic",
    "classify_intent",
    "parse_llm_intent",
    "temporal_window",
]

INTENTS: tuple[str, ...] = ("WHY", "WHEN", "ENTITY", "WHAT")
HEURISTIC_CONFIDENT = 0.8
CACHE_SECONDS = 3600
PROMPT_VERSION = "intent-v1"


@dataclass(frozen=True)
class IntentClassification:
    """What a query asks for; ``source`` is ``heuristic``, ``llm``, ``cache`` or ``forced``."""

    intent: str
    confidence: float
    source: str
    temporal_start: str | None = None
    temporal_end: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "confidence": round(self.confidence, 3),
            "source": self.source,
            "temporal_start": self.temporal_start,
            "temporal_end": self.temporal_end,
        }


def check_intent(intent: str | None) -> str | None:
    """A ``force_intent`` value upper-cased, or None; anything else is refused."""
    if intent is None:
        return None
    if not isinstance(intent, str) or intent.strip().upper() not in INTENTS:
        raise InvalidQueryError(f"force_intent must be one of {', '.join(INTENTS)}, got {intent!r}")
    return intent.strip().upper()


# -- the heuristic ---------------------------------------------------------------------------

_WHY_STRONG = re.compile(
    r"^\s*why\b|\b(?:why did|why was|why were|why do|why does|why is|why are|what caused|"
    r"what led to|reason for|reasons for|reasoning behind|rationale|motivation for|"
    r"decided to|decision to|root cause)\b",
    re.IGNORECASE,
)
_WHY_WEAK = re.compile(r"\b(?:because|cause|caused|led to|trade.?off|instead of)\b", re.I)
_WHEN_STRONG = re.compile(
    r"^\s*when\b|\b(?:when did|when was|when were|when is|what date|which date|what day|"
    r"what time|how long ago|since when|first time|last time|timeline|at what point)\b",
    re.IGNORECASE,
)
_ENTITY_STRONG = re.compile(
    r"^\s*who\b|\b(?:who is|who was|who are|who owns|who wrote|who maintains|whose|"
    r"what do we know about|tell me about|everything about|owner of|owned by|works on)\b",
    re.IGNORECASE,
)
_NAMED = re.compile(r"`[^`\n]{2,60}`|@\w{2,}|\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b|\b[A-Z]{2,}\w*\b")
_CAPITALISED = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_WHAT_STRONG = re.compile(
    r"^\s*(?:what is|what are|what does|how do|how does|how to|how can|explain|list|show)\b",
    re.IGNORECASE,
)


def classify_heuristic(query: str, today: date | None = None) -> IntentClassification:
    """The heuristic's intent and confidence (>= 0.8 only on clear wording)."""
    text = query.strip()
    window = temporal_window(text, today or datetime.now(UTC).date())
    if _WHY_STRONG.search(text):
        return IntentClassification("WHY", 0.9, "heuristic")
    if _WHEN_STRONG.search(text):
        return _when(0.9, window)
    if _ENTITY_STRONG.search(text):
        return IntentClassification("ENTITY", 0.85, "heuristic")
    if _WHY_WEAK.search(text):
        return IntentClassification("WHY", 0.6, "heuristic")
    if window is not None:
        return _when(0.7, window)
    if _NAMED.search(text) or _CAPITALISED.search(text):
        return IntentClassification("ENTITY", 0.55, "heuristic")
    if _WHAT_STRONG.search(text):
        return IntentClassification("WHAT", 0.8, "heuristic")
    return IntentClassification("WHAT", 0.5, "heuristic")


def _when(confidence: float, window: tuple[str, str] | None) -> IntentClassification:
    start, end = window if window else (None, None)
    return IntentClassification("WHEN", confidence, "heuristic", start, end)


_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(
    r"\b(?:in|during|since|by|of)\s+(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")"
    r"\b\.?(?:\s+(\d{4}))?",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d{2})\b", re.IGNORECASE)
_RELATIVE = re.compile(
    r"\b(yesterday|today|last week|this week|last month|this month|last year|this year)\b",
    re.IGNORECASE,
)


def temporal_window(query: str, today: date) -> tuple[str, str] | None:
    """The dates a query names, as an inclusive (start, end) pair of ``YYYY-MM-DD``."""
    match = _ISO_DATE.search(query)
    if match:
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
        return day.isoformat(), day.isoformat()
    match = _MONTH_YEAR.search(query)
    if match and not (match[1].lower() == "may" and match[2] is None):
        month = MONTHS[match[1].lower()]
        year = int(match[2]) if match[2] else today.year
        if not match[2] and month > today.month:
            year -= 1  # "in March", asked in January, means last March
        first = date(year, month, 1)
        following = date(year + (month == 12), month % 12 + 1, 1)
        return first.isoformat(), (following - timedelta(days=1)).isoformat()
    match = _YEAR.search(query)
    if match:
        return f"{match[1]}-01-01", f"{match[1]}-12-31"
    match = _RELATIVE.search(query)
    if match is None:
        return None
    word = match[1].lower()
    if word in ("today", "yesterday"):
        day = today - timedelta(days=word == "yesterday")
        return day.isoformat(), day.isoformat()
    if word.endswith("week"):
        monday = today - timedelta(days=today.weekday())
        start = monday - timedelta(days=7) if word.startswith("last") else monday
        return start.isoformat(), (start + timedelta(days=6)).isoformat()
    if word.endswith("month"):
        first = today.replace(day=1)
        if word.startswith("last"):
            end = first - timedelta(days=1)
            return end.replace(day=1).isoformat(), end.isoformat()
        return first.isoformat(), today.isoformat()
    year = today.year - word.startswith("last")
    return f"{year}-01-01", f"{year}-12-31"


# -- the LLM and its cache -------------------------------------------------------------------

_PROMPT = """Classify the intent of this memory search query as exactly one of:
WHY (asks for reasons, causes, decisions behind something), WHEN (asks for a time, date or
order of events), ENTITY (asks about a named person, component, service or project across
notes), WHAT (a general factual question).
Answer with JSON only: {{"intent": "WHY|WHEN|ENTITY|WHAT", "confidence": 0.0-1.0}}
Query: {query}"""
_JSON = re.compile(r"\{[^{}]*\}", re.DOTALL)


def parse_llm_intent(answer: str) -> tuple[str, float] | None:
    """(intent, confidence) from an LLM answer (JSON, maybe in a fence), else None."""
    if not isinstance(answer, str):
        return None
    for match in _JSON.finditer(answer):
        try:
            data = json.loads(match.group(0))
        except (ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        intent = str(data.get("intent", "")).strip().upper()
        confidence = data.get("confidence", 0.7)
        if intent not in INTENTS:
            continue
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
            confidence = 0.7
        return intent, max(0.0, min(1.0, float(confidence)))
    return None


def _query_hash(query: str) -> str:
    return sha256_hex(f"{PROMPT_VERSION}\x00{query.strip().lower()}".encode())


def _cached(connection: Connection, key: str, now: datetime) -> IntentClassification | None:
    row = connection.execute(
        "SELECT intent, confidence, temporal_start, temporal_end, cached_at "
        "FROM intent_classifications WHERE query_hash = ?",
        (key,),
    ).fetchone()
    if row is None or str(row[0]) not in INTENTS:
        return None
    try:
        cached_at = datetime.fromisoformat(str(row[4]).replace("Z", "+00:00"))
    except ValueError:
        return None
    if cached_at.tzinfo is None:
        cached_at = cached_at.replace(tzinfo=UTC)
    if (now - cached_at).total_seconds() > CACHE_SECONDS:
        return None
    start = str(row[2]) if row[2] is not None else None
    end = str(row[3]) if row[3] is not None else None
    return IntentClassification(str(row[0]), float(row[1]), "cache", start, end)


def _store(connection: Connection, key: str, found: IntentClassification, now: datetime) -> None:
    """Cache one answer; a locked vault skips the write (the answer is still used)."""
    write_unless_locked(
        connection,
        lambda: connection.execute(
            "INSERT INTO intent_classifications "
            "(query_hash, intent, confidence, temporal_start, temporal_end, cached_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (query_hash) DO UPDATE SET "
            "intent = excluded.intent, confidence = excluded.confidence, "
            "temporal_start = excluded.temporal_start, temporal_end = excluded.temporal_end, "
            "cached_at = excluded.cached_at",
            (
                key,
                found.intent,
                found.confidence,
                found.temporal_start,
                found.temporal_end,
                to_iso(now),
            ),
        ),
    )


def classify_intent(
    connection: Connection,
    query: str,
    llm: LLM | None = None,
    *,
    now: datetime | None = None,
    warnings: list[str] | None = None,
) -> IntentClassification:
    """Heuristic first; the LLM (cached an hour) when the heuristic is unsure."""
    now = now or datetime.now(UTC)
    guess = classify_heuristic(query, now.date())
    if guess.confidence >= HEURISTIC_CONFIDENT or llm is None:
        return guess
    key = _query_hash(query)
    cached = _cached(connection, key, now)
    if cached is not None:
        return cached
    try:
        answer = llm.complete(_PROMPT.format(query=query[:2000]), max_tokens=60, temperature=0.0)
    except ModelError as error:
        if warnings is not None:
            warnings.append(f"intent classification by the LLM failed, used the heuristic: {error}")
        return guess
    parsed = parse_llm_intent(answer)
    if parsed is None:
        if warnings is not None:
            warnings.append("the LLM's intent answer was not understood; used the heuristic")
        return guess
    intent, confidence = parsed
    window = temporal_window(query, now.date()) if intent == "WHEN" else None
    found = IntentClassification(
        intent, confidence, "llm", window[0] if window else None, window[1] if window else None
    )
    _store(connection, key, found, now)
    return found
