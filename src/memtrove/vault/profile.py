"""The profile area (``profile_area(vault)``): the user profile document, shown or rebuilt.

Contract: given the vault's database, the redaction of stored text, the vault's clock and
the capture area (whose :meth:`~memtrove.vault.capture.CaptureArea.embed_written` puts a
rebuilt profile into the vault's vectors). Its statements are those of
:mod:`memtrove.capture.profile`: ``_memtrove/profile.md`` is written, decision, hub,
progress and handoff documents and ``session_log`` are only read.

Built on first use and kept with the vault's other areas; reached through
:func:`profile_area` rather than a ``Vault`` property.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memtrove.errors import DocumentNotFoundError, MemtroveError

if TYPE_CHECKING:
    from memtrove.capture.profile import UserProfile
    from memtrove.db.database import Database
    from memtrove.vault import Vault
    from memtrove.vault.areas import Clock, Redact
    from memtrove.vault.capture import CaptureArea

__all__ = ["ProfileArea", "profile_area", "refresh_after_update"]

NO_PROFILE = "no profile yet: `memtrove profile rebuild` builds it"


class ProfileArea:
    """The user profile: static facts of decision and hub documents, dynamic items of
    recent sessions and progress (see :mod:`memtrove.capture.profile`)."""

    def __init__(
        self, database: Database, *, redact: Redact, clock: Clock, capture: CaptureArea
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.redact, self._clock, self._capture = redact, clock, capture

    def current(self) -> UserProfile | None:
        """The profile document as written, or None when there is none."""
        from memtrove.capture.profile import read_profile

        with self._lock:
            return read_profile(self._connection)

    def show(self) -> UserProfile:
        """The profile document; DocumentNotFoundError (saying how to build it) when there
        is none."""
        profile = self.current()
        if profile is None:
            raise DocumentNotFoundError(NO_PROFILE)
        return profile

    def rebuild(self, *, embed: bool = True, retry_seconds: float | None = None) -> UserProfile:
        """Rebuild and write the profile from the vault as it stands (and, with ``embed``,
        embed it into the vault's existing vectors); DocumentNotFoundError when the vault
        has nothing to put in one (no decision, hub, handoff or recent progress)."""
        from memtrove.capture.profile import write_profile

        with self._lock:
            profile, doc_id = write_profile(
                self._connection, self._clock(), redact=self.redact, retry_seconds=retry_seconds
            )
        if profile is None or doc_id is None:
            raise DocumentNotFoundError(
                "nothing to build a profile from yet: it takes decision or hub documents, "
                "session handoffs or recent progress notes"
            )
        if embed:
            self._capture.embed_written([doc_id])
        return profile

    def is_stale(self) -> bool:
        """Whether 5 sessions have started since the profile was written, or there is none
        while sessions were recorded."""
        from memtrove.capture.profile import profile_is_stale

        with self._lock:
            return profile_is_stale(self._connection)

    def refresh(self, *, embed: bool = True, retry_seconds: float | None = None) -> bool:
        """Rebuild the profile when it is stale; whether it was (re)written. A vault with
        nothing to put in a profile is left without one."""
        if not self.is_stale():
            return False
        try:
            self.rebuild(embed=embed, retry_seconds=retry_seconds)
        except DocumentNotFoundError:
            return False
        return True


def profile_area(vault: Vault) -> ProfileArea:
    """``vault``'s profile area, built on first use and kept with its other areas."""
    return vault._area(
        "profile",
        lambda: ProfileArea(
            vault.database, redact=vault.redact, clock=vault._now, capture=vault.capture
        ),
    )


def refresh_after_update(vault: Vault, warn: Callable[[str], None]) -> None:
    """What ``memtrove update`` does after indexing: rebuild the profile when it is stale
    (not embedded here: ``--embed`` or ``memtrove embed`` does that). Best-effort: a
    failure is ``warn``-ed, the index is up to date either way."""
    try:
        profile_area(vault).refresh(embed=False)
    except MemtroveError as error:
        warn(f"profile not rebuilt: {error}")
