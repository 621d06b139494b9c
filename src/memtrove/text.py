"""Text helpers shared by the indexer and the searchers: words, CJK segmentation, time.

SQLite's ``unicode61`` tokenizer keeps a run of Chinese, Japanese or Korean characters as
one token, so a word inside a sentence could never match. Both sides therefore put spaces
between CJK characters: the indexer before text reaches FTS5, the query builder when it
turns CJK runs into phrases of single characters (bigram phrases for longer runs). This
finds two-character words, which a trigram index cannot.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from datetime import UTC, date, datetime
from typing import Any

from memtrove.patterns import LazyPattern

__all__ = [
    "MAX_MESSAGE_CHARS",
    "STOPWORDS",
    "error_line",
    "is_cjk",
    "is_written_name",
    "iso_from_timestamp",
    "now_iso",
    "parse_iso_datetime",
    "scrub",
    "scrub_json",
    "segment_cjk",
    "sha256_hex",
    "shown_path",
    "to_iso",
    "words",
]


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in hex, as ``hashlib.sha256`` gives it. Importing hashlib loads
    OpenSSL (~2-4 ms of a hook's start); CPython's own SHA-2 module, when it is built in,
    costs a third of that, and hashlib stands in when it is not."""
    global _sha256
    if _sha256 is None:
        try:
            from _sha2 import sha256 as found  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            try:
                from _sha256 import sha256 as found  # type: ignore[import-not-found, no-redef, unused-ignore]
            except ImportError:
                from hashlib import sha256 as found  # type: ignore[assignment, unused-ignore]
        _sha256 = found
    return str(_sha256(data).hexdigest())


_sha256: Any = None


# Han (with extensions and compatibility), Hiragana, Katakana, Hangul syllables and jamo,
# Bopomofo, CJK punctuation is excluded on purpose (it separates tokens).
_CJK_RANGES = (
    "\u1100-\u11ff"
    "\u3040-\u309f"
    "\u30a0-\u30ff"
    "\u3100-\u312f"
    "\u3130-\u318f"
    "\u31f0-\u31ff"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\uac00-\ud7af"
    "\uf900-\ufaff"
    "\uff66-\uff9f"
    "\U00020000-\U0002fa1f"
)


@functools.cache
def _cjk(run: bool) -> re.Pattern[str]:
    """The CJK character class (or a run of it), compiled on first use: it takes ~9 ms,
    and most processes only ever see ASCII."""
    return re.compile(f"[{_CJK_RANGES}]+" if run else f"[{_CJK_RANGES}]")


# A word: letters, digits and combining marks (so Devanagari or Thai vowel signs stay inside
# their word, as they do for unicode61). \w covers letters and digits but not every mark.
_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f\u0900-\u0dff\u0e00-\u0eff\u1ab0-\u1aff])+")

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each else few for
    from further had has have having he her here hers herself him himself his how i if in into
    is it its itself just me more most my myself no nor not now of off on once only or other
    ought our ours ourselves out over own same shall she should so some such than that the
    their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t d ll m re ve don doesn didn isn aren wasn weren won wouldn
    shouldn couldn hasn haven hadn let lets us ever get got
    """.split()
)


def is_cjk(character: str) -> bool:
    return not character.isascii() and bool(_cjk(False).match(character))


def segment_cjk(text: str) -> str:
    """Surround every CJK character with spaces so FTS5 indexes each one as a token."""
    if text.isascii() or not _cjk(False).search(text):  # isascii: one pass in C, no regex
        return text
    return _cjk(True).sub(lambda match: " " + " ".join(match.group(0)) + " ", text)


def words(text: str) -> list[str]:
    """Lowercased words of ``text`` (no CJK splitting; see :func:`segment_cjk`). NFKC can
    turn one character into several with a space among them (an Arabic ligature becomes
    ``" ٌّ"``), so normalized words are split again on whitespace."""
    return [
        part
        for word in _WORD.findall(text)
        for part in unicodedata.normalize("NFKC", word).lower().split()
    ]


def now_iso() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return to_iso(datetime.now(UTC))


def to_iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    # Not strftime("%Y"): glibc does not zero-pad years before 1000 ("999-01-01"), which
    # would neither parse back nor sort with the other timestamps.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )


def iso_from_timestamp(seconds: float) -> str:
    return to_iso(datetime.fromtimestamp(seconds, UTC))


def parse_iso_datetime(value: object) -> str | None:
    """Normalise a date, datetime or ISO-8601 string to UTC ISO; None when unparseable."""
    # OverflowError: a moment near year 1 or 9999 whose UTC equivalent leaves datetime's range.
    try:
        if isinstance(value, datetime):
            return to_iso(value)
        if isinstance(value, date):
            return to_iso(datetime(value.year, value.month, value.day, tzinfo=UTC))
    except OverflowError:
        return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        return to_iso(datetime.fromisoformat(text))
    except (ValueError, OverflowError):
        return None


_SURROGATE = LazyPattern("[\ud800-\udfff]")
# A collection name config.yaml may hold (``collection add`` asks for less: see
# memtrove.config): nothing that reads as a path (``a/b``, ``../etc``) or is empty, so
# ``collection/path`` references stay whole.
_WRITTEN_NAME = LazyPattern(r"[^./\\\x00-\x1f\x7f][^/\\\x00-\x1f\x7f]{0,199}")


def is_written_name(name: str) -> bool:
    """Whether ``name`` may name a collection in config.yaml or an import."""
    return bool(_WRITTEN_NAME.fullmatch(name))


def is_inside_path(path: str) -> bool:
    """Whether ``path`` names a file inside a collection: relative, forward slashes, no
    ``..``, no empty part, no NUL (``collection/path`` references and folders stay whole)."""
    parts = path.split("/")
    return not (
        path.startswith("/") or "\\" in path or "\x00" in path or ".." in parts or "" in parts
    )


MAX_MESSAGE_CHARS = 600


def shown_path(path: str, most: int = 200) -> str:
    """``path`` for a message: a path of any length is no more than ``most`` characters."""
    return path if len(path) <= most else f"{path[: most // 2]}…{path[-most // 2 :]}"


def error_line(message: str, most: int = MAX_MESSAGE_CHARS) -> str:
    """``message`` as one line of at most ``most`` characters: an error that quotes what it
    was given (a path, a docid, a direction) may be handed a megabyte of it."""
    text = " ".join(message.split()) or "error"
    if len(text) <= most:
        return text
    tail = most // 5
    return f"{text[: most - tail - 1]}…{text[-tail:]}"


def scrub(text: str) -> str:
    """``text`` with lone surrogates (unencodable halves of a UTF-16 pair, which JSON's
    ``\\ud800`` escapes can produce) replaced by U+FFFD, so it can be stored, embedded and
    sent back as UTF-8. Every other character is kept."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text


def scrub_json(value: Any) -> Any:
    """:func:`scrub` applied to every string (keys too) of a decoded JSON value."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_json(item) for item in value]
    if isinstance(value, dict):
        return {scrub_json(key): scrub_json(item) for key, item in value.items()}
    return value
