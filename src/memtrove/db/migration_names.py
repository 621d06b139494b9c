"""The names of the vault's migrations, in order, without importing them.

Opening a vault that is up to date (nearly every open) only compares these with the names
the vault records; the migration modules load only when one is pending. A test keeps this
list equal to ``memtrove.db.schema.MIGRATIONS``.
"""

NAMES: tuple[str, ...] = (
    "m001_core",
    "m002_fragments",
    "m003_fts_vocab",
    "m004_vectors",
    "m005_sessions",
    "m006_vector_version",
    "m007_graph",
    "m008_memory",
    "m009_usage_index",
    "m010_unique_docids",
    "m011_lease_holders",
    "m012_graph_memory",
    "m013_lifecycle",
    "m014_consolidation",
    "m015_capture",
    "m016_mine",
    "m017_vault_state",
    "m018_import_runs",
    "m019_session_project",
    "m020_passages",
    "m021_long_passages",
    "m022_injection_audit",
    "m023_second_vectors",
    "m024_vector_version_random",
    "m025_embed_safety",
    "m026_beads",
    "m027_review_fields",
    "m028_save_parity",
    "m029_text_positions",
)
