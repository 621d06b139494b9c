"""What a search returns inside the retrieval package before it becomes a result record:
:class:`Ranking`, ranked document ids with scores and the stages, skips and warnings that
produced them."""

from __future__ import annotations

__all__ = ["NO_VECTORS", "Ranking"]

NO_VECTORS = "the vault has no vectors yet; run `memtrove embed`"


class Ranking:
    """Ranked document ids with scores, and what produced them (filled in as stages run).

    ``scale`` (hybrid): the best hit's own score (``SearchResults.scale``). ``failed``: the
    legs that were asked for but failed at run time (a model service, the vectors), each
    also in ``skipped`` with its reason; ``dropped``: hits left out after fetching, by
    reason (see ``SearchResults.degraded_reason``).
    """

    __slots__ = ("best_seq", "dropped", "failed", "hits", "scale", "skipped", "stages", "warnings")

    def __init__(
        self,
        hits: list[tuple[int, float]] | None = None,
        stages: list[str] | None = None,
        skipped: dict[str, str] | None = None,
        warnings: list[str] | None = None,
        best_seq: dict[int, int] | None = None,
        scale: float | None = None,
    ) -> None:
        self.hits = [] if hits is None else hits
        self.stages = [] if stages is None else stages
        self.skipped = {} if skipped is None else skipped
        self.warnings = [] if warnings is None else warnings
        self.best_seq = {} if best_seq is None else best_seq
        self.scale = scale
        self.failed: list[str] = []
        self.dropped: dict[str, int] = {}

    def fail(self, leg: str, error: Exception) -> None:
        """Record that ``leg`` was asked for and failed (skipped, with the error); a vault
        with no vectors yet is skipped, not failed (nothing was lost: there is none)."""
        self.skipped[leg] = str(error)
        if leg not in self.failed and str(error) != NO_VECTORS:
            self.failed.append(leg)

    def __repr__(self) -> str:
        return f"Ranking(hits={self.hits!r}, stages={self.stages!r}, skipped={self.skipped!r})"
