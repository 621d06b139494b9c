"""The judged temporal/entity set: query with its conditional channels beats the query path
without them, and ranks the questions that trigger none exactly as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove.retrieval import temporal
from memtrove.vault import Vault
from tests.retrieval.channel_set import build, measure

Table = dict[str, dict[str, float]]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    opened = build(tmp_path_factory.mktemp("channel-set"))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def with_channels(vault: Vault) -> Table:
    return measure(vault)


@pytest.fixture(scope="module")
def without_temporal(vault: Vault) -> Table:
    """The same vault and pipeline with the temporal trigger never firing: the query path
    as it ranked before the channel."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(temporal, "time_constraint", lambda query, now: None)
        return measure(vault)


@pytest.fixture(scope="module")
def without_entities(tmp_path_factory: pytest.TempPathFactory) -> Table:
    """The same notes before ``memtrove entities``: no entity is known, the channel never
    fires."""
    vault = build(tmp_path_factory.mktemp("channel-set-plain"), entities=False)
    try:
        return measure(vault)
    finally:
        vault.close()


def test_temporal_questions_gain(with_channels: Table, without_temporal: Table) -> None:
    new, old = with_channels["temporal"], without_temporal["temporal"]
    assert new["R@5"] > old["R@5"] and new["MRR"] > old["MRR"], (new, old)


def test_entity_questions_gain(with_channels: Table, without_entities: Table) -> None:
    new, old = with_channels["entity"], without_entities["entity"]
    assert new["R@5"] > old["R@5"] and new["MRR"] > old["MRR"], (new, old)


def test_questions_without_triggers_rank_as_before(
    with_channels: Table, without_temporal: Table, without_entities: Table
) -> None:
    assert with_channels["control"] == without_temporal["control"] == without_entities["control"]


def test_the_set_runs_without_vectors(tmp_path: Path) -> None:
    """BM25 alone (no `memtrove embed`): the channels still fire and still help."""
    vault = build(tmp_path, embed=False)
    try:
        table = measure(vault)
    finally:
        vault.close()
    assert table["temporal"]["MRR"] >= 0.8 and table["entity"]["R@5"] >= 0.75, table
