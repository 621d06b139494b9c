"""Embedding safety: the geometry canary's baselines and the vault's health flags.

- ``embed_canary``: per canary profile (probe version, embedder identity, dimension), the
  vector of every probe text as a healthy run embedded it, and the pair margins measured
  then (JSON). Kept apart from ``content_vectors``: probes never reach retrieval.
- ``vault_flags``: durable flags about the vault's health, e.g. ``embed_geometry_taint``
  (the embedder's geometry failed its check, or vectors were written although it did),
  which ``doctor`` and ``status`` report until a verified run clears it.
"""

NAME = "m025_embed_safety"

STATEMENTS = (
    """
    CREATE TABLE embed_canary (
        probe_id TEXT NOT NULL,
        profile_key TEXT NOT NULL,
        embedding BLOB NOT NULL,
        pair_margins TEXT NOT NULL,
        embedded_at TEXT NOT NULL,
        PRIMARY KEY (probe_id, profile_key)
    )
    """,
    """
    CREATE TABLE vault_flags (
        flag TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
)
