"""The Beads area (``beads_area(vault)``): a project's Beads issues brought into the vault.

Contract: given the vault's database, the redaction of stored text, the vault's clock, the
embedding of what was just written (:meth:`CaptureArea.embed_written`, so a new issue is
found by vector search at once where the vault has vectors) and the environment ``bd`` runs
in. ``bd`` runs outside the vault's lock (it may take seconds); its issues are written
under it, in one transaction, by :mod:`memtrove.capture.beads` (``beads_issues``,
``beads_dependencies``, documents in ``_memtrove/beads/`` and their edges).

Built on first use and kept with the vault's other areas; reached through
:func:`beads_area` rather than a ``Vault`` property.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memtrove.errors import InvalidQueryError
from memtrove.text import error_line

if TYPE_CHECKING:
    from memtrove.capture.beads import BeadsSyncReport
    from memtrove.db.database import Database
    from memtrove.vault import Vault
    from memtrove.vault.areas import Clock, Redact

__all__ = ["BeadsArea", "beads_area", "beads_project"]


def beads_project(project_path: str | Path | None) -> Path:
    """The project folder ``project_path`` names (the working directory when None or
    empty), resolved; InvalidQueryError, one line, when it is not a folder."""
    raw = str(project_path).strip() if project_path is not None else ""
    if "\x00" in raw:
        raise InvalidQueryError("project_path must not contain NUL characters")
    try:
        folder = (Path(raw).expanduser() if raw else Path.cwd()).resolve()
    except (OSError, RuntimeError, ValueError) as error:
        message = f"project_path is not usable: {error_line(str(error), 200)}"
        raise InvalidQueryError(message) from None
    if not folder.is_dir():
        raise InvalidQueryError(f"project_path {error_line(str(folder), 300)} is not a folder")
    return folder


class BeadsArea:
    """Syncing a project's Beads issues (``bd list --json``) into the vault."""

    def __init__(
        self,
        database: Database,
        *,
        redact: Redact,
        clock: Clock,
        embed_written: Callable[[Sequence[int]], int],
        environ: Mapping[str, str],
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.redact, self._clock, self._embed_written = redact, clock, embed_written
        self._environ = environ

    def sync(
        self, project_path: str | Path | None = None, *, timeout: float | None = None
    ) -> BeadsSyncReport:
        """Run ``bd list --json --limit 0`` in ``project_path`` (default: the working
        directory) and bring its issues into the vault: rows, documents, edges. BeadsError
        (one line) when bd is missing, fails or prints no issue list; InvalidQueryError when
        the folder does not exist. ``timeout``: seconds bd may take (default 30, 1-600)."""
        from memtrove.capture.beads import sync_issues
        from memtrove.capture.beads_reader import DEFAULT_TIMEOUT, read_issues

        limit = DEFAULT_TIMEOUT if timeout is None else timeout
        if not 1 <= limit <= 600:
            raise InvalidQueryError(f"timeout must be from 1 to 600 seconds, got {limit:g}")
        project = beads_project(project_path)
        listing = read_issues(project, self._environ, timeout=limit)  # outside the lock
        with self._lock:
            report, changed = sync_issues(
                self._connection, project, listing, self._clock(), self.redact
            )
        self._embed_written(changed)
        return report


def beads_area(vault: Vault) -> BeadsArea:
    """``vault``'s Beads area, built on first use."""
    return vault._area("beads", lambda: BeadsArea(
        vault.database, redact=vault.redact, clock=vault._now,
        embed_written=vault.capture.embed_written, environ=os.environ,
    ))  # fmt: skip
