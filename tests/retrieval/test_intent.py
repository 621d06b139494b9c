"""Intent classification (heuristic, LLM, cache) and the intent_search pipeline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from memtrove.errors import InvalidQueryError
from memtrove.models.openai_compat import HttpLLM
from memtrove.models.registry import ModelSettings
from memtrove.retrieval.intent import (
    classify_heuristic,
    classify_intent,
    parse_llm_intent,
    position_weight,
    temporal_window,
)
from memtrove.vault import Vault
from tests.conftest import write
from tests.fakes.model_server import ModelServer

TODAY = date(2026, 3, 18)  # a Wednesday
NOW = datetime(2026, 3, 18, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "intent", "confident"),
    [
        ("why did we switch to PostgreSQL?", "WHY", True),
        ("Why Postgres", "WHY", True),
        ("what caused the outage on Friday", "WHY", True),
        ("the reason for the retry limit", "WHY", True),
        ("when did we move thumbnails to Postgres?", "WHEN", True),
        ("timeline of the billing incident", "WHEN", True),
        ("who owns the ingest pipeline?", "ENTITY", True),
        ("what do we know about Priya Raman", "ENTITY", True),
        ("how does the upload flow work", "WHAT", True),
        ("notes about `IngestWorker`", "ENTITY", False),
        ("pool limits because of the outage", "WHY", False),
        ("deploys in March", "WHEN", False),
        ("refresh token rotation", "WHAT", False),
        ("", "WHAT", False),
    ],
)
def test_the_heuristic(query: str, intent: str, confident: bool) -> None:
    found = classify_heuristic(query, TODAY)
    assert found.intent == intent and found.source == "heuristic"
    assert (found.confidence >= 0.8) == confident


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("what happened on 2026-02-03", ("2026-02-03", "2026-02-03")),
        ("incidents in March 2025", ("2025-03-01", "2025-03-31")),
        ("deploys in February", ("2026-02-01", "2026-02-28")),
        ("what broke in December", ("2025-12-01", "2025-12-31")),  # asked in March: last year
        ("changes during 2024", ("2024-01-01", "2024-12-31")),
        ("what did we ship last week", ("2026-03-09", "2026-03-15")),
        ("yesterday's deploy", ("2026-03-17", "2026-03-17")),
        ("last month", ("2026-02-01", "2026-02-28")),
        ("it may be slow", None),  # "may" alone is not a month
        ("nothing dated here", None),
        ("on 2026-02-31", None),
    ],
)
def test_temporal_windows(query: str, window: tuple[str, str] | None) -> None:
    assert temporal_window(query, TODAY) == window


def test_a_when_question_carries_its_dates() -> None:
    found = classify_heuristic("when did the invoices stall in March 2026?", TODAY)
    assert (found.intent, found.temporal_start, found.temporal_end) == (
        "WHEN",
        "2026-03-01",
        "2026-03-31",
    )


@pytest.mark.parametrize(
    ("answer", "parsed"),
    [
        ('{"intent": "WHY", "confidence": 0.92}', ("WHY", 0.92)),
        ('```json\n{"intent": "entity", "confidence": 0.7}\n```', ("ENTITY", 0.7)),
        ('Sure! {"intent": "WHEN"}', ("WHEN", 0.7)),
        ('{"intent": "WHAT", "confidence": 7}', ("WHAT", 1.0)),
        ('{"intent": "HOW", "confidence": 0.9}', None),
        ('{"intent": "WHY", "confid', None),
        ("garbage \x00 text", None),
        ("", None),
    ],
)
def test_parsing_the_llm_answer(answer: str, parsed: tuple[str, float] | None) -> None:
    assert parse_llm_intent(answer) == parsed


def test_position_weights() -> None:
    assert [position_weight(rank) for rank in (0, 2, 3, 9, 10, 50)] == [
        0.75,
        0.75,
        0.60,
        0.60,
        0.40,
        0.40,
    ]


# -- the LLM, through the loopback fake -------------------------------------------------------


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as opened:
        yield opened


def cached_rows(vault: Vault) -> list[tuple[str, float]]:
    return [
        (str(row[0]), float(row[1]))
        for row in vault._connection.execute(
            "SELECT intent, confidence FROM intent_classifications"
        )
    ]


UNSURE = "refresh token rotation"  # the heuristic says WHAT at 0.5


def test_the_llm_decides_when_the_heuristic_is_unsure_and_is_cached_an_hour(
    vault: Vault, model_server: ModelServer
) -> None:
    model_server.set_chat_reply('{"intent": "WHY", "confidence": 0.85}')
    llm = HttpLLM(model_server.url)
    found = classify_intent(vault._connection, UNSURE, llm, now=NOW)
    assert (found.intent, found.source) == ("WHY", "llm")
    assert cached_rows(vault) == [("WHY", 0.85)]
    again = classify_intent(vault._connection, UNSURE, llm, now=NOW + timedelta(minutes=59))
    assert again.source == "cache" and len(model_server.requests_to("chat")) == 1
    stale = classify_intent(vault._connection, UNSURE, llm, now=NOW + timedelta(minutes=61))
    assert stale.source == "llm" and len(model_server.requests_to("chat")) == 2
    # a confident heuristic never asks
    classify_intent(vault._connection, "why did we do that", llm, now=NOW)
    assert len(model_server.requests_to("chat")) == 2


@pytest.mark.parametrize(
    ("mode", "reply"),
    [
        ("ok", '{"intent": "WHY", "conf'),  # truncated JSON
        ("ok", "I think it is a question about things."),  # garbage
        ("ok", '```\n{"intent": "MAYBE"}\n```'),  # fenced, not an intent
        ("http500", None),
        ("malformed_json", None),
        ("degenerate", None),  # empty content
    ],
)
def test_a_failed_llm_falls_back_to_the_heuristic_and_caches_nothing(
    vault: Vault, model_server: ModelServer, mode: str, reply: str | None
) -> None:
    if reply is not None:
        model_server.set_chat_reply(reply)
    model_server.set_mode("chat", mode)
    warnings: list[str] = []
    found = classify_intent(
        vault._connection, UNSURE, HttpLLM(model_server.url), now=NOW, warnings=warnings
    )
    assert (found.intent, found.source) == ("WHAT", "heuristic")
    assert cached_rows(vault) == [] and len(warnings) == 1 and "\n" not in warnings[0]


def test_a_timeout_falls_back_quickly(vault: Vault, model_server: ModelServer) -> None:
    model_server.slow_seconds = 3.0
    model_server.set_mode("chat", "slow")
    llm = HttpLLM(model_server.url, timeout=0.3)
    found = classify_intent(vault._connection, UNSURE, llm, now=NOW, warnings=[])
    assert found.source == "heuristic" and cached_rows(vault) == []


# -- intent_search on a vault ------------------------------------------------------------------


@pytest.fixture
def notes_vault(tmp_path: Path, notes: Path) -> Iterator[Vault]:
    write(notes, "decision.md", "# Use PgBouncer\n\nWe put PgBouncer in front of billing.\n")
    write(notes, "outage.md", "# Invoices stuck\n\nThe invoice run stalled for hours.\n")
    write(notes, "garden.md", "# Garden\n\nTomatoes and compost.\n")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as opened:
        opened.add_collection(notes, name="notes")
        opened.update()
        opened.embed()
        opened.graph.relate("notes/outage.md", "notes/decision.md", "causal", 0.9)
        yield opened


def test_a_why_question_reaches_the_cause_over_the_causal_edge(notes_vault: Vault) -> None:
    found = notes_vault.intent.intent_search("why did we put PgBouncer in front of billing?")
    assert found.intent == "WHY" and "graph" in found.stages
    assert [r.path for r in found][:2] == ["decision.md", "outage.md"]
    data = found.to_dict()
    assert data["intent"] == "WHY" and data["source"] == "heuristic" and data["results"]
    plain = notes_vault.intent.intent_search(
        "why did we put PgBouncer in front of billing?", enable_graph_traversal=False
    )
    assert "graph" not in plain.stages and plain.skipped["graph"] == "graph traversal turned off"


def test_force_intent_and_bad_values(notes_vault: Vault) -> None:
    found = notes_vault.intent.intent_search("PgBouncer", force_intent="when")
    assert found.classification.source == "forced" and found.intent == "WHEN"
    assert "graph" not in found.stages
    with pytest.raises(InvalidQueryError, match="force_intent must be one of WHY, WHEN"):
        notes_vault.intent.intent_search("PgBouncer", force_intent="HOW")


def test_a_date_window_that_matches_nothing_is_dropped(notes_vault: Vault) -> None:
    found = notes_vault.intent.intent_search("when did PgBouncer go in, in March 1999?")
    assert found.classification.temporal_start == "1999-03-01"
    assert "temporal filter" in found.skipped and found


@pytest.mark.parametrize("query", ["", "   ", "\x00\x01", "why " * 5000, "((( AND OR NOT"])
def test_hostile_queries_answer_without_errors(notes_vault: Vault, query: str) -> None:
    found = notes_vault.intent.intent_search(query)
    assert found.intent in ("WHY", "WHEN", "ENTITY", "WHAT")
    json.dumps(found.to_dict())


def test_without_vectors_it_still_answers(tmp_path: Path, notes: Path) -> None:
    write(notes, "a.md", "# Why PgBouncer\n\nBecause of the outage.\n")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        found = vault.intent.intent_search("why PgBouncer")
        assert [r.path for r in found] == ["a.md"] and "vector" in found.skipped


def test_the_reranker_sees_200_characters_and_blends_by_position(
    tmp_path: Path, notes: Path, model_server: ModelServer
) -> None:
    write(notes, "long.md", "# PgBouncer\n\n" + "PgBouncer pools connections. " * 40 + "\n")
    write(notes, "short.md", "# Pools\n\nConnection pools for billing.\n")
    settings = ModelSettings(rerank_url=model_server.url)
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=settings) as vault:
        vault.add_collection(notes, name="notes")
        vault.update()
        vault.embed()
        found = vault.intent.intent_search("PgBouncer connection pools")
        assert "rerank" in found.stages
        documents = model_server.requests_to("rerank")[0].body["documents"]
        assert documents and max(len(text) for text in documents) <= 200
        model_server.set_mode("rerank", "http500")
        failed = vault.intent.intent_search("billing connection pools")
        assert "rerank" in failed.skipped and failed
