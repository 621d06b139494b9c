"""memory_retrieve's mode classifier and route."""

from __future__ import annotations

import pytest

from memtrove.errors import InvalidQueryError
from memtrove.retrieval.router import MODES, classify_retrieval_mode, route


@pytest.mark.parametrize(
    ("query", "mode"),
    [
        ("what did we do last session?", "timeline"),
        ("Where were we yesterday with the upload fix", "timeline"),
        ("show me the latest handoff", "timeline"),
        ("why did we choose PostgreSQL?", "causal"),
        ("Why Postgres", "causal"),
        ("what led to the refresh token race", "causal"),
        ("the trade-off between arq and celery", "causal"),
        ("notes similar to the thumbnail leak", "discovery"),
        ("what else relates to mobile sync", "discovery"),
        ("compare libvips and Pillow for thumbnails", "complex"),
        ("How big are chunks? And what is the retry policy?", "complex"),
        ("MAX_UPLOAD_SIZE", "keyword"),
        ("settings in docker-compose.yml", "keyword"),
        ("which port does the api use", "keyword"),
        ("explain content-addressed blob storage", "semantic"),
        ("how does the resumable upload flow work", "semantic"),
        ("refresh token rotation for the mobile client", "hybrid"),
        ("", "hybrid"),
    ],
)
def test_classify(query: str, mode: str) -> None:
    assert classify_retrieval_mode(query) == mode


def test_keyword_signals_need_a_short_query() -> None:
    long = "MAX_UPLOAD_SIZE and the limits we hit on a slow phone uploading large videos"
    assert len(long) >= 50 and classify_retrieval_mode(long) == "hybrid"


def test_route_runs_every_mode() -> None:
    keyword = route("MAX_UPLOAD_SIZE")
    assert (keyword.requested, keyword.classified, keyword.mode, keyword.note) == (
        "auto",
        "keyword",
        "keyword",
        "",
    )
    causal = route("why did we choose PostgreSQL?")
    assert (causal.classified, causal.mode, causal.note) == ("causal", "causal", "")
    for mode in MODES[1:]:
        chosen = route("anything", mode)
        assert chosen.requested == chosen.classified == chosen.mode == mode
        assert chosen.note == ""
    assert route("anything", " Semantic ").mode == "semantic"


def test_unknown_mode_is_a_user_error() -> None:
    with pytest.raises(InvalidQueryError, match="unknown mode 'fuzzy'; known: auto, keyword"):
        route("anything", "fuzzy")
