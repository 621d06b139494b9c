"""The lifecycle policy of ``config.yaml`` and the documents a sweep would archive under it.

::

    lifecycle:
      archive_after_days: 90          # unused this long: archived (none: never; default 90)
      type_overrides:                 # per content type (none: never archive that type)
        handoff: 30
        conversation: none
      collection_overrides:           # per collection; wins over type_overrides
        journal: 365
      exempt_collections: [_memtrove] # never archived
      purge_after_days: none          # archived this long: deleted by ``sweep --apply``
      dry_run: true                   # read for ClawMem configs; commands say it themselves

A document is *unused* since the latest of: its last access, its last recall (surfaced by a
hook), its effective time (authored, else modified) and when memtrove first indexed it (so a
vault indexed today archives nothing for ``archive_after_days``). Never archived: pinned
documents, documents snoozed until later, durable types (:data:`DURABLE_TYPES`, the types
attention decay spares: decision, deductive, preference, hub, research, antipattern) and
entries of the memory store (they keep their own ``archived`` flag).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from memtrove.db.connection import Connection
from memtrove.errors import ConfigError
from memtrove.results.lifecycle import LifecycleCandidate
from memtrove.text import to_iso

__all__ = [
    "DEFAULT_ARCHIVE_AFTER_DAYS",
    "DURABLE_TYPES",
    "MAX_DAYS",
    "LifecyclePolicy",
    "parse_policy",
    "sweep_candidates",
]

DEFAULT_ARCHIVE_AFTER_DAYS = 90
MAX_DAYS = 36500
# The spec's attention-decay exemptions: knowledge that stays true however long it sits unread.
DURABLE_TYPES = frozenset({"decision", "deductive", "preference", "hub", "research", "antipattern"})
_NEVER = ("none", "never", "null")
_KEYS = frozenset(
    {
        "archive_after_days",
        "type_overrides",
        "collection_overrides",
        "exempt_collections",
        "purge_after_days",
        "dry_run",
    }
)

Days = int | None  # None: never


class LifecyclePolicy(NamedTuple):
    """When documents are archived, and when archived ones are purged."""

    archive_after_days: Days = DEFAULT_ARCHIVE_AFTER_DAYS
    type_overrides: Mapping[str, Days] = {}
    collection_overrides: Mapping[str, Days] = {}
    exempt_collections: frozenset[str] = frozenset()
    purge_after_days: Days = None
    dry_run: bool = True

    def days_for(self, collection: str, content_type: str) -> Days:
        """Days unused before a document of ``collection`` and ``content_type`` is archived
        (None: never): exempt collections and durable types never; then the collection's
        override, the type's override, the default."""
        if collection in self.exempt_collections or content_type in DURABLE_TYPES:
            return None
        if collection in self.collection_overrides:
            return self.collection_overrides[collection]
        if content_type in self.type_overrides:
            return self.type_overrides[content_type]
        return self.archive_after_days

    def to_dict(self) -> dict[str, Any]:
        return {
            "archive_after_days": self.archive_after_days,
            "type_overrides": dict(self.type_overrides),
            "collection_overrides": dict(self.collection_overrides),
            "exempt_collections": sorted(self.exempt_collections),
            "purge_after_days": self.purge_after_days,
            "dry_run": self.dry_run,
            "durable_types": sorted(DURABLE_TYPES),
        }


def _days(value: object, where: str) -> Days:
    if value is None:
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _NEVER:
            return None
        if word.isdigit():
            value = int(word)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_DAYS:
        return value
    raise ConfigError(f"{where} must be a number of days (1 to {MAX_DAYS}) or none, not {value!r}")


def _overrides(value: object, where: str, *, types: bool) -> dict[str, Days]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a mapping of names to days")
    found: dict[str, Days] = {}
    for name, days in value.items():
        key = str(name)
        if types and key in DURABLE_TYPES:
            raise ConfigError(f"{where}: {key!r} is a durable type, never archived")
        found[key] = _days(days, f"{where}: {key!r}")
    return found


def parse_policy(raw: object, source: str = "config.yaml") -> LifecyclePolicy:
    """The ``lifecycle:`` section (None or missing: the defaults); ConfigError names the
    file (``source``) and the key that is wrong."""
    if raw is None:
        return LifecyclePolicy()
    where = f"{source}: lifecycle"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping")
    unknown = sorted(str(key) for key in raw if key not in _KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})"
        )
    exempt = raw.get("exempt_collections") or []
    if isinstance(exempt, str):
        exempt = [exempt]
    if not isinstance(exempt, list) or not all(isinstance(name, str) for name in exempt):
        raise ConfigError(f"{where}: 'exempt_collections' must be a list of collection names")
    dry_run = raw.get("dry_run", True)
    if not isinstance(dry_run, bool):
        raise ConfigError(f"{where}: 'dry_run' must be true or false, not {dry_run!r}")
    return LifecyclePolicy(
        archive_after_days=_days(
            raw.get("archive_after_days", DEFAULT_ARCHIVE_AFTER_DAYS),
            f"{where}: 'archive_after_days'",
        ),
        type_overrides=_overrides(
            raw.get("type_overrides"), f"{where}: 'type_overrides'", types=True
        ),
        collection_overrides=_overrides(
            raw.get("collection_overrides"), f"{where}: 'collection_overrides'", types=False
        ),
        exempt_collections=frozenset(exempt),
        purge_after_days=_days(raw.get("purge_after_days"), f"{where}: 'purge_after_days'"),
        dry_run=dry_run,
    )


def sweep_candidates(
    connection: Connection, policy: LifecyclePolicy, now: datetime
) -> list[LifecycleCandidate]:
    """The active documents ``policy`` archives at ``now``, longest unused first."""
    durable = sorted(DURABLE_TYPES)
    rows = connection.execute(
        "SELECT d.id, d.docid, d.collection, d.path, d.title, d.content_type, "
        "COALESCE(d.last_accessed_at, ''), COALESCE(r.last_recalled_at, ''), "
        "COALESCE(d.authored_at, d.modified_at), d.created_at "
        "FROM documents d LEFT JOIN recall_stats r ON r.doc_id = d.id "
        "WHERE d.active = 1 AND d.pinned = 0 "
        "AND (d.snoozed_until IS NULL OR d.snoozed_until <= ?) "
        f"AND d.content_type NOT IN ({','.join('?' * len(durable))}) "
        "AND NOT EXISTS (SELECT 1 FROM memory_entries e WHERE e.doc_id = d.id)",
        (to_iso(now), *durable),
    ).fetchall()
    found: list[LifecycleCandidate] = []
    for doc_id, docid, collection, path, title, content_type, *used in rows:
        last_used = max(map(str, used))  # the latest of the four (none is NULL)
        days = policy.days_for(str(collection), str(content_type))
        if days is None or to_iso(now - timedelta(days=days)) < str(last_used):
            continue
        idle = _idle_days(str(last_used), now)
        found.append(
            LifecycleCandidate(
                doc_id=int(doc_id),
                docid=str(docid),
                collection=str(collection),
                path=str(path),
                title=str(title),
                content_type=str(content_type),
                last_used_at=str(last_used),
                reason=f"unused {idle} days ({content_type} in {collection}: {days} days)",
            )
        )
    found.sort(key=lambda candidate: (candidate.last_used_at, candidate.doc_id))
    return found


def _idle_days(stamp: str, now: datetime) -> int:
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return 0
    return max(0, (now - then).days)
