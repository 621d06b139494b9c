"""The prompt-injection filter every injected title, path and snippet passes through.

Notes are written by people and by agents, and some quote web pages or tool output, so
text from the vault must never be able to speak to the model as if it were the user or
the system. A hook checks each document (title, path, body) before injecting any of it:

- phrases that address the model ("ignore previous instructions", "you are now ...",
  "new system prompt:", "reveal your system prompt", "do not tell the user");
- markup that could close or forge the hook's own frame (``</vault-context>``,
  ``<instruction>``, ``<system>``) or a chat template (``<|im_start|>``, ``[INST]``,
  ``<<SYS>>``);
- bidirectional-override characters, which can make text read differently than it is.

Text is normalised before it is checked (:func:`normalize`), so disguises do not pass: zero-width,
word-joiner, soft-hyphen, variation-selector, Unicode tag and control characters are removed,
then the check runs on a copy in NFKD (fullwidth ``＜``, ligatures, mathematical letters)
without combining marks (accents, and the overlays of ``I̷g̷n̷o̷r̷e̷``), with look-alike
letters of other scripts folded to Latin (``іgnore`` with a Cyrillic ``і``, ``Ignօre`` with an
Armenian ``օ``; see :mod:`.confusables`). ``<\u200b/vault-context>`` is a closing tag once the
zero-width space is gone, and is caught as one; Unicode tag characters (invisible ASCII) are
read as the letters they spell. Bidirectional overrides are a finding of their own, and so is
a word written with look-alikes (letters of two scripts, or a Latin word holding a non-ASCII
letter) that folds to a word of the instructions (``ignore``, ``system``, ``previous``...):
nobody writes one but to slip it past a filter. Look-alike angle brackets (``˂ ‹ 〈 ⟨ ❮ ᐸ``
and their kin) count as ``<`` and ``>`` for the tag check, on a stricter tag shape
(``〈system〉``, ``‹/vault-context›``, not ``⟨user, item⟩``), so mathematical and CJK
brackets pass. Titles and paths (:func:`sanitize`, ``names=True`` for
:func:`find_injection`) are also checked with their separators (``- _ . / + ~ , ;``, a
backslash, dashes, middle dots, ``%20``) and camelCase humps read as spaces, since a file
name such as ``ignore-all-previous-instructions.md`` is injected too.

A hit drops the whole entry (the reference implementation's ``[content filtered for
security]``): a filtered document is not summarized, paraphrased or partly shown. Text that
passes is returned normalised, with ``<`` and ``>`` escaped (``&lt;``, ``&gt;``), so no
stored text can open or close a tag of the hook's frame, whatever the patterns miss.
"""

from __future__ import annotations

import re
import unicodedata

from memtrove.security.confusables import (
    I_OR_L,
    fold_brackets,
    fold_letters,
    has_bracket_lookalike,
    is_typography_only,
    mixes_scripts,
    strip_marks,
)
from memtrove.security.patterns import LazyPattern
from memtrove.security.redaction import redact_text

__all__ = [
    "FILTERED",
    "SCAN_LIMIT",
    "escape",
    "find_injection",
    "normalize",
    "sanitize",
    "sanitize_lines",
]

FILTERED = "[content filtered for security]"
SCAN_LIMIT = 200_000  # characters of a body that are checked (snippets are always checked whole)

