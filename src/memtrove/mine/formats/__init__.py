"""One reader module per conversation format, tried in a fixed, documented order.

Each module defines ``LABEL`` (the ``--format`` name), ``sniff(path, head) -> bool`` (a cheap
test on the path and the first bytes of the file; a folder gets ``head == b""``) and
``read(path, skips) -> Iterator[Conversation]``. Detection tries :data:`ORDER` and takes the
first reader whose ``sniff`` accepts the file and whose ``read`` yields at least one
conversation; a file no reader accepts is reported, never guessed.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["ORDER", "reader"]

ORDER: tuple[str, ...] = ("claude-code", "codex", "chatgpt", "claude-ai", "slack", "text")
"""Detection order: the structured formats first, plain text last."""

_MODULES = {
    "claude-code": "claude_code",
    "codex": "codex",
    "chatgpt": "chatgpt",
    "claude-ai": "claude_ai",
    "slack": "slack",
    "text": "text",
}


def reader(label: str) -> ModuleType:
    """The reader module for ``label`` (one of :data:`ORDER`)."""
    return importlib.import_module(f"{__name__}.{_MODULES[label]}")
