"""What context-surfacing considered for one prompt, and why each document was or was not
injected: the trail behind the console's injection audit.

A :class:`Trail` is told the candidates, then each step's survivors; a document leaves the
trail with the reason of the first step that dropped it:

    (admission)         private, surface: false, gone, snoozed, noise or injection guard
                        (see :mod:`memtrove.hooks.admission`)
    threshold           below the profile's share of the best score (or the activation floor)
    depth               past the profile's results, a near-duplicate, or a lone hub
    lead cut            under the lead ratio of the best
    budget or guard     did not fit the token budget, or its passage was refused

Injected documents keep their passage length (the tier). The hook stores the trail beside the
``context_usage`` row (``injection_audit``); nothing here reads the vault.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from memtrove.hooks.render import snippet_chars
from memtrove.results import Document
from memtrove.results.lifecycle import Considered

__all__ = ["Trail"]

INJECTED = "injected"
MAX_ROWS = 60


class Trail:
    """The documents a prompt considered, in the order first seen, with their fate."""

    def __init__(self, candidates: Iterable[str]) -> None:
        self._order = list(dict.fromkeys(candidates))
        self._doc: dict[str, tuple[int, float]] = {}
        self._reason: dict[str, str] = {}

    def admitted(
        self, ranked: Sequence[tuple[Document, float]], refused: Mapping[str, str]
    ) -> None:
        """The candidates that passed the filters, with their scores; ``refused`` says why
        the others did not."""
        for document, score in ranked:
            self._doc[f"{document.collection}/{document.path}"] = (document.doc_id, score)
        for key in self._order:
            if key not in self._doc:
                self._reason.setdefault(key, refused.get(key, "not admitted"))

    def kept(self, ranked: Sequence[tuple[Document, float]], reason: str) -> None:
        """After a step: every admitted document not in ``ranked`` was dropped for ``reason``."""
        alive = {f"{document.collection}/{document.path}" for document, _ in ranked}
        self._drop((key for key in self._doc if key not in alive), reason)

    def shown(self, keys: Sequence[str]) -> list[Considered]:
        """The trail once ``keys`` were injected: injected rows first (in their order), then
        those left out, best score first (at most :data:`MAX_ROWS`)."""
        shown = set(keys)
        self._drop((key for key in self._doc if key not in shown), "budget or guard")
        best = max((self._doc[key][1] for key in keys if key in self._doc), default=0.0)
        rows = [
            Considered(key, *self._doc[key], INJECTED, "", snippet_chars(self._doc[key][1], best))
            for key in keys
            if key in self._doc
        ]
        left = [
            Considered(key, *self._doc.get(key, (0, 0.0)), "left out", self._reason[key], 0)
            for key in self._order
            if key not in shown and key in self._reason
        ]
        left.sort(key=lambda row: -row.score)
        return (rows + left)[:MAX_ROWS]

    def _drop(self, keys: Iterable[str], reason: str) -> None:
        for key in list(keys):
            self._reason.setdefault(key, reason)
