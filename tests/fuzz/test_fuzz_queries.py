"""Any query, through every search the vault offers: an answer or a clear MemtroveError,
never another exception."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from memtrove import Vault
from memtrove.errors import MemtroveError
from tests.conftest import EXAMPLES
from tests.fuzz.conftest import hostile_text

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    folder = tmp_path_factory.mktemp("fuzz-queries")
    opened = Vault.open(folder / "vault.sqlite", config_dir=folder / "config")
    opened.add_collection(EXAMPLES, name="demo")
    opened.update()
    yield opened
    opened.close()


@FUZZ
@given(query=hostile_text)
def test_any_query_is_answered_or_refused_clearly(vault: Vault, query: str) -> None:
    for search in (
        lambda: vault.search(query, limit=5),
        lambda: vault.hybrid(query, limit=5, vectors=False),
        lambda: vault.query(query, limit=5),
        lambda: vault.curation.find_target(query),
        lambda: vault.memory.recall(query),
    ):
        try:
            answer = search()
        except MemtroveError as error:
            assert str(error) and "\n" not in str(error).strip()
            continue
        assert answer is not None
