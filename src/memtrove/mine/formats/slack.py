"""Slack workspace export: a folder, or the ``.zip`` Slack delivers (read in place, never
extracted to disk).

Layout: ``channels.json``, ``groups.json`` (private channels), ``dms.json`` and
``mpims.json`` describe the conversations; ``users.json`` the people; each conversation has
a directory of day files ``YYYY-MM-DD.json`` (a JSON list of messages). A directory named in
none of the lists is still read when it holds day files.

What becomes a conversation:

- **a thread** (a parent with ``thread_ts == ts`` and its replies, wherever their day files
  are) is one conversation, ``<channel>/<thread_ts>``, kept together in time order;
- **the rest of a channel** (messages outside any thread) is one conversation, ``<channel>``.

Slack has no assistant, so the exchange cut is defined by time: a message opens a new
exchange (it gets the ``user`` role, the others ``assistant``) when it comes
:data:`GAP_SECONDS` or more after the previous message of the channel, or when the current
exchange already holds :data:`MAX_EXCHANGE_MESSAGES` messages. In a thread only the size
limit cuts: a thread's parent opens it, and an answer a day later still belongs with the
question. Every message keeps its author as speaker.

Speakers: ``users.json`` (``real_name``, then the profile's ``real_name`` and
``display_name``, then ``name``), else the ``user_profile`` a message carries, else names
learnt from ``<@U123|name>`` mentions, else the user id. Mentions, channel links and links
are rendered as text (``@Name``, ``#channel``, ``label (url)``); files are named.

Skipped and counted: bot messages (``bot_message`` or a ``bot_id``), joins, leaves, topic and
purpose changes and the other housekeeping subtypes, deleted messages (``tombstone``) and
messages with no text. Day files larger than :data:`MAX_DAY_FILE_BYTES` are skipped, and so
are the entries of an export folder that are symbolic links (a day file, a list file or a
channel folder, wherever it points) or not regular files (a FIFO, a device): they are
counted, never followed or opened (:mod:`memtrove.files`). Zip members that are links
or larger than the cap once uncompressed are skipped the same way.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Iterator
from html import unescape
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, NamedTuple

from memtrove.files import (
    NOT_REGULAR,
    SYMLINK,
    Refused,
    entry_refusal,
    read_beneath,
    zip_member_refusal,
)
from memtrove.mine.exchanges import ASSISTANT, USER, Conversation, Message, Skips, open_source
from memtrove.text import iso_from_timestamp, scrub

__all__ = ["GAP_SECONDS", "LABEL", "MAX_EXCHANGE_MESSAGES", "read", "sniff"]

LABEL = "slack"
GAP_SECONDS = 30 * 60
MAX_EXCHANGE_MESSAGES = 20
MAX_DAY_FILE_BYTES = 64 << 20
_LISTS = {
    "channels.json": "channel",
    "groups.json": "group",
    "dms.json": "dm",
    "mpims.json": "mpim",
}
_KEPT_SUBTYPES = frozenset(
    {None, "", "file_share", "file_comment", "thread_broadcast", "me_message", "file_mention"}
)
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
_TS = re.compile(r"^\d{1,11}(?:\.\d{1,9})?$")  # 11 digits: within year 9999
_MARKUP = re.compile(r"<([^<>\n]{1,2000})>")


class _Post(NamedTuple):
    ts: float
    key: str
    thread: str | None  # the thread's ts, for a parent and its replies
    user: str
    text: str


class _Export:
    """The files of an export, from a folder or a zip (one optional top folder inside).

    A folder is listed without following anything: a link (a list file, a channel folder or
    a day file that is one, wherever it points) and what is not a regular file (a FIFO, a
    device) are left out and counted in ``refused``; each file is then read through
    :func:`memtrove.files.read_beneath`, which checks again once it is open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip: zipfile.ZipFile | None = None
        self.prefix = ""
        self.refused: list[str] = []
        self.handle: BinaryIO | None = None
        names: list[str]
        if path.is_dir():
            names = self._listing(path)
        else:
            self.handle = open_source(path)
            try:
                self.zip = zipfile.ZipFile(self.handle)
            except BaseException:
                self.handle.close()
                raise
            names = [info.filename for info in self.zip.infolist() if not info.is_dir()]
            top = {name for name in names if "/" not in name}
            folders = {name.split("/")[0] for name in names if "/" in name}
            if not top & {*_LISTS, "users.json"} and len(folders) == 1:
                self.prefix = f"{next(iter(folders))}/"  # zipped with its folder
        self.names = [name[len(self.prefix) :] for name in names if name.startswith(self.prefix)]

    def _listing(self, path: Path) -> list[str]:
        names: list[str] = []
        folders: list[str] = []
        for entry in _entries(path):
            refusal = entry_refusal(entry)
            if refusal is not None:
                # a link may stand for a channel folder: counted whatever its name
                if refusal == SYMLINK or entry.name.endswith(".json"):
                    self.refused.append(refusal)
            elif entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            elif entry.name.endswith(".json"):
                names.append(entry.name)
        for folder in folders:
            for entry in _entries(path / folder):
                if not _DAY.match(entry.name):
                    continue
                refusal = entry_refusal(entry)
                if refusal is None and entry.is_dir(follow_symlinks=False):
                    refusal = NOT_REGULAR
                if refusal is not None:
                    self.refused.append(refusal)
                else:
                    names.append(f"{folder}/{entry.name}")
        return names

    def close(self) -> None:
        if self.zip is not None:
            self.zip.close()
        if self.handle is not None:
            self.handle.close()

    def has(self, name: str) -> bool:
        return name in self.names

    def days(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for name in self.names:
            parts = PurePosixPath(name).parts
            if len(parts) == 2 and _DAY.match(parts[1]):
                found.setdefault(parts[0], []).append(name)
        return {folder: sorted(files) for folder, files in sorted(found.items())}

    def load(self, name: str, skips: Skips) -> Any:
        """The JSON of one member; None (counted) when it is refused, unreadable or too
        large."""
        try:
            if self.zip is not None:
                info = self.zip.getinfo(self.prefix + name)
                refusal = zip_member_refusal(info, MAX_DAY_FILE_BYTES)
                if refusal is not None:
                    skips.skip(refusal)
                    return None
                data = self.zip.read(info)
            else:
                data = read_beneath(self.path, name, MAX_DAY_FILE_BYTES)
            return json.loads(data.decode("utf-8", errors="replace"))
        except Refused as refused:
            skips.skip(refused.reason)
            return None
        except (OSError, KeyError, ValueError, zipfile.BadZipFile, RuntimeError):
            skips.skip("malformed file")
            return None


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` by name ([] when it cannot be listed)."""
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return []


def sniff(path: Path, head: bytes) -> bool:
    """A folder or ``.zip`` with Slack's list files and day files of at least one channel."""
    if path.is_dir():
        return _looks_like_export(path)
    if not (path.suffix.lower() == ".zip" and head.startswith(b"PK")):
        return False
    try:
        export = _Export(path)
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    try:
        known = any(export.has(name) for name in (*_LISTS, "users.json"))
        return known and bool(export.days())
    finally:
        export.close()


def _looks_like_export(path: Path) -> bool:
    """A folder's quick test (a scan asks it of every folder): a list file at the top and
    one sub-folder holding a day file, stopping at the first found. Nothing is followed."""
    lists = {*_LISTS, "users.json"}
    try:
        with os.scandir(path) as listing:
            entries = list(listing)
        if not any(e.name in lists and e.is_file(follow_symlinks=False) for e in entries):
            return False
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as days:
                    if any(_DAY.match(day.name) for day in days):
                        return True
    except OSError:
        return False
    return False


def read(path: Path, skips: Skips) -> Iterator[Conversation]:
    """Each channel's messages outside threads, then each of its threads."""
    try:
        export = _Export(path)
    except Refused:
        raise  # the run counts it by its reason
    except (OSError, zipfile.BadZipFile, ValueError):
        skips.skip("unreadable export")
        return
    try:
        for reason in export.refused:
            skips.skip(reason)
        names = _names(export, skips)
        listed = _listed(export, skips)
        for folder, files in export.days().items():
            title = listed.get(folder, f"#{folder}")
            posts = list(_posts(export, files, names, skips))
            yield from _conversations(path, folder, title, posts, names)
    finally:
        export.close()


def _names(export: _Export, skips: Skips) -> dict[str, str]:
    names: dict[str, str] = {}
    users = export.load("users.json", skips) if export.has("users.json") else None
    for user in users if isinstance(users, list) else []:
        if isinstance(user, dict) and isinstance(user.get("id"), str):
            name = _person(user) or _person(user.get("profile"))
            if name:
                names[user["id"]] = name
    return names


def _person(record: object) -> str | None:
    if not isinstance(record, dict):
        return None
    for key in ("real_name", "display_name", "name"):
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return scrub(" ".join(value.split()))[:80]
    return None


def _listed(export: _Export, skips: Skips) -> dict[str, str]:
    """Conversation folder -> title, from the list files."""
    titles: dict[str, str] = {}
    for list_name, kind in _LISTS.items():
        entries = export.load(list_name, skips) if export.has(list_name) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict):
                continue
            name, identity = entry.get("name"), entry.get("id")
            folder = name if isinstance(name, str) and name else identity
            if not isinstance(folder, str) or not folder:
                continue
            titles[folder] = f"#{folder}" if kind in ("channel", "group") else f"{kind} {folder}"
            if isinstance(identity, str) and identity != folder:
                titles.setdefault(identity, titles[folder])
    return titles


def _posts(
    export: _Export, files: list[str], names: dict[str, str], skips: Skips
) -> Iterator[_Post]:
    for name in files:
        messages = export.load(name, skips)
        if not isinstance(messages, list):
            if messages is not None:
                skips.skip("malformed file")
            continue
        for message in messages:
            post = _post(message, names, skips)
            if post is not None:
                yield post


def _post(message: object, names: dict[str, str], skips: Skips) -> _Post | None:
    if not isinstance(message, dict) or not _TS.match(str(message.get("ts", ""))):
        skips.skip("malformed message")
        return None
    subtype = message.get("subtype")
    if subtype is not None and not isinstance(subtype, str):
        skips.skip("malformed message")
        return None
    if subtype == "bot_message" or message.get("bot_id"):
        skips.skip("bot message")
        return None
    if subtype == "tombstone" or message.get("hidden") is True:
        skips.skip("deleted message")
        return None
    if subtype not in _KEPT_SUBTYPES:
        skips.skip(f"slack {subtype}" if isinstance(subtype, str) else "malformed message")
        return None
    user = message.get("user")
    comment = message.get("comment")
    if not isinstance(user, str) and isinstance(comment, dict):
        user = comment.get("user")  # file_comment: the commenter
    user = user if isinstance(user, str) and user else str(message.get("username") or "unknown")
    profile_name = _person(message.get("user_profile"))
    if profile_name and user not in names:
        names[user] = profile_name
    raw_text = message.get("text")
    text = _render(raw_text, names) if isinstance(raw_text, str) else ""
    raw_files = message.get("files")
    files: list[Any] = raw_files if isinstance(raw_files, list) else []
    if isinstance(message.get("file"), dict) and subtype != "file_share":
        files = [*files, message["file"]]
    labels = [_file_label(item) for item in files if isinstance(item, dict)]
    text = "\n".join(part for part in (text, *labels) if part).strip()
    if not text:
        skips.skip("empty message")
        return None
    ts = str(message["ts"])
    thread = message.get("thread_ts")
    return _Post(float(ts), ts, thread if isinstance(thread, str) and _TS.match(thread) else None,
                 user, scrub(text))  # fmt: skip


def _render(text: str, names: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if target.startswith("@"):
            identity = target[1:]
            if label and identity not in names:
                names[identity] = label  # learnt from the mention itself
            return "@" + names.get(identity, label or identity)
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            return "@" + (label or target[1:].split("^")[0])
        return f"{label} ({target})" if label and label != target else target

    return unescape(_MARKUP.sub(replace, text)).strip()


def _file_label(item: dict[str, Any]) -> str:
    name = item.get("title") or item.get("name")
    return f"[file {' '.join(str(name).split())[:120]}]" if name else "[file]"


def _conversations(
    source: Path, folder: str, title: str, posts: list[_Post], names: dict[str, str]
) -> Iterator[Conversation]:
    posts.sort(key=lambda post: (post.ts, post.key))
    threads: dict[str, list[_Post]] = {}
    stream: list[_Post] = []
    answered = {post.thread for post in posts if post.thread and post.thread != post.key}
    for post in posts:
        if post.thread in answered:
            threads.setdefault(post.thread, []).append(post)
        else:
            stream.append(post)
    if stream:
        yield Conversation(LABEL, source, folder, title, _messages(stream, names, gap=True))
    for thread_ts, replies in threads.items():
        messages = _messages(replies, names, gap=False)
        yield Conversation(LABEL, source, f"{folder}/{thread_ts}", f"{title} thread", messages)


def _messages(posts: list[_Post], names: dict[str, str], *, gap: bool) -> tuple[Message, ...]:
    messages: list[Message] = []
    size = 0
    previous: float | None = None
    for post in posts:
        opens = (
            previous is None
            or size >= MAX_EXCHANGE_MESSAGES
            or (gap and post.ts - previous >= GAP_SECONDS)
        )
        size = 1 if opens else size + 1
        previous = post.ts
        messages.append(
            Message(
                role=USER if opens else ASSISTANT,
                speaker=names.get(post.user, post.user),
                text=post.text,
                timestamp=iso_from_timestamp(post.ts),
                key=post.key,
            )
        )
    return tuple(messages)
