"""The shape every conversation reader produces, and how a conversation becomes exchanges.

A format reader (one module per format under :mod:`memtrove.mine.formats`) turns a file (or
an export folder) into :class:`Conversation` values, one at a time, so a file of hundreds of
megabytes never sits in memory whole. Each conversation is the branch the user kept, already
cleaned of noise, as a sequence of :class:`Message` values in order. Whatever a reader has to
drop (a malformed line, a conversation it cannot follow) it counts in :class:`Skips` under a
short reason instead of failing the file.

:func:`exchanges` then cuts a conversation into exchanges: a user message together with the
replies up to the next user message. An exchange's ``key`` is stable across re-imports of a
file that grew (it comes from the source's own message id when there is one), so the document
written for it keeps its path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["Conversation", "Exchange", "Message", "Skips", "exchanges", "word"]

USER = "user"
ASSISTANT = "assistant"


class Message(NamedTuple):
    """One message of a conversation, after the reader's cleaning."""

    role: str
    """``user`` or ``assistant`` (tool results are folded into the assistant's reply)."""
    speaker: str
    """Display name: ``User``, ``Claude``, ``ChatGPT``, a Slack user's real name."""
    text: str
    timestamp: str | None
    """UTC ISO-8601 (``2025-03-01T12:00:00Z``), or None when the source has no time."""
    key: str | None = None
    """The source's own id for the message (uuid, node id, Slack ts), when it has one."""


class Conversation(NamedTuple):
    """One conversation (session, chat, channel thread) from one source file or folder."""

    format: str
    """The format label: ``claude-code``, ``codex``, ``chatgpt``, ``claude-ai``, ``slack``, ``text``."""
    source: Path
    conversation_id: str
    """Stable id: session id, conversation uuid, ``channel/thread_ts``, or the file's relative path."""
    title: str | None
    messages: tuple[Message, ...]


class Exchange(NamedTuple):
    """A user message and the replies that follow it, up to the next user message."""

    conversation: Conversation
    ordinal: int
    """Position in the conversation, from 0."""
    key: str
    """Stable identity within the conversation: the user message's key, else the ordinal."""
    messages: tuple[Message, ...]

    @property
    def authored_at(self) -> str | None:
        """The latest timestamp inside this exchange only."""
        stamps = [message.timestamp for message in self.messages if message.timestamp]
        return max(stamps) if stamps else None

    @property
    def speakers(self) -> tuple[str, ...]:
        """Who speaks in the exchange, in order of first appearance."""
        return tuple(dict.fromkeys(message.speaker for message in self.messages))


class Skips(Counter[str]):
    """Counts of what a reader dropped, by reason (``malformed line``, ``no messages``...)."""

    def skip(self, reason: str, count: int = 1) -> None:
        """Count ``count`` items dropped for ``reason``."""
        self[reason] += count


def word(value: object) -> str | None:
    """``value`` when it is a string, else None: a field that names a kind (``"type"``,
    ``"role"``) may hold a list or an object in a damaged file, and is then looked up in
    sets of names, which cannot hold those."""
    return value if isinstance(value, str) else None


def exchanges(conversation: Conversation) -> Iterator[Exchange]:
    """Cut ``conversation`` into exchanges; assistant messages before the first user one open
    an exchange of their own."""
    group: list[Message] = []
    ordinal = 0
    for message in conversation.messages:
        if message.role == USER and group:
            yield _exchange(conversation, ordinal, group)
            ordinal += 1
            group = []
        group.append(message)
    if group:
        yield _exchange(conversation, ordinal, group)


def _exchange(conversation: Conversation, ordinal: int, group: Iterable[Message]) -> Exchange:
    messages = tuple(group)
    first = messages[0]
    key = first.key if first.role == USER and first.key else str(ordinal)
    return Exchange(conversation, ordinal, key, messages)
