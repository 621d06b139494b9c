"""One-line summaries of tool calls and their results, shared by the conversation readers.

A mined exchange keeps what the assistant did, not what it read: a call becomes
``[Bash: ls -la]`` (the tool's name and its key argument), its result the first non-empty
line of the output, or ``error: ...`` when the call failed. Whole file dumps, search pages
and command outputs never reach the vault.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_ARGUMENT", "MAX_RESULT", "first_line", "result_line", "tool_line"]

MAX_ARGUMENT = 120
MAX_RESULT = 160

# The argument that says what a call was about, by tool (Claude Code and Codex names); any
# other tool shows its first short string argument.
_KEY_ARGUMENTS = (
    "command",
    "cmd",
    "file_path",
    "path",
    "notebook_path",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
    "question",
    "message",
    "skill",
    "name",
)


def first_line(text: str, limit: int = MAX_RESULT) -> str:
    """The first non-empty line of ``text``, stripped and cut at ``limit`` characters.

    A cut never splits a word: the word it would split is left out whole (the line's
    first word aside), so half a secret (``-pHunter2...`` cut after ``-pHun``) never
    reaches the vault looking like something redaction has no reason to take."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            if len(line) <= limit:
                return line
            cut = line[: limit - 1]
            if not line[limit - 1].isspace() and " " in cut.strip():
                cut = cut.rsplit(None, 1)[0]
            return cut.rstrip() + "…"
    return ""


def _key_argument(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return first_line(arguments, MAX_ARGUMENT)
    if not isinstance(arguments, dict):
        return ""
    for key in _KEY_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return first_line(value, MAX_ARGUMENT)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return first_line(" ".join(value), MAX_ARGUMENT)  # Codex shell: ["bash", "-lc", ...]
    todos = arguments.get("todos")
    if isinstance(todos, list):
        return f"{len(todos)} todos"
    questions = arguments.get("questions")
    if isinstance(questions, list) and questions and isinstance(questions[0], dict):
        return first_line(str(questions[0].get("question") or ""), MAX_ARGUMENT)
    for value in arguments.values():
        if isinstance(value, str) and value.strip():
            return first_line(value, MAX_ARGUMENT)
    return ""


def tool_line(name: object, arguments: Any) -> str:
    """``[Name: key argument]`` for a tool call."""
    label = first_line(str(name or "tool"), 60) or "tool"
    argument = _key_argument(arguments)
    return f"[{label}: {argument}]" if argument else f"[{label}]"


def result_line(output: Any, *, error: bool = False) -> str:
    """The first line of a tool's output (``error: ...`` when it failed); ``""`` if empty."""
    text = _output_text(output)
    line = first_line(text)
    if error:
        return f"error: {line}" if line else "error"
    return line


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):  # content blocks: [{"type": "text", "text": ...}, ...]
        parts = []
        for block in output:
            if isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif block.get("type") == "image":
                    parts.append("[image]")
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    if isinstance(output, dict):
        for key in ("output", "text", "content", "result"):
            if key in output:
                return _output_text(output[key])
    return ""
