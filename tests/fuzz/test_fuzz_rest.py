"""Any JSON body to any route of the REST server: a JSON answer below 500, never a crash."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtrove import Vault
from memtrove.api import create_app
from tests.api.conftest import JSON, local_client
from tests.conftest import EXAMPLES
from tests.fuzz.conftest import hostile_text, json_values

POSTS = [
    "/search", "/retrieve", "/memory/remember", "/memory/recall", "/memory/forget",
    "/memory/dedup", "/rules/prediction", "/rules/behavior", "/documents/abc123/pin",
    "/documents/abc123/snooze", "/documents/abc123/forget", "/memory/extraction/s1/done",
]  # fmt: skip
GETS = ["/documents", "/timeline/abc", "/graph/similar/abc", "/memory/entries", "/rules/prediction",
        "/memory/versions", "/collections", "/sessions", "/lifecycle/status"]  # fmt: skip


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("fuzz-rest")
    vault = Vault.open(folder / "vault.sqlite", config_dir=folder / "config")
    vault.add_collection(EXAMPLES, name="demo")
    vault.update()
    with local_client(create_app(vault)) as test_client:
        yield test_client
    vault.close()


def _check(response: object) -> None:
    status = response.status_code  # type: ignore[attr-defined]
    assert status < 500, response.text  # type: ignore[attr-defined]
    json.loads(response.text)  # type: ignore[attr-defined]


FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(route=st.sampled_from(POSTS), body=json_values)
def test_any_json_body_to_any_post_route(client: TestClient, route: str, body: object) -> None:
    _check(client.post(route, content=json.dumps(body), headers=JSON))


@FUZZ
@given(route=st.sampled_from(POSTS), raw=st.binary(max_size=300))
def test_any_bytes_to_any_post_route(client: TestClient, route: str, raw: bytes) -> None:
    _check(client.post(route, content=raw, headers=JSON))


@FUZZ
@given(route=st.sampled_from(GETS), query=st.dictionaries(hostile_text, hostile_text, max_size=3))
def test_any_query_string_to_any_get_route(
    client: TestClient, route: str, query: dict[str, str]
) -> None:
    safe = {
        k.encode("utf-8", "replace").decode(): v.encode("utf-8", "replace").decode()
        for k, v in query.items()
    }
    _check(client.get(route, params=safe))
