"""Reading the time a question names (retrieval.temporal): what each wording means."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memtrove.retrieval.temporal import month_window, time_constraint

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)  # a Thursday


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "direction", "start", "end"),
    [
        (
            "what setback did Melanie face in October 2023?",
            "within",
            "2023-10-01",
            "2023-10-31T23:59:59",
        ),
        ("what happened in 2024", "within", "2024-01-01", "2024-12-31T23:59:59"),
        ("what broke on 2024-05-02?", "within", "2024-05-02", "2024-05-02T23:59:59"),
        ("which decision did we take last week?", "within", "2026-11-23", "2026-11-29T23:59:59"),
        ("what did I do yesterday?", "within", "2026-12-02", "2026-12-02T23:59:59"),
        ("notes from last month", "within", "2026-11-01", "2026-11-30T23:59:59"),
        ("what did Maria do before April 10, 2023?", "before", None, "2023-04-09T23:59:59"),
        ("tournaments won by July 10, 2022", "before", None, "2022-07-10T23:59:59"),
        ("what changed after 2021?", "after", "2022-01-01", None),
        ("what changed since March 2024?", "after", "2024-03-01", None),
        (
            "the tournament in the beginning of November 2022",
            "within",
            "2022-11-01",
            "2022-11-15T23:59:59",
        ),
    ],
)
def test_windows(query: str, direction: str, start: str | None, end: str | None) -> None:
    found = time_constraint(query, NOW)
    assert found is not None
    assert found.direction == direction
    assert found.start == (day(start) if start else None)
    assert found.end == (day(end) if end else None)
    assert found.anchor is not None


def test_offsets_from_a_date_centre_on_the_shifted_day() -> None:
    found = time_constraint("the puppy she got two weeks before August 11, 2023", NOW)
    assert found is not None and found.anchor == day("2023-07-28")
    assert found.start is not None and found.end is not None
    assert found.start < found.anchor < found.end
    week = time_constraint("what did John do the week before August 3, 2023?", NOW)
    assert week is not None
    assert (week.start, week.end) == (day("2023-07-27"), day("2023-08-02T23:59:59"))


def test_ago_counts_back_from_now() -> None:
    found = time_constraint("what did we ship 3 days ago?", NOW)
    assert found is not None and found.anchor == day("2026-11-30")


def test_a_month_without_a_year_is_placed_by_the_vault() -> None:
    found = time_constraint("when did Melanie go camping in June?", NOW)
    assert found is not None and found.month == 6 and found.start is None
    since = time_constraint("what changed since May?", NOW)
    assert since is not None and (since.direction, since.month) == ("after", 5)


@pytest.mark.parametrize(
    ("query", "direction", "event"),
    [
        ("how were sessions stored before the migration?", "before", "migration"),
        ("what broke after the launch?", "after", "launch"),
        ("what did Melanie do after the road trip to relax?", "after", "road trip"),
        ("how did Caroline feel after her charity race?", "after", "charity race"),
        ("what changed since the outage", "after", "outage"),
    ],
)
def test_events(query: str, direction: str, event: str) -> None:
    found = time_constraint(query, NOW)
    assert found is not None and (found.direction, found.event) == (direction, event)


@pytest.mark.parametrize(
    "query",
    [
        "why did we choose PostgreSQL?",
        "how do I set up the build",
        "may I ask about connection pools",
        "dogs adopted from the dog shelter",  # "from" names a place, not a time
        "what is the retry budget",
        "marketing plan",
        "",
    ],
)
def test_questions_naming_no_time(query: str) -> None:
    assert time_constraint(query, NOW) is None


def test_month_parts() -> None:
    assert month_window(2024, 2) == (day("2024-02-01"), day("2024-02-29T23:59:59"))
    assert month_window(2024, 12, "end")[0] == day("2024-12-16")


@given(st.text(max_size=200))
def test_any_text_parses_or_is_none(text: str) -> None:
    found = time_constraint(text, NOW)
    if found is not None:
        assert found.direction in ("within", "before", "after")
        if found.start and found.end:
            assert found.start <= found.end
