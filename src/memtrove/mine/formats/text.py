"""Plain-text and Markdown transcripts (``.txt``, ``.md``), tried last.

Four forms are recognised, in this order; a file that is none of them is not a transcript
(it is reported as unrecognised, never guessed):

- a terminal capture of Claude Code: ``❯`` (or ``>``) prompts, ``●`` replies and tool lines
  (``● Bash(mix test)``), ``⎿`` results; the shell lines before the banner and the input box
  and status line after the last separator are left out, as are bare slash commands;
- an aider chat: ``#### `` prompts, the replies up to the next one, ``> `` quoted tool
  output kept as its first line (the Jekyll front matter and ``<div>`` wrappers dropped);
- role headings: ``## User`` / ``## Assistant`` / ``## 🤖 Claude`` (any level, emoji allowed),
  with ``🔧 Using tool: X`` blocks summarised and the 2-character edit gutter of exported
  transcripts stripped;
- role labels: ``User: ...`` / ``Assistant: ...`` (also ``Human``, ``Me``, ``AI``, ``Claude``...),
  the text on the same line or on the lines after a label alone (at least 4 messages); a
  chat log's time may lead the label (``[10:31] User:``, ``2024-03-01 10:31 - User:``).

Plain text carries no times: messages have none, unless the file states ``Date:`` in its
header (an exported transcript), which every message then takes, or a label is led by a full
date and time (read as UTC), which dates its message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from memtrove.files import Refused, read_regular
from memtrove.mine.exchanges import ASSISTANT, USER, Conversation, Message, Skips
from memtrove.mine.summaries import first_line, tool_line
from memtrove.text import parse_iso_datetime, scrub

__all__ = ["LABEL", "read", "sniff"]

LABEL = "text"

MAX_TEXT_BYTES = 64 * 1024 * 1024  # a transcript larger than this is not read whole
_SUFFIXES = {".txt", ".md", ".markdown"}
_USERS = {"user", "human", "me", "you", "question", "prompt"}
_ASSISTANTS = {"assistant", "ai", "claude", "chatgpt", "gpt", "bot", "codex", "gemini", "model"}
_ROLES = "|".join(sorted(_USERS | _ASSISTANTS, key=len, reverse=True))
# A chat log's time may lead the label: "[10:31] User:", "2024-03-01 10:31 - User:".
_STAMP = (
    r"(?:\[?(?P<stamp>(?:\d{4}-\d{2}-\d{2}[ T])?\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp][Mm])?)\]?"
    r"\s*(?:[-–|]\s*)?)?"
)
_LABEL_LINE = re.compile(rf"^\s*{_STAMP}\**(?P<role>{_ROLES})\**\s*:\s?(?P<text>.*)$", re.I)
_HEADING = re.compile(rf"^#{{1,6}}\s+(?:[^\w\s]+\s*)?({_ROLES})\s*:?\s*$", re.I)
_TOOL_CALL = re.compile(r"^([A-Z][\w ]*?)\((.*)\)\s*$")
_SEPARATOR = re.compile(r"^\s*[─━]{10,}\s*$")
_EXPAND = re.compile(r"\s*\((?:ctrl|shift)\+\w+ to \w+\)\s*$")
_USING_TOOL = re.compile(r"^🔧 Using tool:\s*(.+)$")

_Turn = tuple[str, str, str] | tuple[str, str, str, str | None]  # role, speaker, text[, time]
_AIDER_START = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?)")


def sniff(path: Path, head: bytes) -> bool:
    """A ``.txt`` or ``.md`` file of text (the reader then looks for a transcript form)."""
    return path.suffix.lower() in _SUFFIXES and b"\x00" not in head


def read(path: Path, skips: Skips) -> Iterator[Conversation]:
    """The transcript in ``path`` as one conversation, when it is one."""
    try:
        # no link followed, only a regular file: refusals other than the size are the run's
        data = read_regular(path, MAX_TEXT_BYTES, follow=False)
    except Refused as refused:
        if not refused.reason.startswith("larger than"):
            raise
        skips.skip("text file too large")
        return
    text = scrub(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    lines = _strip_gutter(text.splitlines())
    turns: list[_Turn] = []
    dropped = Skips()
    for parse in (_terminal, _aider, _headings, _labels):
        dropped = Skips()
        turns = parse(lines, dropped)
        if turns:
            break
    roles = {turn[0] for turn in turns}
    if len(turns) < 2 or roles != {USER, ASSISTANT}:
        return  # not a transcript: nothing was skipped from one
    skips.update(dropped)
    stamp = _header_value(lines, "Date")
    timestamp = parse_iso_datetime(stamp.replace(" ", "T", 1)) if stamp else None
    session = _header_value(lines, "Session ID") or path.stem
    title = _title(lines)
    messages = tuple(
        Message(turn[0], turn[1], turn[2], turn[3] if len(turn) > 3 else timestamp, f"turn-{i}")
        for i, turn in enumerate(turns)
    )
    yield Conversation(LABEL, path, session, title, messages)


def _strip_gutter(lines: list[str]) -> list[str]:
    """Drop a 2-character gutter (``"  "`` or ``"✎ "``) that nearly every line carries."""
    filled = [line for line in lines if line.strip()]
    guttered = [line for line in filled if line.startswith(("  ", "✎ "))]
    if (
        filled
        and len(guttered) >= 0.9 * len(filled)
        and any(line.startswith("✎ ") for line in filled)
    ):
        return [line[2:] if line.startswith(("  ", "✎ ")) else line for line in lines]
    return lines


def _header_value(lines: list[str], name: str) -> str | None:
    for line in lines[:12]:
        if line.startswith(f"{name}:"):
            return line.partition(":")[2].strip() or None
    return None


def _title(lines: list[str]) -> str | None:
    for line in lines[:40]:
        if line.startswith("# "):
            return first_line(line[2:], 200) or None
    return None


def _join(parts: list[str]) -> str:
    return "\n".join(parts).strip()


def _terminal(lines: list[str], skips: Skips) -> list[_Turn]:
    if not any(line.startswith("● ") for line in lines):
        return []
    start = next((i + 1 for i, line in enumerate(lines) if "Claude Code v" in line), 0)
    turns: list[_Turn] = []
    role: str | None = None
    parts: list[str] = []
    tool_open = False

    def close() -> None:
        if role is not None and _join(parts):
            turns.append((role, "User" if role == USER else "Claude", _join(parts)))
        parts.clear()

    for line in lines[start:]:
        if _SEPARATOR.match(line):
            break  # the input box and status line follow
        prompt = line[2:] if line.startswith(("❯ ", "> ")) else None
        if prompt is not None:
            close()
            if prompt.strip().startswith("/") and " " not in prompt.strip():
                skips.skip("slash command")
                role = None
                continue
            role, tool_open = USER, False
            parts.append(prompt.strip())
        elif line.startswith("● "):
            if role != ASSISTANT:
                close()
                role = ASSISTANT
            body = _EXPAND.sub("", line[2:].strip())
            call = _TOOL_CALL.match(body)
            tool_open = call is not None or body.endswith(("file", "files", "pattern", "patterns"))
            if call:
                parts.append(tool_line(call.group(1), call.group(2).strip('"')))
            elif tool_open:
                parts.append(f"[{body}]")
            else:
                parts.append(body)
        elif line.lstrip().startswith("⎿"):
            result = line.lstrip()[1:].strip()
            if result.startswith("Interrupted"):
                skips.skip("interruption")
            elif role == ASSISTANT and tool_open and parts:
                parts[-1] += " -> " + first_line(result)
                tool_open = False
        elif role is not None and line.startswith("  ") and not tool_open:
            parts.append(line.strip())
        elif role is not None and not line.strip() and parts:
            parts.append("")
    close()
    return turns


def _aider(lines: list[str], skips: Skips) -> list[_Turn]:
    markers = ("> $ aider", "# aider chat started at ")
    if not any("chat-transcript" in line or line.startswith(markers) for line in lines):
        return []
    turns: list[_Turn] = []
    parts: list[str] = []
    quoted = False
    in_reply = False
    fenced = False
    started: str | None = None  # an aider history file notes when each session started
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        start = _AIDER_START.match(line) if not fenced else None
        if start:
            if in_reply and _join(parts):
                turns.append((ASSISTANT, "aider", _join(parts), started))
            parts, quoted, in_reply = [], False, False
            started = parse_iso_datetime(start.group(1).replace(" ", "T"))
            continue
        if line.startswith("#### ") and not fenced:
            if in_reply and _join(parts):
                turns.append((ASSISTANT, "aider", _join(parts), started))
            parts, quoted, in_reply = [], False, True
            turns.append((USER, "User", line[5:].strip(), started))
            continue
        if not in_reply or line.startswith(("<div", "</div")):
            continue
        if not fenced and (line.startswith("> ") or line.rstrip() == ">"):
            if not quoted:
                parts.append("> " + first_line(line[1:]))
            else:
                skips.skip("quoted output line")
            quoted = True
            continue
        quoted = False
        parts.append(line.rstrip())
    if in_reply and _join(parts):
        turns.append((ASSISTANT, "aider", _join(parts), started))
    return turns


def _speaker(label: str) -> tuple[str, str]:
    word = label.lower()
    if word in _USERS:
        return USER, "User"
    names = {"ai": "AI", "chatgpt": "ChatGPT", "gpt": "GPT"}
    return ASSISTANT, names.get(word, label[:1].upper() + label[1:].lower())


def _headings(lines: list[str], skips: Skips) -> list[_Turn]:
    marks = [(i, _HEADING.match(line)) for i, line in enumerate(lines)]
    found = [(i, m.group(1)) for i, m in marks if m]
    if len(found) < 2:
        return []
    turns: list[_Turn] = []
    for number, (start, label) in enumerate(found):
        end = found[number + 1][0] if number + 1 < len(found) else len(lines)
        role, speaker = _speaker(label)
        body = _tool_blocks(lines[start + 1 : end])
        body = re.sub(r"\n-{3,}\s*$", "", body).strip()
        if not body:
            skips.skip("empty message")
        elif turns and turns[-1][0] == role == ASSISTANT:
            turns[-1] = (role, speaker, turns[-1][2] + "\n" + body)  # one reply, several parts
        else:
            turns.append((role, speaker, body))
    return turns


def _tool_blocks(lines: list[str]) -> str:
    """``🔧 Using tool: X`` with its ``Input: {...}`` block as one ``[X: argument]`` line."""
    out: list[str] = []
    index = 0
    while index < len(lines):
        call = _USING_TOOL.match(lines[index].strip())
        if call is None:
            out.append(lines[index])
            index += 1
            continue
        index += 1
        block: list[str] = []
        if index < len(lines) and lines[index].startswith("Input:"):
            block.append(lines[index][len("Input:") :])
            index += 1
            while index < len(lines) and block[0].strip() == "{" and lines[index] != "}":
                block.append(lines[index])
                index += 1
            if index < len(lines) and lines[index] == "}":
                block.append("}")
                index += 1
        try:
            arguments: object = json.loads("\n".join(block)) if block else {}
        except (ValueError, RecursionError):
            arguments = "\n".join(block).strip()
        out.append(tool_line(call.group(1).strip(), arguments))
    return "\n".join(out).strip()


def _labels(lines: list[str], skips: Skips) -> list[_Turn]:
    turns: list[_Turn] = []
    role: str | None = None
    speaker = ""
    when: str | None = None
    parts: list[str] = []
    for line in lines:
        match = _LABEL_LINE.match(line)
        if match:
            if role is not None and _join(parts):
                turns.append(_labelled(role, speaker, _join(parts), when))
            elif role is not None:
                skips.skip("empty message")
            role, speaker = _speaker(match.group("role"))
            when = _stamp_time(match.group("stamp"))
            parts = [match.group("text")]
        elif role is not None:
            parts.append(line)
    if role is not None and _join(parts):
        turns.append(_labelled(role, speaker, _join(parts), when))
    return turns if len(turns) >= 4 else []


def _labelled(role: str, speaker: str, text: str, when: str | None) -> _Turn:
    return (role, speaker, text) if when is None else (role, speaker, text, when)


def _stamp_time(stamp: str | None) -> str | None:
    """A label's leading date and time as UTC ISO (a time of day alone says no date: None)."""
    if not stamp or len(stamp) < 16 or not stamp[:4].isdigit():
        return None
    return parse_iso_datetime(stamp.replace(" ", "T", 1))
