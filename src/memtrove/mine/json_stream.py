"""The items of a large JSON export, one at a time, without loading the whole file.

ChatGPT's and Claude.ai's ``conversations.json`` are one JSON array of conversations (the
192-conversation ChatGPT export is 2.8 MB on one line; real ones reach hundreds of MB).
:func:`json_items` reads the file in chunks and decodes one array item at a time with the
standard library's decoder, so memory holds the current conversation and one chunk, never the
whole export; a file holding a single object yields that object. No third-party streaming
parser is needed for this shape: the items are decoded by the C scanner of :mod:`json`.

The export zip that ChatGPT and Claude.ai deliver is read in place: its ``conversations.json``
(at the top, or in the one folder the zip holds; ``conversations-000.json``... when split) is
streamed out of the zip the same way; :func:`export_head` gives the readers' ``sniff`` the
first bytes of that file.

Bounds: one item may be at most :data:`MAX_ITEM_CHARS` characters (a conversation larger than
that is skipped with a counted reason, and so is the rest of the file, which cannot be
resynchronised). A syntax error inside an item stops the file at that item; the items before
it were already yielded. Invalid UTF-8 is replaced, never fatal. The file, or the zip, is
opened through :func:`memtrove.mine.exchanges.open_source` (no link, only a regular file);
a zip member larger than :data:`memtrove.mine.exchanges.MAX_SOURCE_BYTES` once uncompressed
(a zip bomb) or stored as a link is skipped with its reason, unread.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from memtrove.files import Refused, zip_member_refusal
from memtrove.mine.exchanges import MAX_SOURCE_BYTES, Skips, open_source

__all__ = ["CHUNK_CHARS", "MAX_ITEM_CHARS", "export_head", "json_items"]

CHUNK_CHARS = 1 << 20
MAX_ITEM_CHARS = 256 << 20
_SPACE = " \t\r\n"
_MEMBER = re.compile(r"(?:[^/]+/)?conversations(?:-\d{1,6})?\.json")
_ZIP_ERRORS = (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, RuntimeError)


def _members(archive: zipfile.ZipFile) -> list[str]:
    """The conversation files of an export zip, in order (the top ones, else one folder's)."""
    names = [info.filename for info in archive.infolist() if not info.is_dir()]
    members = sorted(name for name in names if _MEMBER.fullmatch(name))
    top = [name for name in members if "/" not in name]
    return top or members


def export_head(path: Path, head: bytes) -> bytes | None:
    """What a JSON export's ``sniff`` looks at: ``head`` for a ``.json`` file, the first
    bytes of an export zip's first conversation file (b"" for a zip without one), None for
    any other file."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return head
    if suffix != ".zip":
        return None
    try:
        with open_source(path) as handle, zipfile.ZipFile(handle) as archive:
            members = _members(archive)
            if not members:
                return b""
            with archive.open(members[0]) as member:
                return member.read(len(head) or 8192)
    except _ZIP_ERRORS:
        return b""


def json_items(path: Path, skips: Skips) -> Iterator[Any]:
    """Each item of the JSON array in ``path`` (or the one value the file holds); of an
    export zip, each item of each of its conversation files."""
    if path.suffix.lower() != ".zip":
        with io.TextIOWrapper(open_source(path), encoding="utf-8", errors="replace") as handle:
            yield from _items(handle, skips)
        return
    try:
        with open_source(path) as source, zipfile.ZipFile(source) as archive:
            for name in _members(archive):
                refusal = zip_member_refusal(archive.getinfo(name), MAX_SOURCE_BYTES)
                if refusal is not None:  # a zip bomb, or a link stored as a member
                    skips.skip(refusal)
                    continue
                with archive.open(name) as member:
                    text = io.TextIOWrapper(member, encoding="utf-8", errors="replace")
                    yield from _items(text, skips)
    except Refused:
        raise  # the run counts it by its reason
    except _ZIP_ERRORS:
        skips.skip("unreadable zip")


def _items(handle: IO[str], skips: Skips) -> Iterator[Any]:
    decoder = json.JSONDecoder()
    buffer = handle.read(CHUNK_CHARS).lstrip(_SPACE + "\ufeff")
    if not buffer.startswith("["):
        yield from _whole(handle, buffer, decoder, skips)
        return
    position, ended, want = 1, False, CHUNK_CHARS
    while True:
        position = _skip_separators(buffer, position)
        if position >= len(buffer) and not ended:
            buffer, position = _more(handle, buffer, position, CHUNK_CHARS)
            ended = position < 0
            position = max(position, 0)
            continue
        if position >= len(buffer) or buffer[position] == "]":
            if position >= len(buffer):
                skips.skip("truncated JSON")
            return
        try:
            item, end = decoder.raw_decode(buffer, position)
        except ValueError:
            if ended:
                skips.skip("malformed JSON")
                return
            if len(buffer) - position > MAX_ITEM_CHARS:
                skips.skip("conversation too large")
                return
            buffer, position = _more(handle, buffer, position, want)
            ended = position < 0
            position = max(position, 0)
            want = min(want * 2, MAX_ITEM_CHARS)  # a big item is re-decoded log(n) times
            continue
        want = CHUNK_CHARS
        yield item
        position = end


def _whole(handle: Any, buffer: str, decoder: json.JSONDecoder, skips: Skips) -> Iterator[Any]:
    rest = handle.read(MAX_ITEM_CHARS + 1 - len(buffer))
    text = buffer + rest
    if len(text) > MAX_ITEM_CHARS:
        skips.skip("conversation too large")
        return
    try:
        value, _ = decoder.raw_decode(text)
    except ValueError:
        skips.skip("malformed JSON")
        return
    yield value


def _skip_separators(buffer: str, position: int) -> int:
    while position < len(buffer) and buffer[position] in _SPACE + ",":
        position += 1
    return position


def _more(handle: Any, buffer: str, position: int, size: int) -> tuple[str, int]:
    """Drop what was consumed and read ``size`` more characters; position -1 at the end."""
    chunk = handle.read(size)
    buffer = buffer[position:] + chunk
    return buffer, (0 if chunk else -1)
