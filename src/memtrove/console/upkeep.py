"""The console's Memory page (``GET``, HTML): the agent-curated memory store and its upkeep.

    /ui/memory?store=       entries by store and branch (versions, last update), duplicate
                            clusters, hygiene signals, what the lifecycle policy would
                            archive and why, consolidated observations, import runs

Read-only: nothing here changes the vault. What the lifecycle policy would archive is a
dry run that recomputes the recall statistics first, as ``memtrove lifecycle sweep`` does,
so it runs only when asked for (``?sweep=1``, the page's button). Pages read the vault through
its public methods only (no SQL here). Each section is read on its own: a MemtroveError in
one shows that section's one-line error and the rest of the page still renders. Every list
is cut at :data:`ROWS` rows, so a big vault stays quick to show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from memtrove.console.app import Console
from memtrove.errors import MemtroveError
from memtrove.memory.dedup import VERDICTS
from memtrove.memory.slugs import GLOBAL_STORE
from memtrove.text import error_line
from memtrove.vault import Vault

if TYPE_CHECKING:  # the memory results load with their first use
    from memtrove.results import DuplicatePair, HygieneReport, MemoryEntry

__all__ = ["PREVIEW_CHARS", "ROWS", "upkeep_router"]

ROWS = 50  # rows shown per list
PREVIEW_CHARS = 160  # of an entry's text

T = TypeVar("T")


@dataclass(frozen=True)
class Section(Generic[T]):
    """One part of the page: what was read (``None`` when it failed), how many rows were
    left off past :data:`ROWS`, or the one-line error that kept it from being read."""

    value: T | None = None
    more: int = 0
    error: str | None = None


@dataclass(frozen=True)
class EntryRow:
    """An entry as listed: ``versions`` counts its current text and its earlier ones."""

    entry: MemoryEntry
    versions: int
    preview: str


@dataclass(frozen=True)
class BranchGroup:
    """The entries of a store scoped to one branch (``None``: every branch)."""

    branch: str | None
    rows: list[EntryRow]


@dataclass(frozen=True)
class StoreView:
    """What the page shows of one store."""

    name: str
    entries: Section[list[BranchGroup]]
    duplicates: Section[list[tuple[int, DuplicatePair]]]
    threshold: float | None
    hygiene: Section[HygieneReport]


def _read(read: Callable[[], T]) -> Section[T]:
    try:
        return Section(read())
    except MemtroveError as error:
        return Section(error=error_line(str(error)))


def _capped(read: Callable[[], Sequence[T]]) -> Section[list[T]]:
    """``read``'s rows, the first :data:`ROWS` of them."""
    section = _read(read)
    if section.value is None:
        return Section(error=section.error)
    rows = list(section.value)
    return Section(rows[:ROWS], max(0, len(rows) - ROWS))


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _entries(vault: Vault, store: str) -> Section[list[BranchGroup]]:
    """The newest :data:`ROWS` entries of ``store`` by branch, the unscoped ones first."""
    try:
        entries = vault.memory.entries(store)
        groups: dict[str | None, list[EntryRow]] = {}
        for entry in entries[:ROWS]:  # newest first; their versions read for these only
            versions = 1 + len(vault.memory.entry_versions(entry.label, store))
            row = EntryRow(entry, versions, _preview(entry.content))
            groups.setdefault(entry.branch, []).append(row)
    except MemtroveError as error:
        return Section(error=error_line(str(error)))
    ordered = sorted(groups.items(), key=lambda item: (item[0] is not None, item[0] or ""))
    groups_shown = [BranchGroup(branch, rows) for branch, rows in ordered]
    return Section(groups_shown, max(0, len(entries) - ROWS))


def _store(vault: Vault, store: str) -> StoreView:
    """``store``'s entries, duplicate pairs (numbered by cluster) and hygiene signals."""
    threshold = None
    try:
        report = vault.memory.find_duplicates(store)
    except MemtroveError as error:
        duplicates: Section[list[tuple[int, DuplicatePair]]] = Section(error=error_line(str(error)))
    else:
        threshold = report.threshold
        pairs = [
            (number, pair) for number, cluster in enumerate(report.clusters, 1) for pair in cluster
        ]
        duplicates = Section(pairs[:ROWS], max(0, len(pairs) - ROWS))
    return StoreView(
        name=store,
        entries=_entries(vault, store),
        duplicates=duplicates,
        threshold=threshold,
        hygiene=_read(lambda: vault.memory.hygiene(store)),
    )


def _observations(vault: Vault) -> list[dict[str, Any]]:
    """Consolidated observations: active ones first, the best-supported, then the newest."""
    rows = vault.consolidation.consolidated_observations(include_inactive=True)
    return sorted(
        rows,
        key=lambda row: (row["status"] != "active", -int(row["proof_count"]), -int(row["id"])),
    )


def upkeep_router(vault: Vault, console: Console) -> APIRouter:
    """The Memory page over ``vault``."""
    router = APIRouter(include_in_schema=False)

    @router.get("/ui/memory", response_class=HTMLResponse)
    def memory_page(
        request: Request, store: Annotated[str, Query(max_length=200)] = "", sweep: bool = False
    ) -> HTMLResponse:
        try:  # the store asked for, else the project store and the shared one
            names = (
                [vault.memory.resolve_store(store)]
                if store.strip()
                else [vault.memory.resolve_store(), GLOBAL_STORE]
            )
        except MemtroveError as error:
            return console.error_page(request, error, "memory")
        # the dry run recomputes the recall statistics first: only when asked for
        dry_run = _read(lambda: vault.lifecycle.sweep(apply=False)) if sweep else None
        return console.page(
            request,
            "memory.html",
            "memory",
            store=store,
            stores=[_store(vault, name) for name in dict.fromkeys(names)],
            sweep=dry_run,
            archive=_capped(lambda: dry_run.value.documents if dry_run and dry_run.value else []),
            status=_read(vault.lifecycle.status),
            observations=_capped(lambda: _observations(vault)),
            imports=_capped(lambda: vault.mining.import_runs(ROWS)),
            rows=ROWS,
            verdicts=VERDICTS,
        )

    return router
