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

Bounds: a reader opens its source through :func:`open_source` (no link followed, only a
regular file, at most :data:`MAX_SOURCE_BYTES`), and :func:`exchanges` cuts a message longer
than :data:`MAX_MESSAGE_CHARS` characters, and the messages of an exchange past
:data:`MAX_EXCHANGE_CHARS` in all, each cut counted (``message cut to 1,000,000
characters``): one pasted log of 120 million characters costs one bounded document, never
minutes of redaction and indexing, and no mined document is larger than what ``update``
indexes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from memtrove.files import open_regular

__all__ = [
    "LINE_TOO_LONG",
    "MAX_EXCHANGE_CHARS",
    "MAX_LINE_BYTES",
    "MAX_MESSAGE_CHARS",
    "MAX_SOURCE_BYTES",
    "Conversation",
    "Exchange",
    "Message",
    "Skips",
    "bounded_lines",
    "exchanges",
    "open_source",
    "word",
]

USER = "user"
ASSISTANT = "assistant"
MAX_SOURCE_BYTES = 4 << 30
"""The largest conversation file (or export zip member) a reader takes: they are streamed,
so this bounds time, not memory."""
MAX_LINE_BYTES = 256 << 20
"""The longest line of a JSON-lines source read: a longer one is skipped, never held."""
LINE_TOO_LONG = "line longer than 256 MB"
MAX_MESSAGE_CHARS = 1_000_000
"""A message is cut after this many characters (about 250 pages of text)."""
MAX_EXCHANGE_CHARS = 4_000_000
"""An exchange's messages are cut once they hold this many characters in all: its document
stays under the 5 MB a file ``update`` indexes may hold."""


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


def open_source(path: Path) -> BinaryIO:
    """A source file found in the folder mined, opened for a reader: never through a link,
    only a regular file, at most :data:`MAX_SOURCE_BYTES` (:mod:`memtrove.files`; a
    refusal is a ``Refused`` the run counts by its reason)."""
    return open_regular(path, max_bytes=MAX_SOURCE_BYTES, follow=False)


def bounded_lines(handle: BinaryIO, max_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes | None]:
    """The lines of ``handle``, each None when it is longer than ``max_bytes`` (read past in
    chunks, never held whole): a file of one endless line costs no memory."""
    while True:
        line = handle.readline(max_bytes + 1)
        if not line:
            return
        if len(line) > max_bytes and not line.endswith(b"\n"):
            while True:
                rest = handle.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
            continue
        yield line


def exchanges(conversation: Conversation, cuts: Counter[str] | None = None) -> Iterator[Exchange]:
    """Cut ``conversation`` into exchanges; assistant messages before the first user one open
    an exchange of their own. Long messages are cut (see the module doc), counted in
    ``cuts`` when it is given."""
    group: list[Message] = []
    ordinal = 0
    for message in conversation.messages:
        if message.role == USER and group:
            yield _exchange(conversation, ordinal, group, cuts)
            ordinal += 1
            group = []
        group.append(message)
    if group:
        yield _exchange(conversation, ordinal, group, cuts)


def _bounded(group: Iterable[Message], cuts: Counter[str] | None) -> tuple[Message, ...]:
    messages: list[Message] = []
    left = MAX_EXCHANGE_CHARS
    for message in group:
        limit = min(MAX_MESSAGE_CHARS, left)
        text = message.text
        if len(text) > limit:
            reason = (
                f"message cut to {MAX_MESSAGE_CHARS:,} characters"
                if limit == MAX_MESSAGE_CHARS
                else f"exchange cut to {MAX_EXCHANGE_CHARS:,} characters"
            )
            if cuts is not None:
                cuts[reason] += 1
            text = f"{text[:limit]}\n[cut: {len(text) - limit:,} more characters]"
            message = message._replace(text=text)
        left = max(0, left - min(len(message.text), limit))
        messages.append(message)
    return tuple(messages)


def _exchange(
    conversation: Conversation,
    ordinal: int,
    group: Iterable[Message],
    cuts: Counter[str] | None = None,
) -> Exchange:
    messages = _bounded(group, cuts)
    first = messages[0]
    key = first.key if first.role == USER and first.key else str(ordinal)
    return Exchange(conversation, ordinal, key, messages)
