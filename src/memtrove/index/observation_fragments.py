"""An observation's facts and narrative as fragments of their own (``fact``, ``narrative``).

An observation written by capture (:func:`memtrove.capture.store.render_observation`, YAML
with ``observation_type``) reads ``# <title>``, the narrative, then ``## Facts`` with one
list item per fact. ClawMem embeds each fact and the narrative on its own, so a question
that matches one fact finds it without the rest of the observation diluting the vector:
here the narrative (the text between the title heading and the next ``##`` heading) is one
``narrative`` fragment and every item under ``## Facts`` one ``fact`` fragment, whatever
the document's length. They replace the ``section`` and ``list`` fragments that cover the
same text; ``full`` stays first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["OBSERVATION_FRAGMENT_TYPES", "with_observation_pieces"]

OBSERVATION_FRAGMENT_TYPES = ("narrative", "fact")
_MAX = 2_000  # characters per fragment, as for the other types
_H2 = re.compile(r"^##[ \t]+(.+?)[ \t]*$", re.M)
_H1 = re.compile(r"^#[ \t]+.+$", re.M)
_ITEM = re.compile(r"^[ \t]*[-*+][ \t]+(\S.*)$", re.M)

Piece = tuple[str, str, int, int]  # type, label, start, end


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, min(end, start + _MAX)


def observation_pieces(text: str, body_start: int, title: str) -> list[Piece]:
    """The ``narrative`` and ``fact`` pieces of an observation's text, in order."""
    headings = [m for m in _H2.finditer(text, body_start)]
    first_h2 = headings[0].start() if headings else len(text)
    opening = _H1.search(text, body_start, first_h2)
    start, end = _trimmed(text, opening.end() if opening else body_start, first_h2)
    pieces: list[Piece] = [("narrative", title, start, end)] if end > start else []
    for index, heading in enumerate(headings):
        if heading.group(1).strip().lower() != "facts":
            continue
        stop = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        for item in _ITEM.finditer(text, heading.end(), stop):
            start, end = _trimmed(text, item.start(1), item.end(1))
            if end > start:
                pieces.append(("fact", title, start, end))
    return pieces


def with_observation_pieces(
    pieces: Sequence[Piece], text: str, body_start: int, title: str
) -> list[Piece]:
    """``pieces`` (``full`` first) with the observation's own pieces in place of the
    structural ones covering the same text."""
    own = observation_pieces(text, body_start, title)
    if not own:
        return list(pieces)
    low, high = min(p[2] for p in own), max(p[3] for p in own)
    kept = [
        piece
        for piece in pieces[1:]
        if piece[0] not in ("section", "list") or piece[3] <= low or piece[2] >= high
    ]
    return [pieces[0], *sorted([*kept, *own], key=lambda piece: (piece[2], piece[0]))]
