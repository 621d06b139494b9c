"""Whether a value could be a secret: the judgement every name, flag and place shares.

``token: str`` is a type, ``password = os.environ["X"]`` a lookup, ``${TOKEN}`` a
placeholder, ``max_tokens: 512`` a number and "the password reset flow" prose; the same
value written after ``PASSWORD=`` or in quotes is taken as given.
"""

from __future__ import annotations

import math
import re

from memtrove.security.patterns import LazyPattern

__all__ = ["MARK", "entropy", "plausible", "random_looking", "strong"]

MARK = "[REDACTED"
# What a secret value is never: placeholders, references, types, switches and masks.
_NOT_SECRETS = frozenset(
    "true false null none nil yes no on off required optional undefined str string int "
    "integer bool boolean bytes number float any object text secret secrets password "
    "passwords token tokens redacted hidden masked empty string[] str|none optional[str] "
    "changeme example sample dummy test todo tbd n/a".split()
)
_REFERENCE = LazyPattern(
    r"(?:\$|%\(|%[A-Z_]|\{\{|<|\[|process\.env|os\.environ|os\.getenv|env\.|env\(|getenv"
    r"|~/|\./|\.\./|/)",
    re.IGNORECASE,
)
_DOTTED_NAME = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_MASK = frozenset("*xX.•-_# …")
_SYMBOLS = frozenset("!@#$%^&*+=?~|")
_STRONG_MAX = 512  # longer runs under a generic name are data, not a credential
_SLUG = LazyPattern(r"[a-z0-9]+(?:[-_.][a-z0-9]+)+")
_WORD_PART = LazyPattern(r"(?:^|[-_.])[a-z]*[g-z][a-z]{2,}")
_TOKEN = LazyPattern(r"[A-Za-z0-9+/=_.:~!@#$%^*-]+")


def entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def random_looking(value: str) -> bool:
    """A run that reads like a generated credential: letters and digits mixed, high entropy,
    no dotted or path structure (``ed25519.PrivateKey``, ``v1/2024-01-15``)."""
    if len(value) < 16 or "." in value or "/" in value.strip("/"):
        return False
    if sum(c.isdigit() for c in value) < 2 or not any(c.isalpha() for c in value):
        return False
    return entropy(value) >= (3.0 if len(value) < 24 else 3.3)


def plausible(value: str, *, loose: bool) -> bool:
    """Could ``value`` (assigned to a secret name) be the secret itself? ``loose`` when the
    syntax says it is a value (quoted, ``NAME=value``, the last thing on a config line)."""
    value = value.strip()
    if len(value) < 3 or value.startswith(MARK) or value.lower() in _NOT_SECRETS:
        return False
    if set(value) <= _MASK or _REFERENCE.match(value) or "(" in value:
        return False
    lowered = value.lower()
    if lowered.startswith(("your", "<", "my-", "my_")) or lowered.endswith(("_here", "-here")):
        return False  # your_api_key, my-key, paste-token-here
    if value.isdigit() and len(value) <= 7:
        return False
    if _DOTTED_NAME.fullmatch(value) and not any(c.isdigit() for c in value):
        return False  # args.password, self.token, settings.api_key
    if loose:
        return True
    # In prose a secret has to look like one: letters and digits, symbols, or randomness
    # ("token: the parser", "pseudo-token: `RawXML`" and "pass filter" are words).
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (has_digit and has_alpha) or bool(_SYMBOLS.intersection(value)) or random_looking(value)


def strong(value: str) -> bool:
    """A value that is a secret whatever name it has (for names that are often not secret,
    such as ``sort_key`` or ``sig-auth``): a random-looking run, or at least 12 token
    characters with letters and three digits; never code (``&contextKey{``), a path, a
    dotted name or a slug of words (``training-job-resnet50``)."""
    value = value.strip().strip("\"'`")
    if (
        not 8 <= len(value) <= _STRONG_MAX
        or not _TOKEN.fullmatch(value)
        or not plausible(value, loose=True)
    ):
        return False
    if "/" in value.rstrip("=") and not random_looking(value.replace("/", "")):
        return False  # kubernetes.io/hostname, sig-auth/1205-bound-service-account-tokens
    if _SLUG.fullmatch(value) and _WORD_PART.search(value):
        return False  # training-job-resnet50-123, app.v1.2-build45: names made of words
    digits = sum(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return random_looking(value) or (len(value) >= 12 and digits >= 3 and has_alpha)
