"""The hooks' log file: ``$XDG_CACHE_HOME/memtrove/hooks.log``, rotated at 1 MB.

A hook's stdout belongs to Claude Code and its stderr is shown only in verbose mode, so
what went wrong, and which legs a prompt skipped, is written here as one line per event
(``2026-01-31T12:00:00Z context-surfacing error: ...``). Errors also go to stderr. Writing
the log never raises: a read-only or full disk costs the log line, not the hook.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from memtrove.security.redaction import redact_text

__all__ = ["MAX_LOG_BYTES", "HookLog"]

MAX_LOG_BYTES = 1024 * 1024


class HookLog:
    """Appends lines for one hook run; ``path`` None keeps only stderr for errors."""

    def __init__(self, path: Path | None, hook: str) -> None:
        self.path = path
        self.hook = hook

    def info(self, message: str) -> None:
        """Something worth knowing when tuning (a skipped leg, a gate that fired)."""
        self._write("info", message)

    def warning(self, message: str) -> None:
        """A setting that was ignored, a feature that degraded."""
        self._write("warning", message)

    def error(self, message: str, detail: str = "") -> None:
        """A failure the hook answered around; ``detail`` (a traceback) goes to the file only."""
        message = redact_text(message)
        print(f"memtrove hook {self.hook}: {message}", file=sys.stderr)
        self._write("error", message + ("\n" + detail.rstrip() if detail else ""))

    def _write(self, level: str, message: str) -> None:
        if self.path is None:
            return
        message = redact_text(message)  # an error may quote a prompt or a payload
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} {self.hook} [{os.getpid()}] {level}: {message}\n"
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._rotate()
            with open(self.path, "a", encoding="utf-8", errors="replace") as handle:
                handle.write(line)

    def _rotate(self) -> None:
        assert self.path is not None
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size >= MAX_LOG_BYTES:
            # Two processes may race here; os.replace is atomic, the loser's rename fails
            # or moves an almost empty file, and both are harmless.
            os.replace(self.path, self.path.with_name(self.path.name + ".1"))
