"""A candidate entity as extraction names it (shared by extraction and resolution)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ExtractedEntity"]


@dataclass(frozen=True)
class ExtractedEntity:
    """A candidate entity named in a document."""

    name: str
    entity_type: str
