"""Checks of the arguments the Vault's read methods take, with messages fit for a user."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memtrove.errors import InvalidQueryError
from memtrove.index.types import CAPTURE_TYPES, CONTENT_TYPES
from memtrove.text import parse_iso_datetime

__all__ = ["MAX_LIMIT", "check_content_types", "check_count", "check_date", "check_limit"]

MAX_LIMIT = 1000


def check_limit(limit: int, ceiling: int | None = MAX_LIMIT, name: str = "limit") -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidQueryError(f"{name} must be a positive integer, got {limit!r}")
    return limit if ceiling is None else min(limit, ceiling)


def check_count(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidQueryError(f"{name} must be a whole number of at least 0, got {value!r}")
    return value


def check_content_types(content_types: Sequence[str] | None) -> list[str] | None:
    if not content_types:
        return None
    known = (*CONTENT_TYPES, *CAPTURE_TYPES)
    unknown = [name for name in content_types if name not in known]
    if unknown:
        raise InvalidQueryError(f"unknown content type {unknown[0]!r}; known: {', '.join(known)}")
    return list(content_types)


def check_date(name: str, value: str | None, *, end_of_day: bool = False) -> str | None:
    if value is None or value == "":
        return None
    text = value.strip()
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        text += "T23:59:59Z"
    parsed = parse_iso_datetime(text)
    if parsed is None:
        raise InvalidQueryError(f"{name} must be an ISO date such as 2026-01-31, got {value!r}")
    return parsed
