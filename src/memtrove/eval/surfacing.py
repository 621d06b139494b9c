"""``--method surfacing``: score what the context-surfacing hook injects, not a search call.

Each question goes through the hook's real pipeline (:func:`memtrove.hooks.context_surfacing.run`
with the default profile): lookback, the discovery legs, the filters, composite scoring, the
adaptive threshold, spreading activation, the token budget and rendering. The ranking that
is scored is the list of documents the rendered ``<vault-context>`` shows, in order; a
question for which nothing is injected ranks nothing. Only the gates are off: the heartbeat
check, the prompt dedupe and the vault nudge are about whether to answer at all, and a
judged question always deserves an answer.

Sessions: by default every question gets a session of its own, as if each were the first
prompt of a new conversation. With ``session=True`` the caller starts one session per
conversation (LoCoMo), per ``session`` field (gold) or per file (BEIR), and its questions
come in order through that one session id, so each one's lookback sees the earlier ones
(their ``context_usage`` rows are written as the hook writes them). Fresh questions log
nothing, so no question's co-activations reach another. ``eval gold`` runs sessions on a
scratch copy of the vault, which keeps no trace of them.

Vectors: ``vectors`` is ``MEMTROVE_HOOK_VECTORS`` (``auto`` by default: what an agent gets
with the default settings, vectors for the ``deep`` profile only). When the vector leg
runs, the model and vectors are loaded before the first prompt, like ``memtrove serve``,
and the leg is always awaited, so results do not depend on how busy the machine is.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memtrove.errors import ConfigError, MemtroveError
from memtrove.hooks.events import HookEvent
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.profiles import PROFILES, resolve_profile
from memtrove.hooks.settings import HookSettings
from memtrove.paths import sidecar_folder
from memtrove.results import SearchResult, SearchResults
from memtrove.vault import Vault

__all__ = ["SURFACING", "Surfacer"]

SURFACING = "surfacing"
EVAL_VECTOR_MS = 60_000


@dataclass
class Surfacer:
    """Runs context-surfacing for one prompt at a time and keeps what it injected.

    ``new_session()`` starts the session later prompts share (with ``session=True``);
    otherwise each prompt gets a fresh one. ``tokens`` keeps each injection's estimated
    tokens and ``injected`` its entries, every collection included (each entry is its
    reference followed by its identical copies'), for the report.
    """

    vault: Vault
    session: bool = False
    profile: str | None = None
    vectors: str = "auto"
    tokens: list[int] = field(default_factory=list)
    injected: list[tuple[tuple[str, ...], ...]] = field(default_factory=list)
    _session_id: str = ""

    def __post_init__(self) -> None:
        resolved, warning = resolve_profile(self.profile)
        if warning:
            raise ConfigError(f"unknown profile {self.profile!r}; known: {', '.join(PROFILES)}")
        from memtrove.hooks.discovery import vectors_wanted

        probe = HookSettings(Path(), Path(), Path(), profile=resolved, vectors=self.vectors)
        if vectors_wanted(probe):
            # Served semantics: the model and vectors are loaded before the first prompt and
            # the vector leg always finishes, so a busy machine cannot change the scores.
            resolved = resolved._replace(
                vector_timeout_ms=max(resolved.vector_timeout_ms, EVAL_VECTOR_MS)
            )
        folder = Path(sidecar_folder(self.vault.location))  # a server vault's: in the cache
        self._settings = HookSettings(
            vault_path=self.vault.path or self.vault.location,
            config_dir=folder,
            cache_dir=folder / "surfacing-cache",
            profile=resolved,
            dedupe_window_seconds=0,
            heartbeat_suppression=False,
            vectors=self.vectors,
            nudge_interval=0,
            gates=False,
        )
        self._log = HookLog(None, "context-surfacing")
        self._warm = False

    def _warm_up(self) -> None:
        if self._warm or not self.uses_vectors:
            return
        self._warm = True
        with contextlib.suppress(MemtroveError):  # no vectors: the leg reports it per prompt
            self.vault.vsearch("warm up", limit=1)

    @property
    def uses_vectors(self) -> bool:
        """Whether the vault needs embedding before prompts are surfaced."""
        from memtrove.hooks.discovery import vectors_wanted

        return vectors_wanted(self._settings)

    def new_session(self) -> None:
        """Start the session that the following prompts share (``session=True`` only)."""
        self._session_id = f"eval-{uuid.uuid4().hex}"

    def __call__(
        self, query: str, limit: int, collections: Sequence[str] | None = None
    ) -> SearchResults:
        from memtrove.hooks import context_surfacing

        self._warm_up()
        if not self.session or not self._session_id:
            self.new_session()
        event = HookEvent(
            hook_event_name=context_surfacing.EVENT_NAME,
            session_id=self._session_id,
            prompt=query,
        )
        result = context_surfacing.run(event, self._settings, lambda: self.vault, self._log)
        if self.session:  # the usage rows lookback reads; fresh questions stay independent
            for work in result.after:
                work()
        self.tokens.append(result.tokens)
        self.injected.append(tuple((key, *result.copies.get(key, ())) for key in result.surfaced))
        wanted = set(collections) if collections else None
        results = SearchResults(stages=[SURFACING])
        for rank, key in enumerate(result.surfaced[:limit]):
            collection, _, path = key.partition("/")
            if wanted is not None and collection not in wanted:
                continue
            score = 1.0 / (rank + 1)
            copies = tuple(result.copies.get(key, ()))
            results.append(
                SearchResult("", collection, path, "", score, "", "", "", also_at=copies)
            )
        return results
