"""The sessions area (``vault.sessions``): what hooks saw and injected, per session and prompt.

Contract: given the vault's database, the redaction of stored text (prompts are stored as the
vault would store them) and the vault's clock (session windows are measured against it). Its
statements are those of :mod:`memtrove.lifecycle.sessions` (``hook_dedupe``,
``context_usage``, ``recall_events`` and ``recall_stats``, ``co_activations``,
``session_log``, the curation log) and :mod:`memtrove.lifecycle.recall`; documents are only
read. Curation (:mod:`.curation`) logs its pins, snoozes and forgets through
:meth:`SessionsArea.note_curation`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from memtrove.errors import MemtroveError
from memtrove.retrieval.arguments import MAX_LIMIT, check_count, check_limit

if TYPE_CHECKING:
    from datetime import datetime

    from memtrove.db.connection import Connection
    from memtrove.db.database import Database
    from memtrove.lifecycle.recall import RecallHistory
    from memtrove.results import SessionRecord
    from memtrove.results.lifecycle import Considered, PromptRecord
    from memtrove.vault.areas import Clock, Redact

# Session tracking and recall are imported by the methods that use them: a search (the
# commonest short command) uses none of them.

__all__ = ["SessionsArea"]

_Found = TypeVar("_Found")


class SessionsArea:
    """Recording what hooks saw and injected, and reading it back per session or document."""

    def __init__(self, database: Database, *, redact: Redact, clock: Clock) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.redact, self._clock = redact, clock

    def hook_seen(
        self, hook_name: str, prompt: str, window_seconds: int = 600, session_id: str = ""
    ) -> bool:
        """True when ``hook_name`` saw this prompt (SHA-256 of it trimmed) within the window
        in the same session; records the sighting either way. Best-effort: a vault still
        locked after the busy timeout records nothing and answers False, never raising."""
        from memtrove.lifecycle import sessions

        prompt = self.redact(prompt)
        with self._lock:
            return sessions.record_prompt(
                self._connection, hook_name, prompt, window_seconds, self._clock(), session_id
            )

    def turn_index(self, session_id: str, hook_name: str = "context-surfacing") -> int:
        """How many context_usage rows ``hook_name`` logged for the session before now."""
        from memtrove.lifecycle import sessions

        with self._lock:
            return sessions.turn_index(self._connection, session_id, hook_name)

    def recent_queries(
        self, session_id: str, *, within_seconds: int = 600, limit: int = 2
    ) -> list[str]:
        """The session's latest context-surfacing prompts (query_text), newest first."""
        from memtrove.lifecycle import sessions

        return self._looking_back(sessions.recent_queries, session_id, within_seconds, limit)

    def last_injected(
        self, session_id: str, *, within_seconds: int = 600, limit: int = 2
    ) -> list[int]:
        """Ids of the first documents the session's latest context-surfacing turn injected."""
        from memtrove.lifecycle import sessions

        return self._looking_back(sessions.last_injected, session_id, within_seconds, limit)

    def _looking_back(
        self,
        read: Callable[[Connection, str, int, int, datetime], _Found],
        session_id: str,
        within_seconds: int,
        limit: int,
    ) -> _Found:
        """``read`` (a look-back of :mod:`memtrove.lifecycle.sessions`) over the session's last
        ``within_seconds``, at most ``limit`` rows (capped at ``MAX_LIMIT``)."""
        with self._lock:
            return read(
                self._connection,
                session_id,
                check_count("within_seconds", within_seconds),
                min(check_count("limit", limit), MAX_LIMIT),
                self._clock(),
            )

    def log_context_usage(
        self,
        session_id: str,
        hook_name: str,
        *,
        injected: Sequence[tuple[int, float]] = (),
        estimated_tokens: int = 0,
        turn_index: int = 0,
        query_text: str | None = None,
        considered: Sequence[Considered] = (),
    ) -> int:
        """Log one hook run (context_usage, recall events and stats, co-activations, session
        log, and the injection audit of what it ``considered``) in one write transaction;
        ``injected`` holds (doc id, score). Returns its id.

        A locked vault is waited for: the write is retried for 30 s (on top of the busy
        timeout) before VaultBusyError. An unknown doc id raises DocumentNotFoundError.
        """
        from memtrove.lifecycle import sessions

        if query_text is not None:
            query_text = self.redact(query_text)
        with self._lock:
            return sessions.log_context_usage(
                self._connection,
                session_id,
                hook_name,
                injected=injected,
                estimated_tokens=check_count("estimated_tokens", estimated_tokens),
                turn=check_count("turn_index", turn_index),
                query_text=query_text,
                now=self._clock(),
                considered=considered,
            )

    def co_activation_count(self, doc_id: int) -> int:
        """How often the document was injected together with any other document."""
        from memtrove.lifecycle import sessions

        with self._lock:
            return sessions.co_activation_count(self._connection, doc_id)

    def prompts_since_curation(self, hook_name: str = "context-surfacing") -> int:
        """Prompts (``hook_name`` rows) since the last pin, snooze or forget."""
        from memtrove.lifecycle import sessions

        with self._lock:
            return sessions.prompts_since_curation(self._connection, hook_name)

    def note_curation(self, action: str) -> None:
        """Log a curation (``memory_pin``, ``memory_snooze``, ``memory_forget``), which
        :meth:`prompts_since_curation` counts from. Best effort: a locked vault must not undo
        the curation that just committed."""
        from memtrove.lifecycle import sessions

        with self._lock, contextlib.suppress(MemtroveError):
            sessions.log_curation(self._connection, action, self._clock())

    def co_activation_pairs(self, doc_ids: Sequence[int]) -> dict[tuple[int, int], int]:
        """How often each pair of ``doc_ids`` was injected together (keys ``(low, high)``)."""
        from memtrove.lifecycle import sessions

        with self._lock:
            return sessions.co_activation_pairs(self._connection, doc_ids)

    def session_prompts(self, session_id: str, limit: int = 200) -> list[PromptRecord]:
        """The prompts context-surfacing answered in session ``session_id``, oldest first
        (the newest ``limit``), each with what it injected and whether the reply used it."""
        from memtrove.lifecycle import sessions

        limit = check_limit(limit, ceiling=1000)
        with self._lock:
            return sessions.session_prompts(self._connection, session_id, limit)

    def recall_history(self, ref: str, limit: int = 50) -> RecallHistory:
        """How often document ``ref`` (a forgotten or archived one too) was injected, into
        how many sessions and how often the reply used it, with its newest ``limit``
        injections: session, moment, score, prompt, verdict (None: not judged)."""
        from memtrove.index.documents import get_document
        from memtrove.lifecycle.recall import recall_history

        limit = check_limit(limit, ceiling=1000)
        with self._lock:
            doc_id = get_document(self._connection, ref, include_inactive=True).doc_id
            return recall_history(self._connection, doc_id, limit)

    def session_log(self, limit: int = 10) -> list[SessionRecord]:
        """Recent sessions, the most recently active first."""
        from memtrove.lifecycle import sessions

        limit = check_limit(limit)
        with self._lock:
            return sessions.session_records(self._connection, limit)
