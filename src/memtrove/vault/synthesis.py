"""The synthesis area (``vault.synthesis``): the post-import conversation synthesis
(``memtrove mine --synthesize``), the decisions, preferences, milestones and problems of mined
conversations as linked documents.

Contract: given the vault's database, its models (the LLM that reads the conversations) and
the vault's clock. Its statements are those of :mod:`memtrove.mine.synthesize` (conversation
documents read, synthesized documents and their links written).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memtrove.errors import InvalidQueryError
from memtrove.vault.areas import chosen_llm

if TYPE_CHECKING:  # the synthesis module loads on first use: a search never needs it
    from memtrove.db.database import Database
    from memtrove.mine.synthesize import SynthesisReport
    from memtrove.models.registry import Models
    from memtrove.vault.areas import Clock

__all__ = ["SynthesisArea"]

MAX_SYNTHESIS_DOCS = 10_000


class SynthesisArea:
    """Facts and links from imported conversations, by the configured LLM."""

    def __init__(self, database: Database, *, models: Models, clock: Clock) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.models, self._clock = models, clock

    def synthesize_conversations(
        self,
        document_ids: Sequence[int] | None = None,
        *,
        collection: str | None = None,
        max_docs: int = 20,
        use_llm: bool = True,
    ) -> SynthesisReport:
        """Extract the facts of the conversation documents ``document_ids`` (or, when None,
        of every ``conversation`` document of ``collection``), the first ``max_docs`` by id
        (0-10000); save them under ``_memtrove/synthesized/`` and link them.
        Without a configured LLM (or with ``use_llm=False``) nothing is asked or written and
        the report's ``llm`` is False. Failures are counted, never raised: the import the
        documents came from is never undone."""
        from memtrove.mine.synthesize import conversation_ids, synthesize

        if isinstance(max_docs, bool) or not isinstance(max_docs, int):
            raise InvalidQueryError("max_docs must be an integer")
        if not 0 <= max_docs <= MAX_SYNTHESIS_DOCS:
            raise InvalidQueryError(f"max_docs must be between 0 and {MAX_SYNTHESIS_DOCS}")
        if document_ids is None:
            if collection is None:
                raise InvalidQueryError("give document ids or a collection to synthesize")
            with self._lock:
                document_ids = conversation_ids(self._connection, collection)
        ids = [int(doc_id) for doc_id in document_ids if not isinstance(doc_id, bool)]
        llm = chosen_llm(self.models, use_llm)
        return synthesize(self._connection, ids, llm, max_docs, lock=self._lock, clock=self._clock)
