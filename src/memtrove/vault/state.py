"""What every part of the Vault shares: one connection, its lock, models and retriever.

The Vault is assembled from one class per area (:mod:`.reading`, :mod:`.intent`,
:mod:`.graph`, and :mod:`.core` for opening, collections, indexing and health); each works
on this state, which :class:`~memtrove.vault.core.Vault` sets up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memtrove.config import CollectionConfig
from memtrove.db.connection import Connection
from memtrove.models.registry import Models
from memtrove.results import Collection, Document
from memtrove.retrieval.pipeline import Retriever

if TYPE_CHECKING:
    from memtrove.vault.sessions import SessionsArea

__all__ = ["VaultState"]


class VaultState:
    """The attributes the Vault's parts share (set by ``Vault.__init__``)."""

    _connection: Connection
    path: Path
    _collections: CollectionConfig
    _lock: threading.RLock
    models: Models
    _retriever: Retriever
    _clock: Callable[[], datetime]

    # Methods one part calls on another (each is defined by exactly one part).
    def collections(self) -> list[Collection]:
        raise NotImplementedError

    def redact(self, text: str) -> str:
        raise NotImplementedError

    def get(self, ref: str) -> Document:
        raise NotImplementedError

    @property
    def sessions(self) -> SessionsArea:  # the area, built by the Vault
        raise NotImplementedError
