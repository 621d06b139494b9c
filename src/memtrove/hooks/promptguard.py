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

A hit drops the whole entry (the reference implementation's ``[content filtered for
security]``): a filtered document is not summarized, paraphrased or partly shown.
Zero-width characters and other control characters are removed from text that passes.
"""

from __future__ import annotations

import re

__all__ = ["FILTERED", "SCAN_LIMIT", "find_injection", "sanitize"]

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
        re.compile(r"<\|(?:im_start|im_end|system|endoftext)\|>|\[/?INST\]|<</?SYS>>"),
    ),
    ("bidi-override", (), re.compile("[\u202a-\u202e\u2066-\u2069]")),
)

_INVISIBLE = re.compile("[\u200b\u200c\u200e\u200f\u2060\ufeff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def find_injection(text: str, limit: int | None = SCAN_LIMIT) -> str | None:
    """The name of the first injection pattern found in ``text`` (its first ``limit``
    characters; None checks all), or None when it looks safe."""
    sample = text if limit is None else text[:limit]
    lowered = sample.lower()
    for name, triggers, pattern in _PATTERNS:
        if triggers and not any(trigger in lowered for trigger in triggers):
            continue
        if pattern.search(sample):
            return name
    return None


def sanitize(text: str) -> str | None:
    """``text`` without invisible and control characters, or None when it carries an
    injection attempt (the caller then drops the entry it belongs to)."""
    if find_injection(text, limit=None) is not None:
        return None
    return _INVISIBLE.sub("", text)
