"""The content types a document can have and each one's starting confidence.

Kept apart from :mod:`memtrove.index.classify` (which compiles its patterns at import) so
searching, which only needs the names and numbers, does not load the classifier.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["CAPTURE_TYPES", "CONFIDENCE_BASELINE", "CONTENT_TYPES"]

CONTENT_TYPES: tuple[str, ...] = (
    "decision",
    "deductive",
    "preference",
    "note",
    "handoff",
    "conversation",
    "progress",
    "research",
    "hub",
    "antipattern",
    "project",
    "milestone",
    "problem",
)

# Types only the session capture writes (never read from a file's frontmatter): an
# observation, and the record behind a decision or rule its session document holds.
CAPTURE_TYPES: tuple[str, ...] = ("observation", "record")

CONFIDENCE_BASELINE: Mapping[str, float] = {
    "decision": 0.85,
    "deductive": 0.85,
    "preference": 0.80,
    "hub": 0.80,
    "antipattern": 0.75,
    "problem": 0.75,
    "research": 0.70,
    "milestone": 0.70,
    "project": 0.65,
    "handoff": 0.60,
    "conversation": 0.55,
    "progress": 0.50,
    "note": 0.50,
}
