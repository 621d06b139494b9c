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

Text is normalised before it is checked (:func:`normalize`), so disguises do not pass: NFKC
(fullwidth ``＜``, ligatures), then zero-width, word-joiner, soft-hyphen, variation-selector,
Unicode tag and control characters are removed, then the check runs on a copy with common
Cyrillic and Greek look-alikes folded to Latin (``іgnore`` with a Cyrillic ``і``).
``<\u200b/vault-context>`` is a closing tag once the zero-width space is gone, and is
caught as one; Unicode tag characters (invisible ASCII) are read as the letters they spell.
Bidirectional overrides are a finding of their own.

A hit drops the whole entry (the reference implementation's ``[content filtered for
security]``): a filtered document is not summarized, paraphrased or partly shown. Text that
passes is returned normalised, with ``<`` and ``>`` escaped (``&lt;``, ``&gt;``), so no
stored text can open or close a tag of the hook's frame, whatever the patterns miss.
"""

from __future__ import annotations

import re
import unicodedata

from memtrove.security.redaction import redact_text

__all__ = ["FILTERED", "SCAN_LIMIT", "escape", "find_injection", "normalize", "sanitize"]

FILTERED = "[content filtered for security]"
SCAN_LIMIT = 200_000  # characters of a body that are checked (snippets are always checked whole)

_INSTRUCTION_NOUNS = (
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|context|messages?"
    r"|guardrails|constraints)"
)
# (name, triggers, pattern): a pattern runs only on text containing one of its triggers
# (lowercase substrings; none: always), which keeps the check cheap on ordinary notes.
_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    (
        "override",
        ("ignore", "disregard", "forget", "override", "bypass", "skip"),
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+)?"
            r"(?:(?:previous|prior|above|earlier|preceding|former|original|system|developer"
            r"|your|these|those|my)\s+){1,3}" + _INSTRUCTION_NOUNS + r"\b",
            re.I,
        ),
    ),
    (
        "persona",
        ("you are now", "from now on", "pretend", "act as", "roleplay"),
        re.compile(
            r"\b(?:you are now (?:an?|in|no longer|DAN)|from now on,? you (?:are|will|must)"
            r"|pretend (?:to be|you are)|you must now act as|roleplay as)\b",
            re.I,
        ),
    ),
    (
        "new-instructions",
        ("instructions", "prompt"),
        re.compile(
            r"\b(?:new|updated|real|actual)\s+(?:system\s+)?(?:instructions|prompt)\s*:", re.I
        ),
    ),
    (
        "prompt-leak",
        ("prompt", "instructions"),
        re.compile(
            r"\b(?:reveal|print|show|repeat|output|leak)\s+(?:your|the)\s+(?:system\s+|hidden\s+"
            r"|initial\s+)?(?:prompt|instructions)\b",
            re.I,
        ),
    ),
    (
        "concealment",
        ("user",),
        re.compile(
            r"\b(?:do not|don't|never)\s+(?:tell|inform|mention (?:this )?to|reveal (?:this )?to)"
            r"\s+the\s+user\b",
            re.I,
        ),
    ),
    (
        "jailbreak",
        ("jailbreak", "dan mode", "developer mode"),
        re.compile(r"\b(?:jailbreak|DAN mode|developer mode enabled)\b", re.I),
    ),
    (
        "frame-markup",
        ("<",),
        re.compile(
            r"</?\s*(?:vault-[\w-]+|instructions?|facts|relationships|system|assistant|user"
            r"|human|tool_result|tool_use|function_results|antml:[\w-]+)\b[^>]{0,200}>",
            re.I,
        ),
    ),
    (
        "chat-template",
        ("<|", "inst]", "<<sys", "<</sys"),
        re.compile(r"<\|(?:im_start|im_end|system|endoftext)\|>|\[/?INST\]|<</?SYS>>", re.I),
    ),
)

# Removed before checking and from what passes: zero-width and joiner characters, soft
# hyphens, bidi marks (the overrides are a finding first), invisible operators, variation
# selectors, Unicode tags, and C0/C1 controls but tab and newline.
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f"
    "\U000e0100-\U000e01ef\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
# Look-alikes folded to Latin for checking only (the text shown keeps its letters).
_CONFUSABLES = str.maketrans(
    "аАВсСеЕһНіІјЈКкМмоОрРѕЅТтуУхХԁԛԝɡɩʏαΑβΒεΕηΗιΙκΚμΜνΝοΟρΡτΤυΥχΧζΖ",
    "aABcCeEhHiIjJKkMmoOpPsSTtyYxXdqwgiyaABBeEnHiIkKuMvNoOpPtTuYxXzZ",
)
_TAGS_AS_ASCII = {code: code - 0xE0000 for code in range(0xE0020, 0xE007F)}
_TAG = re.compile("[\U000e0000-\U000e007f]")
_BIDI_OVERRIDE = re.compile("[\u202a-\u202e\u2066-\u2069]")


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


def find_injection(text: str, limit: int | None = SCAN_LIMIT) -> str | None:
    """The name of the first injection pattern found in ``text`` (its first ``limit``
    characters; None checks all), or None when it looks safe. The check runs on the
    normalised text with look-alike letters folded (see the module docstring)."""
    sample = text if limit is None else text[:limit]
    if sample.isascii():
        return _first_pattern(_INVISIBLE.sub("", sample))
    if _BIDI_OVERRIDE.search(sample):
        return "bidi-override"
    variants = [sample]
    if _TAG.search(sample):
        # Unicode tags spell ASCII invisibly: check the text without them, with them as
        # spaces, and what they spell on its own.
        variants = [sample, _TAG.sub(" ", sample), "".join(_TAG.findall(sample))]
        variants[2] = variants[2].translate(_TAGS_AS_ASCII)
    for variant in variants:
        found = _first_pattern(normalize(variant).translate(_CONFUSABLES))
        if found:
            return found
    return None


def _first_pattern(checked: str) -> str | None:
    lowered = checked.lower()
    for name, triggers, pattern in _PATTERNS:
        if triggers and not any(trigger in lowered for trigger in triggers):
            continue
        if pattern.search(checked):
            return name
    return None


def sanitize(text: str) -> str | None:
    """``text`` normalised, redacted and escaped for injection, or None when it carries an
    injection attempt (the caller then drops the entry it belongs to). Redaction comes
    after normalising, so a zero-width space cannot split a token out of its shape."""
    if find_injection(text, limit=None) is not None:
        return None
    return escape(redact_text(normalize(text)))
