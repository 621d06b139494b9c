"""The PostgreSQL vault's schema, one module per migration, applied in this order.

It starts from :mod:`~memtrove.db.schema.postgres.p001_baseline`, equal to the schema
SQLite's m001-m024 build (the names it ``REPLACES``); every later migration is written in
PostgreSQL's dialect beside the SQLite one. As for SQLite, never edit a migration once it
has shipped: add a new one.
"""

from __future__ import annotations

from memtrove.db.schema.postgres import p001_baseline

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (p001_baseline.NAME, p001_baseline.STATEMENTS),
)
