"""``memory_retrieve``'s router: which retrieval mode a query asks for, by regular expressions.

The classifier follows the reference product's ``classifyRetrievalMode``: checked in order,
the first signal wins::

    timeline   last session, yesterday, handoff, what did we do, earlier today, ...
    causal     why did / what caused / reason for / trade-off / instead of / a leading "why"
    discovery  similar to, related to, what else, explore, ideas for, ...
    complex    several questions at once (two or more "?"), compare / versus / difference between
    keyword    a short query (< 50 characters) naming a CAPS identifier, a file name or a
               configuration word (config, setting, env var, flag, port, version, ...)
    semantic   how does / explain / concept / overview / understand / what is the purpose
    hybrid     everything else

Every mode runs (``vault.intent.retrieve``): ``keyword`` is BM25, ``semantic`` vectors (BM25 when
they find nothing), ``hybrid`` BM25 and vectors fused; ``causal`` is ``intent_search`` as a
WHY question (vector-weighted fusion and graph traversal), ``timeline`` a real timeline
(documents in time order and the sessions of the window the question names, else of the
last session; :mod:`memtrove.retrieval.temporal_timeline`), ``discovery`` ``intent_search`` as an ENTITY question (balanced fusion, then traversal to
what the top results link to), and ``complex`` ``query_plan`` (sub-queries merged).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memtrove.errors import InvalidQueryError

__all__ = [
    "MODES",
    "MODE_INTENTS",
    "ROUTED_MODES",
    "RUNNABLE_MODES",
    "Route",
    "classify_retrieval_mode",
    "route",
]

MODES: tuple[str, ...] = (
    "auto",
    "keyword",
    "semantic",
    "causal",
    "timeline",
    "discovery",
    "complex",
    "hybrid",
)
RUNNABLE_MODES: tuple[str, ...] = MODES[1:]
# the modes that are more than a search: REST ``/retrieve`` runs ``query`` for the others
ROUTED_MODES: tuple[str, ...] = ("causal", "timeline", "discovery", "complex")
# what intent_search is asked for by the modes it runs
MODE_INTENTS: dict[str, str] = {"causal": "WHY", "discovery": "ENTITY"}

_TIMELINE = re.compile(
    r"\b(?:last session|yesterday|prior session|previous session|last time we|handoff|"
    r"what happened last|what did we do|cross.session|earlier today|this morning|"
    r"what we discussed|when we last)\b",
    re.IGNORECASE,
)
_CAUSAL = re.compile(
    r"\b(?:why did|why was|why were|what caused|what led to|reason for|decided to|"
    r"decision about|trade.?off|instead of|chose to|because we)\b",
    re.IGNORECASE,
)
_CAUSAL_PREFIX = re.compile(r"^\s*why\b", re.IGNORECASE)
_DISCOVERY = re.compile(
    r"\b(?:similar to|related to|relates to|what else|anything else|explore|brainstorm|"
    r"ideas? (?:for|about)|other (?:notes|docs|documents) (?:on|about))\b",
    re.IGNORECASE,
)
_COMPLEX = re.compile(
    r"\b(?:compare|comparison|versus|vs\.?|difference between|differences between|"
    r"pros and cons)\b",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")
_FILE_NAME = re.compile(r"(?<![\w-])[\w-]+\.[A-Za-z]\w{1,3}\b")  # from a word's start: linear
_CONFIG_WORD = re.compile(
    r"\b(?:config|configuration|configured|setting|settings|env|environment variable|"
    r"flag|option|port|version|yaml|toml|json)\b",
    re.IGNORECASE,
)
_SEMANTIC = re.compile(
    r"\b(?:how does|how do|explain|concept|overview|understand|what is the purpose)\b",
    re.IGNORECASE,
)
_KEYWORD_MAX_CHARS = 50


@dataclass(frozen=True)
class Route:
    """How ``memory_retrieve`` answers a query.

    ``requested`` is the mode asked for (``auto`` by default); ``classified`` the mode the
    query asks for (the request itself unless it was ``auto``); ``mode`` the mode that runs
    (the classified one); ``note`` explains a fallback, else is empty.
    """

    requested: str
    classified: str
    mode: str
    note: str = ""


def classify_retrieval_mode(query: str) -> str:
    """The retrieval mode a query's wording asks for (see the module docstring)."""
    text = query.strip()
    if _TIMELINE.search(text):
        return "timeline"
    if _CAUSAL.search(text) or _CAUSAL_PREFIX.search(text):
        return "causal"
    if _DISCOVERY.search(text):
        return "discovery"
    if text.count("?") >= 2 or _COMPLEX.search(text):
        return "complex"
    if len(text) < _KEYWORD_MAX_CHARS and (
        _IDENTIFIER.search(text) or _FILE_NAME.search(text) or _CONFIG_WORD.search(text)
    ):
        return "keyword"
    if _SEMANTIC.search(text):
        return "semantic"
    return "hybrid"


def route(query: str, mode: str = "auto") -> Route:
    """Pick the mode to run; a mode not in :data:`MODES` is an :class:`InvalidQueryError`."""
    requested = mode.strip().lower()
    if requested not in MODES:
        raise InvalidQueryError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    classified = classify_retrieval_mode(query) if requested == "auto" else requested
    return Route(requested, classified, classified)
