"""Named, transactional migrations, applied when a vault opens.

Each migration runs in its own write transaction together with the row that
records it in ``schema_migrations``, so a crash leaves it either applied and recorded or not
applied at all. Two processes opening a fresh vault at once both try; the second re-reads the
record inside its transaction and skips. A vault whose record names a migration this version
does not know was written by a newer memtrove and is refused rather than misread.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memtrove.db.connection import Connection, write_transaction
from memtrove.db.migration_names import NAMES
from memtrove.errors import SchemaTooNewError

if TYPE_CHECKING:
    from memtrove.db.schema import Step

__all__ = ["applied_migrations", "migrate"]

Migration = tuple[str, Sequence["Step"]]

_RECORD_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
)
"""


def applied_migrations(connection: Connection) -> list[str]:
    """Names recorded in the vault, oldest first (empty for a new file)."""
    if not connection.catalog.has_table("schema_migrations"):
        return []
    # Names sort in the order they apply (m001, m002...), an engine's baseline (PostgreSQL's
    # p001_baseline) before the migrations written for both engines after it (m025...).
    rows = connection.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
    return sorted((str(row[0]) for row in rows), key=lambda name: not name.startswith("p"))


def migrate(
    connection: Connection,
    migrations: Sequence[Migration] | None = None,
    *,
    label: str = "vault",
) -> list[str]:
    """Apply every pending migration in order (those of the connection's dialect,
    :func:`memtrove.db.schema.migrations_for`, unless ``migrations`` are given); return the
    names applied now."""
    applied = applied_migrations(connection)
    if migrations is None:
        if tuple(applied) == NAMES:
            return []  # up to date: the migration modules need not load
        from memtrove.db.schema import migrations_for

        migrations = migrations_for(connection.dialect)
    known = [name for name, _ in migrations]
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise SchemaTooNewError(
            f"{label} was written by a newer memtrove (unknown schema migration "
            f"{unknown[-1]!r}); upgrade memtrove to open it"
        )
    if len(applied) == len(known):
        return []
    done: list[str] = []
    for name, statements in migrations:
        if name in applied:
            continue
        with write_transaction(connection):
            connection.execute(_RECORD_TABLE)
            already = connection.execute(
                "SELECT 1 FROM schema_migrations WHERE name = ?", (name,)
            ).fetchone()
            if already:
                continue
            for step in statements:
                if isinstance(step, str):
                    connection.execute(step)
                else:
                    step(connection)
            connection.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat(timespec="seconds")),
            )
            connection.catalog.set_schema_version(known.index(name) + 1)
        done.append(name)
    return done
