"""The spelling redaction matches against: one canonical form of a text, and the way back.

A secret can be written so that no pattern sees it and a reader (or the injection guard,
which drops invisible characters later) still does: ``pass\\u200bword=...``, a fullwidth
``ＰＡＳＳＷＯＲＤ``, ``p&#97;ssword``, ``%73k-ant-...``, or a key split by a zero-width
space. :func:`normalise` undoes that before the patterns run:

- escapes are decoded: ``\\uXXXX``, ``\\UXXXXXXXX``, ``\\xNN``, runs of ``%XX`` (as UTF-8)
  and HTML character references (``&#97;``, ``&#x61;``, ``&amp;``);
- invisible characters are dropped: format characters (zero-width space and joiners, the
  word joiner and invisible operators, the byte order mark, the soft hyphen, bidi
  controls, tag characters), variation selectors and the Hangul fillers;
- every other character is folded to NFKC (fullwidth letters, ligatures, superscripts).

Each changed piece remembers the characters of the original it came from, so a finding in
the canonical text becomes a span of the original (:meth:`Normalised.span`): what is
stored is the original text with the secret's whole original spelling taken out.

Most notes have nothing to change: an ASCII text whose ``\\``, ``%`` and ``&`` (if any)
start no escape, or a text whose characters NFKC keeps and that holds no invisible one,
is answered None after a few substring searches; only the pieces that change are rebuilt.
"""

from __future__ import annotations

import re
import sys
import unicodedata

from memtrove.security.patterns import LazyPattern

__all__ = ["Normalised", "normalise"]

