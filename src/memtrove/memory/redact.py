"""Secrets out of tool calls before anything is written to the extraction queue.

Known credential shapes (private key blocks, bearer and basic authorization, passwords in
URLs, provider keys such as ``sk-...``, ``ghp_...``, ``AKIA...``, ``xoxb-...``, JWTs) and any
value assigned to a key whose name says secret (``password=``, ``"api_key": "..."``,
``API_TOKEN: ...``) become ``[REDACTED]``. Structures are walked: every string inside a dict
or list is redacted, and a dict value under a secret-looking key is replaced whole.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REDACTED", "redact", "redact_text"]

REDACTED = "[REDACTED]"
_SECRET_WORD = (
    r"(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|access[_-]?key|private[_-]?key)"
)
_SECRET_NAME = rf"[A-Za-z0-9_.-]*{_SECRET_WORD}[A-Za-z0-9_.-]*"
# Dict keys: also whole credentials and authorization headers.
_SECRET_KEY = re.compile(
    rf"^(?:{_SECRET_NAME}|[A-Za-z0-9_.-]*(?:credential|authorization|cookie)[A-Za-z0-9_.-]*)$",
    re.IGNORECASE,
)

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
            re.DOTALL,
        ),
        "[REDACTED PRIVATE KEY]",
    ),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 " + REDACTED),
    (re.compile(r"(?i)\b(basic)\s+[A-Za-z0-9+/]{12,}={0,2}"), r"\1 " + REDACTED),
    (re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+):([^\s@/]+)@"), r"\1:" + REDACTED + "@"),
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"), REDACTED),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"), REDACTED),
    (re.compile(r"\bglpat-[0-9A-Za-z_-]{20,}"), REDACTED),
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), REDACTED),
    # "password": "hunter2" (JSON and YAML/JS objects with quoted values)
    (
        re.compile(rf"""(?i)(["']{_SECRET_NAME}["']\s*:\s*)(["'])(?:(?!\2).)+\2"""),
        r"\1\2" + REDACTED + r"\2",
    ),
    # DB_PASSWORD="correct horse" (a quoted value may hold spaces)
    (
        re.compile(rf"""(?i)\b({_SECRET_NAME})(\s*[:=]\s*)(["'])(?!\[REDACTED)(?:(?!\3).)+\3"""),
        r"\1\2\3" + REDACTED + r"\3",
    ),
    # PASSWORD=hunter2, api_key: abc123 (shell, env files, YAML)
    (
        re.compile(
            rf"""(?i)\b({_SECRET_NAME})(\s*[:=]\s*)(?!\[REDACTED)(?![0-9]{{1,7}}\b)([^\s"',;&]{{4,}})"""
        ),
        r"\1\2" + REDACTED,
    ),
    # --token abc123, --password=... (command-line flags)
    (
        re.compile(
            rf"""(?i)(--?{_SECRET_NAME})(\s+|=)(?!\[REDACTED)([^\s"',;&-][^\s"',;&]{{3,}})"""
        ),
        r"\1\2" + REDACTED,
    ),
)


def redact_text(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact(value: Any) -> Any:
    """``value`` with every secret replaced (strings, and dicts and lists of them)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            key: (
                REDACTED
                if isinstance(key, str) and _SECRET_KEY.match(key) and isinstance(item, str)
                else redact(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value
