"""A vocabulary view of the full-text index: how many documents hold each (stemmed) term.

Long queries use it to keep their most telling terms.
"""

NAME = "m003_fts_vocab"

STATEMENTS: tuple[str, ...] = (
    "CREATE VIRTUAL TABLE documents_vocab USING fts5vocab(documents_fts, 'row')",
)