# Escapes, and runs of characters outside ASCII (each run is folded as a whole when NFKC
# leaves it unchanged and it holds nothing invisible, which is the usual case). Each has
# its own literal-led expression, run only when its first character occurs: one
# alternation of all of them tries every alternative at every character, several times
# slower over a long note. Compiled on first use, like the shapes: a hook process that
# never meets an escape never pays for them.
_PERCENT = LazyPattern(r"%[0-9a-fA-F]{2}(?:%[0-9a-fA-F]{2})*")
_ENTITY = LazyPattern(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_BACKSLASH = LazyPattern(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\x([0-9a-fA-F]{2})")
_NON_ASCII = LazyPattern(r"[^\x00-\x7f]+")
_COMMON_INVISIBLE = tuple(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u180f"
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u206a\u206b\u206c\u206d"
    "\u206e\u206f\u3164\ufe00\ufe01\ufe02\ufe03\ufe04\ufe05\ufe06\ufe07\ufe08\ufe09"
    "\ufe0a\ufe0b\ufe0c\ufe0d\ufe0e\ufe0f\ufeff\uffa0\ufff9\ufffa\ufffb"
)
_WIDE_BASE = sys.getsizeof("\U00010000") - 4
_INVISIBLE = LazyPattern(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


class Normalised:
    """A text in its canonical spelling; ``starts`` (in the canonical text) and ``origins``
    (``(canonical end, original start, original end)``) describe each changed piece. A
    plain class: a dataclass costs a hook process a few hundred microseconds to create."""

    __slots__ = ("origins", "starts", "text")

    def __init__(
        self, text: str, starts: tuple[int, ...], origins: tuple[tuple[int, int, int], ...]
    ) -> None:
        self.text = text
        self.starts = starts
        self.origins = origins

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span holding the canonical ``[start, end)``: whole changed pieces
        at either edge, so no part of a secret's spelling stays behind."""
        return self._position(start, low=True), self._position(end - 1, low=False)

    def _position(self, index: int, *, low: bool) -> int:
        from bisect import bisect_right  # only a text that had something to fold

        piece = bisect_right(self.starts, index) - 1
        if piece < 0:  # before the first change: the same position
            return index if low else index + 1
        piece_end, original_start, original_end = self.origins[piece]
        if index < piece_end:  # inside a changed piece: all of it
            return original_start if low else original_end
        # after the piece, where the texts agree again (shifted by the piece's difference)
        position = original_end + (index - piece_end)
        return position if low else position + 1


def _decoded(match: re.Match[str]) -> str | None:
    """What an escape stands for, or None when it stands for nothing safely decodable."""
    whole = match.group()
    if whole[0] == "\\":
        code = int(match.group(match.lastindex or 1), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return None  # a surrogate half: kept as written
        return chr(code)
    if whole[0] == "%":
        try:
            return bytes.fromhex(whole.replace("%", "")).decode("utf-8")
        except UnicodeDecodeError:
            return None
    import html  # its table of entities is only loaded by a text that has one

    decoded = html.unescape(whole)
    return None if decoded == whole else decoded


def _fold(text: str) -> str:
    """NFKC of every character, and the invisible ones dropped (per character, so a
    letter and a combining mark after it are never merged into one)."""
    text = _INVISIBLE.sub("", text)
    if unicodedata.is_normalized("NFKC", text):
        return text
    return "".join(unicodedata.normalize("NFKC", char) for char in text)


def _foldable(text: str) -> bool:
    """Whether a text outside ASCII has anything NFKC or dropping invisible characters
    would change. A search through every character costs more than the rest of redaction
    together, so the cheap questions come first: NFKC's quick check, a substring search
    for each common invisible character, and the rare ones (tags, which need characters
    beyond the Basic Multilingual Plane) only in a text that has such characters at all."""
    if not unicodedata.is_normalized("NFKC", text):
        return True
    if any(char in text for char in _COMMON_INVISIBLE):
        return True
    return _astral(text) and _INVISIBLE.search(text) is not None


def _astral(text: str) -> bool:
    """Whether ``text`` holds a character beyond U+FFFF: CPython stores such a text with
    four bytes a character, which its size says at no cost."""
    try:
        return sys.getsizeof(text) >= _WIDE_BASE + 4 * len(text)
    except TypeError:  # an interpreter without object sizes: ask the long way
        return True


def _escapes(text: str) -> list[re.Match[str]]:
    found: list[re.Match[str]] = []
    if "%" in text:
        found.extend(_PERCENT.finditer(text))
    if "&" in text:
        found.extend(_ENTITY.finditer(text))
    if "\\" in text:
        found.extend(_BACKSLASH.finditer(text))
    return found


def _pieces(found: list[re.Match[str]]) -> list[re.Match[str]]:
    """``found`` in order, none overlapping an earlier one."""
    found.sort(key=lambda match: match.start())
    pieces: list[re.Match[str]] = []
    end = 0
    for match in found:
        if match.start() >= end:
            pieces.append(match)
            end = match.end()
    return pieces


def normalise(text: str) -> Normalised | None:
    """``text`` in its canonical spelling, or None when that is ``text`` itself."""
    found = _escapes(text)
    if not text.isascii() and _foldable(text):
        found.extend(_NON_ASCII.finditer(text))
    if not found:
        return None  # the usual note: nothing to decode, nothing to fold
    parts: list[str] = []
    starts: list[int] = []
    origins: list[tuple[int, int, int]] = []
    length = 0  # of the canonical text so far
    position = 0  # in the original
    for match in _pieces(found):
        run = match.group() if match.re is _NON_ASCII.compiled else None
        if run is not None:
            replacement = _fold(run)
            if replacement == run:
                continue
        else:
            decoded = _decoded(match)
            if decoded is None:
                continue
            replacement = _fold(decoded)
        start, end = match.span()
        parts.append(text[position:start])
        length += start - position
        if run is not None and replacement:
            # A run of letters: fold each character on its own, so a change in one does
            # not widen a finding to the whole run (a fullwidth word inside prose).
            for offset, char in enumerate(run):
                folded = _fold(char)
                if folded != char:
                    starts.append(length)
                    origins.append((length + len(folded), start + offset, start + offset + 1))
                parts.append(folded)
                length += len(folded)
        else:
            starts.append(length)
            origins.append((length + len(replacement), start, end))
            parts.append(replacement)
            length += len(replacement)
        position = end
    if not starts:
        return None
    parts.append(text[position:])
    return Normalised("".join(parts), tuple(starts), tuple(origins))
