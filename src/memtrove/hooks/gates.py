"""The pre-retrieval gates of ``context-surfacing``: which prompts are not worth a search.

Pure functions over the raw prompt. In the hook they run in this order (the first that
matches wins): empty or short without memory intent, slash command, the retrieval gate
(greetings, shell verbs, affirmations, continuations, emoji, pings, very short
non-questions), heartbeat; the prompt dedupe needs the vault and runs last, in the hook.

Two deliberate departures from the reference implementation, both to stop legitimate
questions being dropped: heartbeat phrases match whole words ("ping" no longer matches
"shipping" or "mapping"), and a prompt that opens with a path ("/srv/app/main.py fails")
is not a slash command (a command is ``/name`` with no second slash in its first word).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memtrove.patterns import LazyPattern

__all__ = [
    "DEFAULT_HEARTBEAT_PATTERNS",
    "MAX_QUERY_LENGTH",
    "MIN_PROMPT_LENGTH",
    "gate_prompt",
    "has_memory_intent",
    "is_heartbeat",
    "is_slash_command",
    "normalize_prompt",
    "should_skip_retrieval",
]

MIN_PROMPT_LENGTH = 20
MAX_QUERY_LENGTH = 10_000

_FORCE_INTENT = (
    LazyPattern(r"\b(?:remember|recall|forgot|memory|memories)\b", re.I),
    LazyPattern(r"\b(?:last time|before|previously|earlier|yesterday|ago)\b", re.I),
    LazyPattern(r"\bmy (?:name|email|phone|address|birthday|preference)s?\b", re.I),
    LazyPattern(r"\b(?:what did (?:i|we)|did i (?:tell|say|mention))\b", re.I),
    # picking up the last session: "where were we?", "continue", "left off"
    LazyPattern(
        r"\b(?:where (?:were we|was i|did (?:we|i) leave off)|left off|pick up where"
        r"|continue from)\b",
        re.I,
    ),
)

_SKIP = (
    # greetings and pleasantries
    LazyPattern(
        r"^(?:hi|hello|hey|good\s*(?:morning|afternoon|evening|night)|greetings|yo|sup|howdy"
        r"|what'?s up)\b",
        re.I,
    ),
    # shell and dev verbs (slash commands are a gate of their own)
    LazyPattern(
        r"^(?:run|build|test|ls|cd|git|npm|pip|docker|curl|cat|grep|find|make|sudo|bun|node"
        r"|deno)\b",
        re.I,
    ),
    # affirmations and negations
    LazyPattern(
        r"^(?:yes|no|yep|nope|ok|okay|sure|fine|thanks|thank you|thx|ty|got it|understood"
        r"|cool|nice|great|good|perfect|awesome)\s*[.!]?$",
        re.I,
    ),
    # continuations
    LazyPattern(r"^(?:go ahead|continue|proceed|do it|start|begin|next)\s*[.!]?$", re.I),
    # single-word pings
    LazyPattern(r"^(?:ping|pong|test|debug)\s*[.!?]?$", re.I),
)

# Pictographs, dingbats, flags, variation selectors and joiners: a prompt of nothing else.
_EMOJI_ONLY = LazyPattern(
    "^[\\s\u200d\ufe0f\u20e3\u2190-\u21ff\u2300-\u23ff\u2460-\u27bf\u2900-\u297f"
    "\u2b00-\u2bff\u3030\u303d\u3297\u3299\U0001f000-\U0001faff\U000e0020-\U000e007f]+$"
)
_CJK = LazyPattern("[\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af]")

# Wrappers other agents put around a user's text (OpenClaw metadata, cron, timestamps).
_METADATA = LazyPattern(
    r"^(?:Conversation info|Sender) \(untrusted metadata\):.*?\n\s*\n", re.I | re.M | re.S
)
_CRON = LazyPattern(r"^\[cron:[^\]]+\]\s*", re.I)
_TIMESTAMP = LazyPattern(r"^\[[A-Za-z]{3}\s\d{4}-\d{2}-\d{2}\s\d{2}:\d{2}\s[^\]]+\]\s*")

DEFAULT_HEARTBEAT_PATTERNS: tuple[str, ...] = (
    "heartbeat",
    "health check",
    "keepalive",
    "keep-alive",
    "status check",
    "are you alive",
    "still alive",
    "ping",
    "pong",
)


def normalize_prompt(prompt: str) -> str:
    """The prompt without the metadata, cron and timestamp wrappers of other agents."""
    text = prompt.strip()
    if "untrusted metadata" in text.lower():  # each pattern compiled only when it can match
        text = _METADATA.sub("", text).strip()
    if text.startswith("["):
        text = _CRON.sub("", text).strip()
    if text.startswith("["):
        text = _TIMESTAMP.sub("", text).strip()
    return text


def has_memory_intent(prompt: str) -> bool:
    """Whether the prompt asks about memory (remember, last time, my name, what did we ...)."""
    return any(pattern.search(prompt) for pattern in _FORCE_INTENT)


def is_slash_command(prompt: str) -> bool:
    """``/compact``, ``/review now``: a leading ``/name`` whose first word has one slash."""
    text = prompt.lstrip()
    if not text.startswith("/"):
        return False
    first_word = text.split(maxsplit=1)[0]
    return "/" not in first_word[1:]


def should_skip_retrieval(prompt: str) -> bool:
    """The retrieval gate: greetings, shell verbs, affirmations, continuations, emoji,
    pings, and very short non-questions (under 15 characters, 6 for CJK) are skipped;
    a prompt with memory intent never is."""
    text = normalize_prompt(prompt)
    if has_memory_intent(text):
        return False
    if len(text) < 5:
        return True
    # Emoji alone: never with a letter or digit in it (the check skips compiling the
    # pattern, whose ranges cost ~1 ms, for almost every prompt).
    emoji_only = not any(c.isalnum() for c in text) and _EMOJI_ONLY.match(text) is not None
    if emoji_only or (_may_skip(text) and any(pattern.search(text) for pattern in _SKIP)):
        return True
    if len(text) >= 15:
        return False
    minimum = 6 if _CJK.search(text) else 15
    return len(text) < minimum and "?" not in text and "\uff1f" not in text


# Every _SKIP pattern starts with one of these words: a prompt starting otherwise needs
# none of them compiled.
_SKIP_FIRST_WORDS = frozenset(
    """
    hi hello hey good goodmorning goodafternoon goodevening goodnight greetings yo sup howdy
    what whats run build test ls cd git npm pip docker curl cat grep find make sudo bun
    node deno yes no yep nope ok okay sure fine thanks thank thx ty got understood cool nice
    great perfect awesome go continue proceed do start begin next ping pong debug
    """.split()
)


def _may_skip(text: str) -> bool:
    """Whether ``text`` starts with a word some _SKIP pattern starts with."""
    end = 0
    while end < len(text) and end < 20 and text[end].isalpha():
        end += 1
    return text[:end].casefold() in _SKIP_FIRST_WORDS


def _heartbeat_pattern(phrases: Iterable[str]) -> re.Pattern[str]:
    alternatives = sorted({p.strip().lower() for p in phrases if p.strip()}, key=len, reverse=True)
    body = "|".join(r"\s+".join(map(re.escape, phrase.split())) for phrase in alternatives)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.I)


_DEFAULT_HEARTBEAT = _heartbeat_pattern(DEFAULT_HEARTBEAT_PATTERNS)


def is_heartbeat(prompt: str, extra_patterns: Iterable[str] = ()) -> bool:
    """Whether the prompt is a keep-alive ping (the default phrases plus ``extra_patterns``,
    from ``MEMTROVE_HEARTBEAT_PATTERNS``), matched as whole words."""
    extra = tuple(extra_patterns)
    pattern = _heartbeat_pattern(DEFAULT_HEARTBEAT_PATTERNS + extra) if extra else None
    return (pattern or _DEFAULT_HEARTBEAT).search(prompt) is not None


def gate_prompt(
    prompt: str, *, heartbeat_suppression: bool = True, heartbeat_patterns: Iterable[str] = ()
) -> tuple[str, str | None]:
    """Run the pre-retrieval gates that need no vault.

    Returns the prompt to work with (trimmed, cut to MAX_QUERY_LENGTH) and the name of the
    gate that stops it (``empty``, ``short``, ``slash-command``, ``retrieval-gate``,
    ``heartbeat``), or None when the prompt goes on to the dedupe check and retrieval.
    """
    text = prompt.strip()
    if not text:
        return text, "empty"
    if len(text) < MIN_PROMPT_LENGTH and not has_memory_intent(text):
        return text, "short"
    text = text[:MAX_QUERY_LENGTH]
    if is_slash_command(text):
        return text, "slash-command"
    if should_skip_retrieval(text):
        return text, "retrieval-gate"
    if heartbeat_suppression and is_heartbeat(text, heartbeat_patterns):
        return text, "heartbeat"
    return text, None
