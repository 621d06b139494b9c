"""m025_embed_safety on a vault of the schema before it, on each engine: the vault opens,
the two tables appear, the migrations are listed in the order they applied, and an embed
run calibrates the canary of the vectors already there."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.db.connection import open_connection
from memtrove.db.migrations import applied_migrations, migrate
from memtrove.db.schema import migrations_for
from memtrove.index.canary import load_baseline, profile_key
from memtrove.index.vault_flags import read_taint
from tests.conftest import ENGINES, write
from tests.postgres_server import fresh_schema


@pytest.mark.parametrize("engine", ENGINES)
def test_a_vault_before_m025_upgrades_on_open(engine: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    write(notes, "a.md", "# Herons\n\nA grey heron by the canal.\n")

    def upgrade(location: str | Path) -> None:
        connection = open_connection(location)
        every = migrations_for(connection.dialect)
        before = every[: [name for name, _ in every].index("m025_embed_safety")]
        migrate(connection, before)
        assert not connection.catalog.has_table("embed_canary")
        connection.close()
        with Vault.open(location, config_dir=tmp_path / "config") as vault:
            applied = applied_migrations(vault._connection)
            assert applied == [name for name, _ in every]  # in the order they apply
            assert vault._connection.catalog.has_table("vault_flags")
            assert read_taint(vault._connection) is None
            vault.add_collection(notes, name="notes")
            vault.update()
            assert vault.embed().errors == []
            embedder = vault.models.embedder
            profile = profile_key(embedder.identity, embedder.dimensions)
            assert load_baseline(vault._connection, profile) is not None

    if engine == "sqlite":
        upgrade(tmp_path / "vault.sqlite")
        return
    with fresh_schema() as location:
        upgrade(location)
