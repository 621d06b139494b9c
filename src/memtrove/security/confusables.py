"""Look-alike folding for the injection guard's check copy (never for the text shown).

Tables are a focused subset of Unicode's confusables data (UTS #39, ``confusables.txt``):
every single character it maps to a Latin letter that NFKD does not already fold (Cyrillic,
Greek, Armenian, Cherokee, Coptic, Lisu, Canadian syllabics, Tifinagh, IPA, digits of other
scripts...), and the look-alikes of ``< > / | [ ]`` that can forge a tag or a chat template.
They are kept in code rather than loaded from a confusables library because the libraries
that bundle the data parse a 1-3 MB JSON file on import (30-40 ms), which a hook process,
started once per prompt, cannot spend; these tables cost well under a millisecond.

Characters the data maps to ``l`` (Cyrillic ``І``, Greek ``Ι``, the palochka, Hebrew vav)
stand for a capital ``I`` as often as for an ``l``: they fold to a placeholder that the
guard reads both ways.
"""

from __future__ import annotations

import unicodedata

from memtrove.security.patterns import LazyPattern

__all__ = [
    "I_OR_L",
    "fold_brackets",
    "fold_letters",
    "has_bracket_lookalike",
    "is_typography_only",
    "mixes_scripts",
    "strip_marks",
]

_LETTERS_FROM = (
    "×ıƄƍƦƽɑɡɣɩɪɯʋʏͿΑΒΕΖΗΚΜΝΟΡΤΥΧαβγεζηικμνορστυχϜϳϺЅЈАВЕКМНОРСТУ"
    "ХЬагекморстухѕіјѡѴѵҮүһҽԁԌԛԜԝՍՏՕագզհոռսցքօטסه٥٧ھہە۵۷߀०০੦૦ଠ୦௦౦"
    "೦ഠ൦๐໐ဝ၀ყჿሀዐᎠᎡᎢᎥᎩᎪᎫᎬᎳᎷᎻᎽᏀᏂᏃᏏᏒᏔᏕᏙᏚᏞᏟᏢᏦᏧᏳᏴᐯᑌᑭᑯᑲᒍᒪᕁᕼᕽᖇᖯᖴᗅᗞᗪᗰᗷ᙭᙮ᚷ"
    "ᛕᛖᴄᴏᴑᴜᴠᴡᴢᴦᶃᶌẝỿ℮∨∪⊤⋁⋃⋿⍳⍴⍺╳⟙⤫⤬⨯ⲅⲎⲔⲘⲚⲞⲟⲢⲣⲤⲥⲦⲨⲬⳐⴸⴹⵔⵕⵝ〇ꓐꓑꓒꓓꓔꓖꓗꓙꓚꓜ"
    "ꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓳꓴꙇꛟꜱꞘꞙꞟꞲꞳꞴꬲꬵꬽꭇꭈꭎꭒꭚꭵꮁꮃꮓꮩꮪꮯ𐊂𐊆𐊇𐊐𐊒𐊕𐊖𐊗𐊠𐊡𐊢𐊥𐊫𐊰𐊱𐊲𐊴𐋏𐋵𐌁𐌂"
    "𐌑𐌕𐌗𐌢𐐄𐐕𐐛𐐠𐐬𐐽𐑈𐒴𐓂𐓎𐓪𐓶𐔓𐔖𐔘𐔜𐔝𐔥𐔦𐔧𑓐𑜆𑜊𑜎𑜏𑢠𑢢𑢣𑢤𑢦𑢩𑢮𑢲𑢵𑢸𑢼𑣀𑣁𑣂𑣃𑣄𑣈𑣗𑣘𑣜𑣠𑣥𑣦𑣩𑣬𑣯𑣲𖼈𖼊𖼖𖼵"
    "𖼺𖽀𖽂𖽃𝈍𝈓𝈖𝈪🝌🝨"
)
_LETTERS_TO = (
    "xibgRsagyiiwuyJABEZHKMNOPTYXaByeznikuvopotuxFjMSJABEKMHOPCTY"
    "XbarekmopctyxsijwVvYyhedGqWwUSOwqqhnnugfovoooVooooVOoOooOOoo"
    "oooooooyoUODRTiYAJEWMHYGhZbRWSVSLCPKdGBVUPdbJLxHxRbFADDMBXxX"
    "KMcoouvwzrgyfyevUTvUEipaXTxxxrHKMNOoPpCcTYXLVEOQXOBPdDTGKJCZ"
    "FMNLSRVHWXYAEOUiVsFfuJXBeforruuyirwzvscBEFXOPSTABCFOMTYXHZBC"
    "MTXXOCLSocsROUouNOKCVFLXOvwwwVFLYEZELOUTvsFizoouyOZWCXWCVTLR"
    "SAUYVFRLCT"
)
_I_OR_L = "ӏƖǀΙІӀוןا١۱ߊᛁⲒⵏꓲ𐊊𐌉𐌠𖼨𞣇"

