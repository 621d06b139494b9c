"""The restrictions every retrieval channel applies, and the SQL conditions they become.

Internal collections (names starting with ``_``: the agent-written memories of
``_memtrove``) are left out inside each channel's query when ``exclude_internal`` is set,
never by dropping rows after the top ``limit`` were fetched: the more notes the Stop hooks
write, the emptier a post-filtered answer would get. ``kept_internal`` names
``collection/path`` prefixes of internal documents that stay in all the same (what the
hooks surface of the session capture). ``hidden_parts`` (text found anywhere in
``collection/path``) and ``hidden_collections`` leave out what a caller would otherwise drop
after the search (the hooks' ``_PRIVATE/``, ``experiments/`` and ``surface: false``).
Records (content type ``record``: the observation behind a captured decision or rule,
whose text the session's decisions or antipatterns document holds) are left out unless
``show_records`` is set or asked for by type: a decision is found once.
"""

from collections.abc import Sequence
from typing import NamedTuple

__all__ = [
    "INTERNAL_PREFIX",
    "RECORD_TYPE",
    "Filters",
    "filter_sql",
    "internal_filters",
    "is_internal",
]

INTERNAL_PREFIX = "_"
RECORD_TYPE = "record"


def is_internal(collection: str) -> bool:
    """Whether ``collection`` is an internal one (its name starts with ``_``)."""
    return collection.startswith(INTERNAL_PREFIX)


class Filters(NamedTuple):
    """Restrictions every retrieval channel applies."""

    collections: Sequence[str] | None = None
    content_types: Sequence[str] | None = None
    since: str | None = None
    until: str | None = None
    exclude_internal: bool = False
    kept_internal: tuple[str, ...] = ()
    hidden_parts: tuple[str, ...] = ()
    hidden_collections: tuple[str, ...] = ()
    show_records: bool = False

    def where(self, alias: str = "d") -> tuple[list[str], list[object]]:
        """These filters as SQL conditions over ``documents`` (aliased ``alias``)."""
        return filter_sql(alias, self)

    def admits(self, collection: str, path: str) -> bool:
        """Whether a document of ``collection`` at ``path`` passes the internal exclusion and
        the hidden parts and collections (the same rules as the SQL of :meth:`where`)."""
        key = f"{collection}/{path}"
        if collection in self.hidden_collections or any(p in key for p in self.hidden_parts):
            return False
        if not self.exclude_internal or not is_internal(collection):
            return True
        return any(key.startswith(prefix) for prefix in self.kept_internal)

    @property
    def narrows(self) -> bool:
        """Whether documents are left out by something other than the plain filters."""
        return self.exclude_internal or bool(self.hidden_parts or self.hidden_collections)


def internal_filters(collections: Sequence[str] | None, include_internal: bool) -> Filters:
    """Filters of ``collections`` that leave internal documents out unless
    ``include_internal`` is set or an internal collection is named in ``collections``."""
    named = list(collections) if collections else None
    asked = any(is_internal(name) for name in named or ())
    return Filters(
        collections=named, exclude_internal=not (include_internal or asked), show_records=asked
    )


def filter_sql(alias: str, filters: Filters) -> tuple[list[str], list[object]]:
    """SQL conditions (to be joined by ``AND``) and their parameters; ``alias`` is the
    ``documents`` table's alias (empty: no alias)."""
    column = f"{alias}." if alias else ""
    collections, content_types = filters.collections, filters.content_types
    since, until, kept_internal = filters.since, filters.until, filters.kept_internal
    hidden_parts, hidden_collections = filters.hidden_parts, filters.hidden_collections
    where: list[str] = []
    params: list[object] = []
    if collections:
        where.append(f"{column}collection IN ({','.join('?' * len(collections))})")
        params.extend(collections)
    if content_types:
        where.append(f"{column}content_type IN ({','.join('?' * len(content_types))})")
        params.extend(content_types)
    elif not filters.show_records:
        where.append(f"{column}content_type <> ?")
        params.append(RECORD_TYPE)
    if since:
        where.append(f"COALESCE({column}authored_at, {column}modified_at) >= ?")
        params.append(since)
    if until:
        where.append(f"COALESCE({column}authored_at, {column}modified_at) <= ?")
        params.append(until)
    if filters.exclude_internal:
        # substr, not LIKE/GLOB: '_' is a LIKE wildcard, and a kept prefix may hold '*'
        kept = [
            f"substr({column}collection || '/' || {column}path, 1, ?) = ?" for _ in kept_internal
        ]
        for prefix in kept_internal:
            params.extend([len(prefix), prefix])
        where.append(
            "("
            + " OR ".join([f"substr({column}collection, 1, 1) <> '{INTERNAL_PREFIX}'", *kept])
            + ")"
        )
    if hidden_collections:
        where.append(f"{column}collection NOT IN ({','.join('?' * len(hidden_collections))})")
        params.extend(hidden_collections)
    for part in hidden_parts:
        # replace(), not instr() or LIKE: the same on every engine, and case-sensitive
        where.append(
            f"replace({column}collection || '/' || {column}path, ?, '') = "
            f"{column}collection || '/' || {column}path"
        )
        params.append(part)
    return where, params
