"""Fixtures for the model backend tests: the fake server, a fake clock, recorded sleeps."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memtrove.errors import ModelError
from memtrove.models.http import Cooldown
from tests.fakes.model_server import ModelServer


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Sleeps(list[float]):
    """Records the waits a backend asks for instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def assert_one_line(error: ModelError, kind: str, url: str) -> None:
    """The message is one line and starts with ``<kind> service at <url>``."""
    message = str(error)
    assert "\n" not in message
    assert message.startswith(f"{kind} service at {url}"), message


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cooldown(clock: FakeClock) -> Cooldown:
    """A cooldown registry of the test's own, on the fake clock."""
    return Cooldown(clock=clock)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
