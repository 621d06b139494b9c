"""The field names the reference product's host plugins read, added beside memtrove's own.

The OpenClaw plugin's tools and the Hermes MemoryProvider (clawmem inventory, section 3)
read camelCase names: a search result's ``contentType`` and ``modifiedAt`` (``body`` when
``compact`` is false), a document's ``modifiedAt`` and ``bodyLength``, a timeline entry's
``modifiedAt``, a session's ``prompt_count``, health's ``needsEmbedding`` and
``hasVectors``. The answers keep every snake_case field and gain these as aliases, so a
plugin written for that API reads memtrove's answers unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["document", "health", "result", "session", "summary", "timeline"]


def result(item: Mapping[str, Any]) -> dict[str, Any]:
    """A search, retrieve or similar result: ``contentType``, ``modifiedAt`` (and
    ``body`` when the result carries ``content``)."""
    data = dict(item)
    if "content_type" in data:
        data["contentType"] = data["content_type"]
    if "modified_at" in data:
        data["modifiedAt"] = data["modified_at"]
    if "content" in data:
        data["body"] = data["content"]
    return data


def summary(item: Mapping[str, Any]) -> dict[str, Any]:
    """A document summary (a timeline entry): ``modifiedAt`` and ``contentType``."""
    return result(item)


def document(item: Mapping[str, Any]) -> dict[str, Any]:
    """``GET /documents/{docid}``: ``modifiedAt`` and ``bodyLength``."""
    data = result(item)
    if "body_length" in data:
        data["bodyLength"] = data["body_length"]
    return data


def timeline(found: Mapping[str, Any]) -> dict[str, Any]:
    """``GET /timeline/{docid}``: each entry as :func:`summary` gives it."""
    data = dict(found)
    anchor = data.get("anchor")
    if isinstance(anchor, Mapping):
        data["anchor"] = summary(anchor)
    for side in ("before", "after"):
        entries = data.get(side)
        if isinstance(entries, list):
            data[side] = [summary(entry) for entry in entries]
    return data


def session(item: Mapping[str, Any]) -> dict[str, Any]:
    """A ``GET /sessions`` row: ``prompt_count`` (the prompts surfaced, ``turns``)."""
    data = dict(item)
    if "turns" in data:
        data["prompt_count"] = data["turns"]
    return data


def health(item: Mapping[str, Any]) -> dict[str, Any]:
    """``GET /health``: ``needsEmbedding`` and ``hasVectors``."""
    data = dict(item)
    if "needs_embedding" in data:
        data["needsEmbedding"] = data["needs_embedding"]
    if "has_vectors" in data:
        data["hasVectors"] = data["has_vectors"]
    return data