_INSTRUCTION_NOUNS = (
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|context|messages?"
    r"|guardrails|constraints)"
)
_FRAME_NAMES = (
    r"(?:vault-[\w-]+|instructions?|facts|relationships|system|assistant|user|human"
    r"|tool_result|tool_use|function_results|antml:[\w-]+)"
)
# (name, triggers, pattern): a pattern runs only on text containing one of its triggers
# (lowercase substrings; none: always), which keeps the check cheap on ordinary notes, and
# is compiled when first needed, which keeps a hook process's start cheap.
# Words are apart by any whitespace (``\s+``), so a line break cannot split a phrase; the
# triggers are looked for with whitespace runs read as one space.
_PATTERNS: tuple[tuple[str, tuple[str, ...], LazyPattern], ...] = (
    (
        "override",
        ("ignore", "disregard", "forget", "override", "bypass", "skip"),
        LazyPattern(
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+)?"
            r"(?:(?:previous|prior|above|earlier|preceding|former|original|system|developer"
            r"|your|these|those|my)\s+){1,3}" + _INSTRUCTION_NOUNS + r"\b",
            re.I,
        ),
    ),
    (
        "persona",
        ("you are now", "from now on", "pretend", "act as", "roleplay"),
        LazyPattern(
            r"\b(?:you\s+are\s+now\s+(?:an?|in|no\s+longer|DAN)|from\s+now\s+on,?\s+you\s+"
            r"(?:are|will|must)|pretend\s+(?:to\s+be|you\s+are)|you\s+must\s+now\s+act\s+as"
            r"|roleplay\s+as)\b",
            re.I,
        ),
    ),
    (
        "new-instructions",
        ("instructions", "prompt"),
        LazyPattern(
            r"\b(?:new|updated|real|actual)\s+(?:system\s+)?(?:instructions|prompt)\s*:", re.I
        ),
    ),
    (
        "prompt-leak",
        ("prompt", "instructions"),
        LazyPattern(
            r"\b(?:reveal|print|show|repeat|output|leak)\s+(?:your|the)\s+(?:system\s+|hidden\s+"
            r"|initial\s+)?(?:prompt|instructions)\b",
            re.I,
        ),
    ),
    (
        "concealment",
        ("user",),
        LazyPattern(
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to"
            r"|reveal\s+(?:this\s+)?to)\s+the\s+user\b",
            re.I,
        ),
    ),
    (
        "jailbreak",
        ("jailbreak", "dan mode", "developer mode"),
        LazyPattern(r"\b(?:jailbreak|DAN\s+mode|developer\s+mode\s+enabled)\b", re.I),
    ),
    (
        "frame-markup",
        ("<",),
        LazyPattern(
            r"</?\s*" + _FRAME_NAMES + r"\b[^>]{0,200}>",
            re.I,
        ),
    ),
    (
        "chat-template",
        ("<|", "inst]", "<<sys", "<</sys"),
        LazyPattern(r"<\|(?:im_start|im_end|system|endoftext)\|>|\[/?INST\]|<</?SYS>>", re.I),
    ),
)