# Placeholders in the folded copy: control characters, which normalising has removed, so
# no text holds one of its own. The I/l class reads both ways; a look-alike bracket keeps
# a placeholder of its own, so only the tag check (:func:`fold_brackets`) reads it as ASCII.
I_OR_L = "\x01"
_ANGLE_L, _ANGLE_R, _SOLIDUS, _BAR, _SQUARE_L, _SQUARE_R = "\x02\x03\x04\x05\x06\x07"

# Angle brackets, solidus, vertical bar and square brackets that read as the ASCII ones.
# (Double angle brackets and guillemets are left alone: they quote titles and speech in
# Chinese, Japanese, French and Russian text, where folding them would forge tags that
# are not there.)
_LEFT_ANGLES = "\u2039\u276e\u02c2\u02f1\u1438\u16b2\U0001d236\u3008\u27e8\u276c\u2770\u29fc\u2991\u2993\u22d6\u29c0"
_RIGHT_ANGLES = "\u203a\u276f\u02c3\u02f2\u1433\U00016f3f\U0001d237\u3009\u27e9\u276d\u2771\u29fd\u2992\u2994\u22d7\u29c1\u2e16"
_SOLIDI = "\u1735\u2041\u2215\u2044\u2571\u27cb\u29f8\U0001d23a\u31d3\u3033\u2cc6\u30ce\u4e3f"
_BARS = "\u05c0\u2223\u23fd\u2502\u2503\u2758\u23d0"
_LEFT_SQUARES = "\u2045\u27e6\u301a\u298b\u298d\u298f\u2e55\u2e57\u3010\u3016"
_RIGHT_SQUARES = "\u2046\u27e7\u301b\u298c\u298e\u2990\u2e56\u2e58\u3011\u3017"

