"""Slugs of labels and names of stores.

A slug keeps Unicode letters and digits (lowercased, NFKC-normalized) and joins the runs
between them with ``-``; a label with no letter or digit at all gets ``h-`` and a hash of
the label, so every label has a stable, distinct slug.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from memtrove.errors import InvalidQueryError

__all__ = ["GLOBAL_STORE", "MAX_LABEL_CHARS", "slugify", "store_name"]

GLOBAL_STORE = "global"
MAX_LABEL_CHARS = 200
MAX_SLUG_CHARS = 120
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def slugify(label: str) -> str:
    """``"Deploy: Fly.io (prod)"`` -> ``"deploy-fly-io-prod"``; ``"!!!"`` -> ``"h-<hash>"``."""
    text = unicodedata.normalize("NFKC", label).strip()
    if not text:
        raise InvalidQueryError("a label cannot be empty")
    if len(text) > MAX_LABEL_CHARS:
        raise InvalidQueryError(f"a label is at most {MAX_LABEL_CHARS} characters")
    slug = _NOT_WORD.sub("-", text.lower()).strip("-")[:MAX_SLUG_CHARS].strip("-")
    if slug:
        return slug
    return "h-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def store_name(name: str) -> str:
    """A store's name as kept: slugified (``"My Repo"`` -> ``"my-repo"``)."""
    if not name or not name.strip():
        raise InvalidQueryError("a store name cannot be empty")
    return slugify(name)
