"""The PostgreSQL vault's schema, one module per migration, applied in this order.

It starts from :mod:`~memtrove.db.schema.postgres.p001_baseline`, equal to the schema
SQLite's m001-m024 build (the names it ``REPLACES``); every later migration (m025 on) is
written in PostgreSQL's dialect beside the SQLite one, under the same name and in the same
order. As for SQLite, never edit a migration once it has shipped: add a new one.
"""

from __future__ import annotations

from memtrove.db.schema.postgres import (
    m025_embed_safety,
    m026_beads,
    m027_review_fields,
    m028_save_parity,
    m029_text_positions,
    p001_baseline,
)

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (p001_baseline.NAME, p001_baseline.STATEMENTS),
    (m025_embed_safety.NAME, m025_embed_safety.STATEMENTS),
    (m026_beads.NAME, m026_beads.STATEMENTS),
    (m027_review_fields.NAME, m027_review_fields.STATEMENTS),
    (m028_save_parity.NAME, m028_save_parity.STATEMENTS),
    (m029_text_positions.NAME, m029_text_positions.STATEMENTS),
)
