"""The diary area: notes an agent (or a person) writes about its work, read back newest first.

Contract: given the vault's database, the redaction of stored text, the vault's clock and
the embedding of what was just written (:meth:`CaptureArea.embed_written`, so a new entry
is found by vector search at once where the vault has vectors). Its statements are those of
:mod:`memtrove.capture.diary` (documents in ``_memtrove/diary/``). Reached as
``diary_area(vault)``, built once per vault like every area.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memtrove.capture.diary import DiaryEntry
    from memtrove.db.database import Database
    from memtrove.vault.areas import Clock, Redact
    from memtrove.vault.core import Vault

__all__ = ["DiaryArea", "diary_area"]


class DiaryArea:
    """Writing and reading diary entries."""

    def __init__(
        self,
        database: Database,
        *,
        redact: Redact,
        clock: Clock,
        embed_written: Callable[[Sequence[int]], int],
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.redact, self._clock, self._embed_written = redact, clock, embed_written

    def write(self, entry: str, *, topic: str = "general", agent: str = "agent") -> DiaryEntry:
        """Save ``entry`` as a diary note of ``agent`` on ``topic`` (confidence 0.7);
        InvalidQueryError for an empty or oversized entry or an empty agent name."""
        from memtrove.capture.diary import write_diary
        from memtrove.index.documents import get_document

        with self._lock:
            written = write_diary(
                self._connection, entry, self._clock(), topic=topic, agent=agent,
                redact=self.redact,
            )  # fmt: skip
            doc_id = get_document(self._connection, written.path).doc_id
        self._embed_written([doc_id])
        return written

    def read(self, limit: int = 10, *, agent: str | None = None) -> builtins.list[DiaryEntry]:
        """The newest ``limit`` entries, newest first; ``agent``: only that agent's."""
        from memtrove.capture.diary import read_diary

        with self._lock:
            return read_diary(self._connection, limit, agent)


def diary_area(vault: Vault) -> DiaryArea:
    """``vault``'s diary area, built on first use."""
    return vault._area("diary", lambda: DiaryArea(
        vault.database, redact=vault.redact, clock=vault._now,
        embed_written=vault.capture.embed_written,
    ))  # fmt: skip
