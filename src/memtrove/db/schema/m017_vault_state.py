"""Vault-wide bookkeeping that no other table owns.

- ``vault_state``: one row per key, with its value and when it was written. A bulk entity
  run (under the ``entity-cooccurrences`` worker lease: one at a time) writes
  ``entity_cooccurrences`` = ``pending`` in its first transaction and deletes it in the one
  that writes the run's co-occurrences (counted once, at the end); a vault that still holds
  the key was interrupted in between, and the next entity run (large or small, when it can
  take the lease) recounts every co-occurrence from the mentions before it starts.
"""

NAME = "m017_vault_state"

STATEMENTS: tuple[str, ...] = (
    """
    CREATE TABLE vault_state (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )
    """,
)