_LETTERS = str.maketrans(
    _LETTERS_FROM
    + _I_OR_L
    + _LEFT_ANGLES
    + _RIGHT_ANGLES
    + _SOLIDI
    + _BARS
    + _LEFT_SQUARES
    + _RIGHT_SQUARES,
    _LETTERS_TO
    + I_OR_L * len(_I_OR_L)
    + _ANGLE_L * len(_LEFT_ANGLES)
    + _ANGLE_R * len(_RIGHT_ANGLES)
    + _SOLIDUS * len(_SOLIDI)
    + _BAR * len(_BARS)
    + _SQUARE_L * len(_LEFT_SQUARES)
    + _SQUARE_R * len(_RIGHT_SQUARES),
)
_BRACKET_PLACEHOLDERS = _ANGLE_L + _ANGLE_R + _SOLIDUS + _BAR + _SQUARE_L + _SQUARE_R
_BRACKETS = str.maketrans(_BRACKET_PLACEHOLDERS, "<>/|[]")
_PLACEHOLDER = LazyPattern(f"[{_BRACKET_PLACEHOLDERS}]")
# Where a fold can change anything: from a non-ASCII character up to the next ASCII letter
# (one run per paragraph of Cyrillic or Greek text, one per curly quote of English text).
_FOLD_RUN = LazyPattern(r"[^\x00-\x7f][^A-Za-z]*")
# Typography of English prose (quotes, dashes, ellipsis, bullets, arrows, signs, box
# drawing but its vertical bar): text holding nothing else beyond ASCII has nothing to
# fold, so the check skips folding it.
_TYPOGRAPHY = LazyPattern(
    "[^\x00-\x7f\u2018\u2019\u201a\u201c\u201d\u201e\u2010-\u2015\u2026\u2022\u00b7"
    "\u00a7\u00b6\u00b0\u00b1\u2020\u2021\u2032\u2033\u2190-\u2199\u21d2\u21d4\u2264"
    "\u2265\u2260\u2248\u00a9\u00ae\u20ac\u00a3\u00a5\u00a2\u2713\u2714\u2717\u2718"
    "\u2500\u250c\u2510\u2514\u2518\u251c\u2524\u252c\u2534\u253c\u2550]"
)
# The marks decomposed Latin, Greek and Cyrillic letters leave, and the overlays and
# enclosing marks drawn over letters: removed by one expression.
_COMMON_MARKS = LazyPattern(
    "[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
)
# Where another mark can be: Python's ``\w`` holds letters and digits of every script, never a
# combining mark, so this finds marks, symbols and punctuation beyond ASCII, and skips the
# letters of Russian or Chinese prose.
_MARK_RUN = LazyPattern(r"[^\w\s\x00-\x7f]+")


class _MarkTable(dict[int, int | None]):
    """A translation table that drops every combining mark (categories Mn, Mc, Me), filled
    as characters are met: listing all ~300 mark ranges up front would cost each hook
    process a millisecond of regex compiling."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code))[0] == "M" else code
        self[code] = kept
        return kept


_MARKS = _MarkTable()


def strip_marks(text: str) -> str:
    """``text`` (already NFKD) without combining marks: accents, and the overlays
    (U+0334-U+0338, U+20D2-U+20D3) and enclosing marks (U+20DD-U+20E4) drawn over letters."""
    text = _COMMON_MARKS.sub("", text)
    return _MARK_RUN.compiled.sub(lambda run: run.group().translate(_MARKS), text)


def is_typography_only(text: str) -> bool:
    """Whether ``text`` holds nothing beyond ASCII but the typography of English prose
    (curly quotes, dashes, arrows...), and so has no mark, look-alike or bracket to fold."""
    return _TYPOGRAPHY.search(text) is None


def fold_letters(text: str) -> str:
    """``text`` with look-alike letters as Latin ones, the I/l class as :data:`I_OR_L` and
    look-alike brackets as placeholders; one character for one, so offsets still match."""
    return _FOLD_RUN.compiled.sub(lambda run: run.group().translate(_LETTERS), text)


def has_bracket_lookalike(folded: str) -> bool:
    """Whether ``folded`` (from :func:`fold_letters`) held a look-alike bracket."""
    return _PLACEHOLDER.search(folded) is not None


def fold_brackets(folded: str) -> str:
    """``folded`` with its look-alike angle brackets, solidi, bars and square brackets as
    the ASCII ones."""
    return folded.translate(_BRACKETS)


def _script(char: str) -> str:
    if char.isascii():
        return "LATIN"
    return unicodedata.name(char, "UNKNOWN").partition(" ")[0]


def mixes_scripts(word: str) -> bool:
    """Whether ``word`` (letters, marks stripped) is written with look-alikes: letters of
    two scripts, or a Latin word holding a non-ASCII letter. A word wholly in one other
    script (Russian, Greek, Armenian) is not."""
    if word.isascii():
        return False
    scripts = {_script(char) for char in word}
    return len(scripts) > 1 or scripts == {"LATIN"}