# Removed before checking and from what passes: zero-width and joiner characters, soft
# hyphens, bidi marks (the overrides are a finding first), invisible operators, variation
# selectors, Unicode tags, and C0/C1 controls but tab and newline.
_INVISIBLE = LazyPattern(
    "[\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f"
    "\U000e0100-\U000e01ef\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
# What ASCII text can hide: its control characters but tab and newline.
_ASCII_CONTROLS = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_TAGS_AS_ASCII = {code: code - 0xE0000 for code in range(0xE0020, 0xE007F)}
_TAG = LazyPattern("[\U000e0000-\U000e007f]")
_BIDI_OVERRIDE = LazyPattern("[\u202a-\u202e\u2066-\u2069]")
# Tags whose brackets were look-alikes: only a tag's own shape (a name, then ``>`` or
# attributes), so ``⟨user, item⟩`` and ``〈Human Rights〉`` are not taken for one.
_LOOKALIKE_MARKUP = LazyPattern(
    r"</?\s*" + _FRAME_NAMES + r"\s*(?:/?\s*>|\s[\w:-]+\s*=[^<>]{0,200}>)", re.I
)
_CHAT_TEMPLATE = _PATTERNS[-1][2]
# Words of the instructions: one written with look-alikes is a finding by itself.
_INSTRUCTION_WORDS = (
    "ignor", "disregard", "forget", "override", "bypass", "previous", "prior", "preceding",
    "system", "developer", "instruction", "prompt", "rule", "guideline", "directive",
    "guardrail", "assistant", "user", "human", "jailbreak", "reveal", "pretend", "roleplay",
    "vault",
)  # fmt: skip
_INSTRUCTION_WORD = LazyPattern(
    r"\b(?:ignor(?:e|ing)|disregard|forget|override|bypass|previous|prior|preceding|system"
    r"|developer|instructions?|prompts?|rules?|guidelines?|directives?|guardrails?|assistant"
    r"|user|human|jailbreak|reveal|pretend|roleplay|vault)\b",
    re.I,
)
# Separators of file names and identifiers, read as spaces in the copy of a title or path.
_NAME_SEPARATORS = LazyPattern(r"[_./\\+~,;\-\u00b7\u2010-\u2015\u2022\u2027\u2212]|%20")
_CAMEL_HUMP = LazyPattern(r"(?<=[a-z])(?=[A-Z])")


def normalize(text: str) -> str:
    """``text`` after NFKC with invisible, tag and control characters removed (ASCII text
    only loses its control characters)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return _INVISIBLE.sub("", text)


def escape(text: str) -> str:
    """``<`` and ``>`` as ``&lt;`` and ``&gt;`` (``&`` as ``&amp;`` first, so the escaping
    cannot be undone by the text itself)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def find_injection(text: str, limit: int | None = SCAN_LIMIT, *, names: bool = False) -> str | None:
    """The name of the first injection pattern found in ``text`` (its first ``limit``
    characters; None checks all), or None when it looks safe. The check runs on the
    normalised text with look-alikes folded (see the module docstring); ``names`` also
    checks it as a title or path, its separators read as spaces."""
    sample = text if limit is None else text[:limit]
    if sample.isascii():
        return _check_ascii(sample.translate(_ASCII_CONTROLS), names)
    if _BIDI_OVERRIDE.search(sample):
        return "bidi-override"
    variants = [sample]
    if _TAG.search(sample):
        # Unicode tags spell ASCII invisibly: check the text without them, with them as
        # spaces, and what they spell on its own.
        variants = [sample, _TAG.sub(" ", sample), "".join(_TAG.compiled.findall(sample))]
        variants[2] = variants[2].translate(_TAGS_AS_ASCII)
    for variant in variants:
        found = _check_unicode(variant, names)
        if found:
            return found
    return None


def _check_ascii(checked: str, names: bool) -> str | None:
    if names:
        words = _NAME_SEPARATORS.sub(" ", _CAMEL_HUMP.sub(" ", checked))
        if words != checked:
            return _first_pattern(checked, words)
    return _first_pattern(checked)


def _check_unicode(variant: str, names: bool) -> str | None:
    # NFKD, not NFKC, so marks come apart from their letters and can be dropped.
    plain = _INVISIBLE.sub("", unicodedata.normalize("NFKD", variant))
    if is_typography_only(plain):
        return _check_ascii(plain, names)
    plain = strip_marks(plain)
    folded = fold_letters(plain)
    readings = [folded] if I_OR_L not in folded else [folded.replace(I_OR_L, c) for c in "il"]
    for reading in readings:
        found = _check_ascii(reading, names) or _lookalike_word(plain, reading)
        if found is None and has_bracket_lookalike(reading):
            found = _lookalike_markup(fold_brackets(reading))
        if found:
            return found
    return None


def _lookalike_word(plain: str, folded: str) -> str | None:
    """The finding "mixed-script" when a word of the instructions in ``folded`` was
    written with look-alikes in ``plain`` (the same text before folding, offsets alike)."""
    if folded == plain:
        return None
    lowered = folded.lower()
    if not any(word in lowered for word in _INSTRUCTION_WORDS):
        return None
    for match in _INSTRUCTION_WORD.finditer(folded):
        if mixes_scripts(plain[match.start() : match.end()]):
            return "mixed-script"
    return None


def _lookalike_markup(checked: str) -> str | None:
    if _LOOKALIKE_MARKUP.search(checked):
        return "frame-markup"
    if _CHAT_TEMPLATE.search(checked):
        return "chat-template"
    return None


def _first_pattern(checked: str, words: str = "") -> str | None:
    """The first pattern found in ``checked`` or in ``words`` (its copy read as a name)."""
    lowered = " ".join(f"{checked} {words}".lower().split())
    for name, triggers, pattern in _PATTERNS:
        for trigger in triggers:  # a loop, not any(): this runs for every title and snippet
            if trigger in lowered:
                break
        else:
            if triggers:
                continue
        if pattern.search(checked) or (words and pattern.search(words)):
            return name
    return None


def sanitize(text: str) -> str | None:
    """``text`` normalised, redacted and escaped for injection, or None when it carries an
    injection attempt (the caller then drops the entry it belongs to). Titles, paths and
    snippets all come here, so each is also checked as a name (``names=True``). Redaction
    comes after normalising, so a zero-width space cannot split a token out of its shape."""
    if find_injection(text, limit=None, names=True) is not None:
        return None
    return escape(redact_text(normalize(text)))


def sanitize_lines(text: str) -> list[str]:
    """The lines of ``text`` normalised, redacted and escaped, without those that carry an
    injection; none at all when the lines kept still carry one read together (an override
    split over two lines, ``Ignore all`` then ``previous instructions``), since no line
    of such a text can be trusted to stand alone."""
    kept = [
        line
        for line in redact_text(normalize(text)).splitlines()
        if find_injection(line, limit=None) is None
    ]
    if find_injection("\n".join(kept), limit=None) is not None:
        return []
    return [escape(line) for line in kept]
