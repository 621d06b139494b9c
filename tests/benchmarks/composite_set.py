"""The composite judged set: questions where recency, pins, snoozes, supersession and length
should decide the ranking, on an invented photo-sharing backend team's notes ("Shutterbox").

Files, under ``composite/`` beside this module:

- ``docs/**.md``: the documents, each with a ``date: {{days_ago:N}}`` frontmatter line that
  :func:`build` turns into the ISO date N days before now (UTC), so ages stay fixed however
  long ago the set was written;
- ``setup.json``: ``{"pin": [path, ...], "snooze": [path, ...],
  "supersede": [{"old": path, "new": path}, ...]}``, paths relative to the collection;
- ``questions.jsonl``: the judged questions in the gold format of
  :mod:`memtrove.eval.gold` (collection ``composite``), tagged ``evolving``, ``handoff``,
  ``pinned``, ``snoozed``, ``superseded``, ``recency``, ``length-short``, ``length-long`` or
  ``topical`` (the control group).

Typical use::

    vault = open_vault(tmp_path, embed=True)
    report = run_gold(vault, load_gold(QUESTIONS))

Supersession has no public Vault method yet: :func:`apply_setup` writes
``documents.superseded_by``, ``invalidated_by`` and ``invalidated_at`` itself, through the
vault's connection in one write transaction (see :func:`_supersede`).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memtrove import Vault
from memtrove.db.connection import write_transaction
from memtrove.models.registry import Models, ModelSettings
from memtrove.text import to_iso

__all__ = [
    "COLLECTION",
    "DOCS",
    "QUESTIONS",
    "ROOT",
    "SETUP",
    "SNOOZE_DAYS",
    "Setup",
    "apply_setup",
    "build",
    "load_setup",
    "open_vault",
]

ROOT = Path(__file__).resolve().parent / "composite"
DOCS = ROOT / "docs"
QUESTIONS = ROOT / "questions.jsonl"
SETUP = ROOT / "setup.json"
COLLECTION = "composite"
SNOOZE_DAYS = 3650  # "far future": ten years from now

_DAYS_AGO = re.compile(r"\{\{\s*days_ago\s*:\s*(\d+)\s*\}\}")
_PLACEHOLDER = re.compile(r"\{\{[^}]*\}\}")


@dataclass(frozen=True)
class Setup:
    """What :func:`apply_setup` does to the indexed collection (paths inside it)."""

    pin: tuple[str, ...]
    snooze: tuple[str, ...]
    supersede: tuple[tuple[str, str], ...]  # (old, new)


def _now(now: datetime | None) -> datetime:
    moment = now if now is not None else datetime.now(UTC)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _render(text: str, now: datetime, source: Path) -> str:
    rendered = _DAYS_AGO.sub(
        lambda match: (now - timedelta(days=int(match.group(1)))).date().isoformat(), text
    )
    leftover = _PLACEHOLDER.search(rendered)
    if leftover:
        raise ValueError(f"{source}: unknown placeholder {leftover.group(0)!r}")
    return rendered


def build(root: Path, *, now: datetime | None = None) -> Path:
    """Copy the documents into ``root/"composite"`` with their dates filled in; return it.

    ``now`` (default: the current UTC time) is the moment the ``days_ago`` offsets count
    back from. An existing ``root/"composite"`` is replaced.
    """
    moment = _now(now)
    target = Path(root) / COLLECTION
    if target.exists():
        shutil.rmtree(target)
    for source in sorted(DOCS.rglob("*.md")):
        destination = target / source.relative_to(DOCS)
        destination.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        destination.write_text(_render(text, moment, source), encoding="utf-8")
    return target


def load_setup(path: Path = SETUP) -> Setup:
    """Parse ``setup.json``; a missing key means nothing of that kind."""
    raw: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    unknown = sorted(set(raw) - {"pin", "snooze", "supersede"})
    if unknown:
        raise ValueError(f"{path}: unknown key {unknown[0]!r}")
    return Setup(
        pin=tuple(str(item) for item in raw.get("pin", [])),
        snooze=tuple(str(item) for item in raw.get("snooze", [])),
        supersede=tuple((str(item["old"]), str(item["new"])) for item in raw.get("supersede", [])),
    )


def _supersede(vault: Vault, old_ref: str, new_ref: str, now: datetime) -> None:
    """Mark ``old_ref`` superseded by ``new_ref``.

    No public Vault method sets these columns (as of writing), so this writes them directly:
    ``superseded_by`` and ``invalidated_by`` = the newer document's id, ``invalidated_at`` =
    the newer document's authored time (when the replacement was written), else ``now``.
    Done under the vault's lock in one ``write_transaction`` on its connection, like
    :mod:`memtrove.index.curation` does for pins. Replace with the public call once there is
    one.
    """
    old = vault.get(old_ref)
    new = vault.get(new_ref)
    when = new.authored_at or to_iso(now)
    with vault._lock, write_transaction(vault._connection) as connection:
        connection.execute(
            "UPDATE documents SET superseded_by = ?, invalidated_by = ?, invalidated_at = ? "
            "WHERE id = ?",
            (new.doc_id, new.doc_id, when, old.doc_id),
        )


def apply_setup(
    vault: Vault,
    collection: str = COLLECTION,
    *,
    setup: Setup | None = None,
    now: datetime | None = None,
) -> None:
    """Apply ``setup.json`` to the indexed collection: pins (``Vault.curation.pin``),
    snoozes (``Vault.curation.snooze`` until :data:`SNOOZE_DAYS` from now) and supersessions
    (:func:`_supersede`).
    """
    plan = setup if setup is not None else load_setup()
    moment = _now(now)
    for path in plan.pin:
        vault.curation.pin(f"{collection}/{path}")
    until = (moment + timedelta(days=SNOOZE_DAYS)).date().isoformat()
    for path in plan.snooze:
        vault.curation.snooze(f"{collection}/{path}", until)
    for old, new in plan.supersede:
        _supersede(vault, f"{collection}/{old}", f"{collection}/{new}", moment)


def open_vault(
    root: Path,
    *,
    now: datetime | None = None,
    models: ModelSettings | Models | None = None,
    embed: bool = False,
) -> Vault:
    """Build the set under ``root``, index it into ``root/"vault.sqlite"`` (config in
    ``root/"config"``) as collection ``composite``, apply the setup, and return the vault.

    ``embed=True`` also embeds every document (``Vault.query`` needs vectors). The caller
    closes the vault.
    """
    root = Path(root)
    folder = build(root, now=now)
    vault = Vault.open(root / "vault.sqlite", config_dir=root / "config", models=models)
    try:
        vault.add_collection(folder, name=COLLECTION)
        vault.update([COLLECTION])
        apply_setup(vault, COLLECTION, now=now)
        if embed:
            vault.embed()
    except BaseException:
        vault.close()
        raise
    return vault
