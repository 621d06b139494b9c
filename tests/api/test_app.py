"""The REST app's guard rails, in-process: token, body and limit caps, JSON errors, path
traversal, OpenAPI, and the checks the routes share (Host, Origin and Content-Type: see
test_guard.py)."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from memtrove import ModelUnavailableError, Vault
from memtrove.api import create_app
from memtrove.api.errors import validation_message
from memtrove.api.routes.common import check_pattern, reference
from memtrove.api.schemas import names
from memtrove.cli.serve import bind_listener, is_loopback
from memtrove.errors import InvalidQueryError
from tests.api.conftest import JSON, TOKEN, local_client

BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def secured(demo: Vault) -> Iterator[TestClient]:
    with local_client(create_app(demo, token=TOKEN)) as client:
        yield client


# -- token -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": TOKEN},
        {"Authorization": "Bearer "},
    ],
)
def test_a_missing_or_wrong_token_is_401(secured: TestClient, headers: dict[str, str]) -> None:
    for method, path in (("GET", "/collections"), ("POST", "/search"), ("GET", "/export")):
        answer = secured.request(method, path, headers=headers, json={"query": "token"})
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == "Bearer"
        assert set(answer.json()) == {"error"} and "MEMTROVE_API_TOKEN" in answer.json()["error"]


def test_the_right_token_opens_every_route(secured: TestClient) -> None:
    assert secured.get("/collections", headers=BEARER).status_code == 200
    assert secured.get("/collections", headers={"Authorization": f"bearer  {TOKEN} "}).is_success
    found = secured.post("/search", json={"query": "refresh token"}, headers=BEARER)
    assert found.status_code == 200 and found.json()["count"] > 0


def test_unknown_routes_need_the_token_too(secured: TestClient) -> None:
    assert secured.get("/nope").status_code == 401
    missing = secured.get("/nope", headers=BEARER)
    assert missing.status_code == 404 and missing.json() == {"error": "not found: GET /nope"}


def test_the_docs_are_open_and_declare_the_bearer_scheme(secured: TestClient) -> None:
    assert "swagger" in secured.get("/docs").text.lower()
    assert secured.get("/redoc").status_code == 200
    schema = secured.get("/openapi.json").json()
    assert schema["info"]["title"] == "memtrove"
    assert any(
        s.get("scheme") == "bearer" for s in schema["components"]["securitySchemes"].values()
    )
    assert schema["paths"]["/search"]["post"]["security"]


def test_without_a_token_everything_is_open(client: TestClient) -> None:
    assert client.get("/collections").status_code == 200
    assert "securitySchemes" not in client.get("/openapi.json").json().get("components", {})


# -- CORS --------------------------------------------------------------------------------------


def test_no_cors_headers_are_ever_sent(secured: TestClient) -> None:
    own = "http://127.0.0.1:7438"
    for origin in (own, "http://localhost:5173", "http://evil.example"):
        for answer in (
            secured.get("/collections", headers={"Origin": origin, **BEARER}),
            secured.options(
                "/search", headers={"Origin": origin, "Access-Control-Request-Method": "POST"}
            ),
        ):
            assert not [name for name in answer.headers if name.startswith("access-control-")]
    with pytest.raises(TypeError):
        create_app(secured.app.state.vault, cors_origins=["http://localhost:5173"])  # type: ignore[call-arg]


# -- caps and validation ---------------------------------------------------------------------


def test_a_body_over_the_cap_is_413(client: TestClient) -> None:
    big = client.post("/search", json={"query": "x" * (1024 * 1024)})
    assert big.status_code == 413 and big.json() == {
        "error": "request body over the 1,048,576-byte limit"
    }

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"query": "'
        for _ in range(12):
            yield b"y" * 100_000
        yield b'"}'

    streamed = client.post(
        "/search", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413 and "limit" in streamed.json()["error"]


def test_the_body_cap_is_configurable(demo: Vault) -> None:
    with local_client(create_app(demo, max_body_bytes=64)) as client:
        assert client.post("/search", json={"query": "refresh token"}).status_code == 200
        assert client.post("/search", json={"query": "r" * 80}).status_code == 413


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"query": "x", "limit": 51}, "limit: Input should be less than or equal to 50"),
        ({"query": "x", "limit": 0}, "limit: Input should be greater than or equal to 1"),
        ({"query": "x", "limit": "10"}, "limit: Input should be a valid integer"),
        ({"query": "x", "compact": "false"}, "compact: Input should be a valid boolean"),
        ({"query": "x", "mode": "psychic"}, "mode: Input should be"),
        ({"query": "x", "colection": "demo"}, "unknown field 'colection'"),
        ({"query": "   "}, "query: Value error, the query must not be blank"),
        ({"limit": 3}, "query: Field required"),
        ({"query": "x", "min_score": 2}, "min_score: Input should be less than or equal to 1"),
        ({"query": "x", "collection": ["demo", 3]}, "collection"),
        ([], "Input should be a valid dictionary"),
    ],
)
def test_invalid_bodies_are_422_with_one_line(
    client: TestClient, body: object, message: str
) -> None:
    answer = client.post("/search", json=body)
    assert answer.status_code == 422
    assert set(answer.json()) == {"error"} and "\n" not in answer.json()["error"]
    assert message in answer.json()["error"]


def test_malformed_or_missing_json_is_422(client: TestClient) -> None:
    bad = client.post(
        "/search", content=b'{"query": ', headers={"Content-Type": "application/json"}
    )
    assert bad.status_code == 422 and bad.json()["error"].startswith("invalid JSON")
    missing = client.post("/search", headers={"Content-Type": "application/json"})
    assert missing.status_code == 422 and missing.json() == {"error": "a JSON body is required"}


@pytest.mark.parametrize("path", ["/sessions?limit=51", "/sessions?limit=0", "/sessions?limit=x"])
def test_query_parameters_are_capped(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 422 and "query parameter limit" in answer.json()["error"]


# -- errors ------------------------------------------------------------------------------------


def test_memtrove_errors_carry_their_status(
    client: TestClient, demo: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable(*args: object, **kwargs: object) -> None:
        raise ModelUnavailableError("embedding service at http://127.0.0.1:9 is cooling down")

    monkeypatch.setattr(demo, "vsearch", unavailable)
    answer = client.post("/search", json={"query": "x", "mode": "semantic"})
    assert answer.status_code == 503
    assert answer.json() == {"error": "embedding service at http://127.0.0.1:9 is cooling down"}
    bad_type = client.post("/search", json={"query": "x", "content_type": "recipe"})
    assert (
        bad_type.status_code == 400 and "unknown content type 'recipe'" in bad_type.json()["error"]
    )
    bad_date = client.post("/search", json={"query": "x", "since": "last tuesday"})
    assert bad_date.status_code == 400 and "since" in bad_date.json()["error"]


def test_an_error_quoting_a_huge_value_stays_short(client: TestClient) -> None:
    """The direction is quoted back: 60,000 characters of it made a 60 KB error."""
    docid = client.post("/search", json={"query": "refresh"}).json()["results"][0]["docid"]
    answer = client.get(f"/graph/causal/{docid}", params={"direction": "x" * 60_000})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error.startswith("direction must be one of") and "…" in error
    assert len(error) == 600 and error.endswith("x" * 119 + "'")


def test_an_unexpected_failure_is_500_without_details(
    client: TestClient,
    demo: Vault,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret detail from /home/me/.ssh")

    monkeypatch.setattr(demo, "search", broken)
    with caplog.at_level(logging.ERROR, logger="memtrove.api"):
        answer = client.post("/search", json={"query": "refresh"})
    assert answer.status_code == 500 and answer.json() == {"error": "internal error"}
    assert "secret" not in answer.text and "Traceback" not in answer.text
    assert "secret detail" in caplog.text  # logged server side, with its traceback
    assert client.get("/collections").status_code == 200  # and the app keeps serving


def test_unknown_routes_and_methods_are_json(client: TestClient) -> None:
    assert client.get("/nope/deeper").json() == {"error": "not found: GET /nope/deeper"}
    wrong = client.get("/search")
    assert wrong.status_code == 405 and wrong.json() == {"error": "method not allowed: GET /search"}


# -- path traversal ----------------------------------------------------------------------------

TRAVERSALS = [
    "..%2F..%2Fetc%2Fpasswd",
    "%2E%2E",
    "%2Fetc%2Fpasswd",
    "abcdef%2F..%2F..%2Fetc",
    "abcdef..",
    "C:%5Cwindows",
    "xyz123",
    "abcde",
    "a" * 65,
]


@pytest.mark.parametrize("bad", TRAVERSALS)
def test_docids_are_hex_only(client: TestClient, bad: str) -> None:
    for path in (f"/documents/{bad}", f"/timeline/{bad}", f"/graph/similar/{bad}"):
        answer = client.get(path)
        assert answer.status_code == 400, path
        assert "6-64 hexadecimal" in answer.json()["error"]
        assert "root:" not in answer.text


@pytest.mark.parametrize("action", ["pin", "snooze", "forget"])
def test_writes_take_hex_docids_only(client: TestClient, action: str) -> None:
    assert client.post(f"/documents/zzzzzz/{action}", headers=JSON).status_code == 400
    # decoded, the path no longer names a document action: refused by the router
    traversal = client.post(f"/documents/..%2F..%2Fetc/{action}", headers=JSON)
    assert traversal.status_code in (400, 404, 405)


@pytest.mark.parametrize(
    "pattern",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "demo/../../etc/passwd",
        "demo/..",
        "~/notes/*.md",
        "C:\\Windows\\*.ini",
        "demo\\..\\..\\secret",
        "\\\\server\\share",
        "memtrove://../etc/passwd",
        "#abcdef, ../x",
        "demo/notes/*.md,/etc/shadow",
        "   ",
        "a\x00b",
    ],
)
def test_patterns_cannot_leave_the_vault(client: TestClient, pattern: str) -> None:
    answer = client.get("/documents", params={"pattern": pattern})
    assert answer.status_code == 400 and set(answer.json()) == {"error"}
    with pytest.raises(InvalidQueryError):
        check_pattern(pattern)


def test_harmless_patterns_pass_the_check() -> None:
    for pattern in ("demo/**/*.md", "#abcdef,demo/a.md", "memtrove://demo/x..y.md", "notes/..md"):
        assert check_pattern(pattern) == pattern


def test_reference_normalises_a_docid() -> None:
    assert reference("ABCDEF") == "#abcdef"
    with pytest.raises(InvalidQueryError):
        reference("#abcdef")


# -- helpers -----------------------------------------------------------------------------------


def test_names_takes_lists_and_comma_strings() -> None:
    assert names("a, b,,c ") == ["a", "b", "c"]
    assert names(["a,b", " c"]) == ["a", "b", "c"]
    assert names(None) is None and names("") is None and names([" , "]) is None


def test_validation_message_stays_short() -> None:
    problems = [{"loc": ("body", f"field{n}"), "msg": "bad", "type": "x"} for n in range(5)]
    assert validation_message(problems) == ("field0: bad; field1: bad; field2: bad; and 2 more")
    assert validation_message([]) == "invalid request"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_listener_is_a_tcp_socket() -> None:
    # asyncio sets TCP_NODELAY only on connections of an IPPROTO_TCP socket; without it every
    # answer waits ~40 ms for a delayed ACK (socket.create_server makes proto 0 sockets)
    with bind_listener("127.0.0.1", 0) as listener:
        assert listener.proto == socket.IPPROTO_TCP
        with socket.create_connection(listener.getsockname()[:2]):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.proto == socket.IPPROTO_TCP
