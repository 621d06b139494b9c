"""The capture area (``vault.capture``): what a session leaves behind, written by the hooks.

Contract: given the vault's database, its models (the observer LLM, when one is configured,
and the embedder), the redaction of stored text and the vault's clock. The hooks read the
transcript (bounded) and pass its turns here; its statements are those of
:mod:`memtrove.capture` (observation, decision, antipattern and handoff documents, their
triples and links), :mod:`memtrove.lifecycle.feedback` (recall bookkeeping),
:mod:`memtrove.lifecycle.sessions` (``session_log``) and
:func:`memtrove.index.embedding.embed_documents` for what it just wrote. Every method fails
open in what it writes: a model that fails or times out means the heuristic path, never a
half-written capture.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memtrove.errors import MemtroveError
from memtrove.vault.areas import chosen_llm

if TYPE_CHECKING:
    from memtrove.capture.extractor import CaptureReport
    from memtrove.capture.handoff import HandoffReport
    from memtrove.capture.turns import Turn
    from memtrove.db.database import Database
    from memtrove.lifecycle.feedback import FeedbackReport
    from memtrove.lifecycle.sessions import Handoff
    from memtrove.models.registry import Models
    from memtrove.results import DocumentSummary
    from memtrove.vault.areas import Clock, Redact

__all__ = ["CaptureArea"]

_Report = TypeVar("_Report")


class CaptureArea:
    """Writing what a session leaves behind."""

    def __init__(self, database: Database, *, models: Models, redact: Redact, clock: Clock) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.models, self.redact, self._clock = models, redact, clock

    def embed_written(self, doc_ids: Sequence[int]) -> int:
        """Embed documents just written (a capture's, a handoff) into the vault's existing
        embedding space, so vector search finds them at once; the fragments embedded. A
        vault without vectors, vectors of another model, or an embedder that fails leave
        them pending for ``memtrove embed`` (0): what was written stands either way."""
        if not doc_ids:
            return 0
        with self._lock:  # no space recorded: nothing to join, and no embedder to load
            if self._connection.execute("SELECT 1 FROM embedding_space").fetchone() is None:
                return 0
        from memtrove.index.embedding import embed_documents

        try:
            with self._lock:
                return embed_documents(self._connection, self.models.embedder, doc_ids)
        except MemtroveError:
            return 0

    def capture_observations(
        self,
        session_id: str,
        turns: Sequence[Turn],
        *,
        use_llm: bool = True,
        invalidate: bool = False,
        time_budget: float = 20.0,
        retry_seconds: float = 5.0,
    ) -> CaptureReport:
        """``decision-extractor``: the session's new turns as observation, decision and
        antipattern documents, triples, causal links and contradiction penalties (see
        :mod:`memtrove.capture.extractor`). The LLM is asked within ``time_budget``
        seconds; ``invalidate`` also marks contradicted decisions invalidated."""
        from memtrove.capture.extractor import capture_turns

        report = self._written(
            capture_turns,
            session_id,
            turns,
            use_llm,
            time_budget,
            retry_seconds,
            invalidate=invalidate,
        )
        self.embed_written(report.documents)
        return report

    def write_handoff(
        self,
        session_id: str,
        turns: Sequence[Turn],
        *,
        use_llm: bool = True,
        time_budget: float = 20.0,
        retry_seconds: float = 5.0,
        project: str | None = None,
    ) -> HandoffReport:
        """``handoff-generator``: the session's handoff document and its session_log row
        (``project``: the project store's name of the session's folder)."""
        from memtrove.capture.handoff import write_handoff

        report = self._written(
            write_handoff, session_id, turns, use_llm, time_budget, retry_seconds, project=project
        )
        self.embed_written([report.doc_id])
        return report

    def apply_feedback(
        self, session_id: str, turns: Sequence[Turn], *, retry_seconds: float = 5.0
    ) -> FeedbackReport:
        """``feedback-loop``: which surfaced documents the replies used, per turn, and the
        recall bookkeeping that follows (see :mod:`memtrove.lifecycle.feedback`)."""
        from memtrove.lifecycle.feedback import apply_feedback

        with self._lock:
            return apply_feedback(
                self._connection, session_id, turns, self._clock(), retry_seconds=retry_seconds
            )

    def register_session(self, session_id: str, *, machine: str | None = None) -> None:
        """Create the session's session_log row if it is new (best-effort callers), with
        the host name it runs on (``machine``)."""
        from memtrove.lifecycle.sessions import register_session

        with self._lock:
            register_session(self._connection, session_id, self._clock(), machine)

    def latest_handoffs(
        self, limit: int = 1, *, exclude_session: str = "", project: str | None = None
    ) -> builtins.list[Handoff]:
        """The newest session handoffs (session_log), ``exclude_session`` left out;
        ``project``: only those of sessions in that project."""
        from memtrove.lifecycle.sessions import latest_handoffs

        with self._lock:
            return latest_handoffs(
                self._connection, limit, exclude_session=exclude_session, project=project
            )

    def recent_decisions(self, days: int = 7, limit: int = 10) -> builtins.list[DocumentSummary]:
        """Active, valid decision documents modified in the last ``days`` days, newest
        first."""
        from datetime import timedelta

        from memtrove.capture.store import recent_documents

        since = self._clock() - timedelta(days=max(0, days))
        with self._lock:
            return recent_documents(self._connection, "decision", since, limit)

    def _written(
        self,
        write: Callable[..., _Report],
        session_id: str,
        turns: Sequence[Turn],
        use_llm: bool,
        time_budget: float,
        retry_seconds: float,
        **options: Any,
    ) -> _Report:
        """``write`` (a capture of :mod:`memtrove.capture`) over the session's ``turns``, with
        the vault's connection, clock and redaction, and the LLM when ``use_llm`` and one is
        configured."""
        llm = chosen_llm(self.models, use_llm)
        return write(
            self._connection,
            session_id,
            turns,
            self._clock(),
            llm=llm,
            redact=self.redact,
            time_budget=time_budget,
            retry_seconds=retry_seconds,
            guard=lambda: self._lock,  # held for the connection, not across a model call
            **options,
        )
