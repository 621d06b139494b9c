"""The PostgreSQL text index keeps each term's positions in its postings (PostgreSQL's
:mod:`memtrove.db.schema.postgres.m029_text_positions`). Nothing changes on SQLite, whose
FTS5 index keeps positions in its own doclists: the migration is recorded, so that both
engines' vaults carry the same list."""

NAME = "m029_text_positions"

STATEMENTS: tuple[str, ...] = ()
