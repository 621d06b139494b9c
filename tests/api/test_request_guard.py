"""Only the owner drives the server: requests a web page could make are refused before they
reach a route (DNS rebinding through the Host header, cross-origin "simple" POSTs, foreign
Origins), a configured token is needed on every route, and no error answer names a path of
the server. In-process, over httpx (TestClient) and raw ASGI for what httpx will not send."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from memtrove import Vault
from memtrove.api import create_app
from memtrove.api.errors import PLACEHOLDER, scrub_paths
from memtrove.api.guard import OPEN_PATHS, check_host_name, host_of, is_json, is_same_origin
from tests.api.conftest import BASE_URL, JSON, TOKEN, local_client

OWN_ORIGIN = BASE_URL  # http://127.0.0.1:7438
BEARER = {"Authorization": f"Bearer {TOKEN}"}
ROUTE_VALUES = {
    "docid": "abcdef",
    "kind": "prediction",
    "item_id": "x",
    "session_id": "s1",
    "name": "session-start",
    "method": "search",
    "label": "x",
}


def concrete(path: str) -> str:
    """A route's path with its parameters filled in."""
    for name, value in ROUTE_VALUES.items():
        path = path.replace(f"{{{name}}}", value).replace(f"{{{name}:path}}", value)
    return path


def routes(app: Any, *methods: str) -> list[tuple[str, str]]:
    """(method, path) of every route in the app's OpenAPI schema with one of ``methods``,
    parameters filled in."""
    found = [
        (method.upper(), concrete(path))
        for path, operations in app.openapi()["paths"].items()
        for method in operations
        if method.upper() in methods
    ]
    assert len(found) > 10
    return found


def raw_request(
    app: FastAPI, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b""
) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    """One request straight into the ASGI app, headers exactly as given (repeated, empty or
    missing ones included)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 7438),
    }
    answer: dict[str, Any] = {"body": b""}
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = message.get("headers", [])
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    anyio.run(app, scope, receive, send)
    return answer["status"], answer["body"], answer["headers"]


@pytest.fixture
def secured(demo: Vault) -> Iterator[TestClient]:
    with local_client(create_app(demo, token=TOKEN)) as client:
        yield client


# -- Host: DNS rebinding -------------------------------------------------------------------------

REFUSED_HOSTS = [
    "evil.example",
    "evil.example:7438",
    "127.0.0.1.evil.example",
    "localhost.evil.example:7438",
    "127.0.0.1.nip.io",
    "localhost.",
    "localhost:",
    "localhost:port",
    "localhost:99999",
    "127.0.0.2",
    "0.0.0.0:7438",
    "::1",
    "::1:7438",
    "[::1",
    "[::2]:7438",
    "[::ffff:127.0.0.1]",
    "[localhost]",
    "127.1",
    "2130706433",
    "user@127.0.0.1",
    " ",
]
ACCEPTED_HOSTS = [  # the server listens on 7438 (tests.api.conftest.BASE_URL)
    "localhost:7438",
    "LOCALHOST:7438",
    "LocalHost:7438",
    "127.0.0.1:7438",
    "[::1]:7438",
    "[0:0:0:0:0:0:0:1]:7438",
]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_an_unknown_host_is_421_on_every_route(client: TestClient, host: str) -> None:
    some = [("GET", "/export"), ("GET", "/docs"), ("GET", "/nope"), ("POST", "/reindex")]
    for method, path in [*some, *routes(client.app, "GET", "POST")]:
        answer = client.request(method, path, headers={"Host": host, **JSON}, content=b"{}")
        assert answer.status_code == 421, (host, method, path)
        assert answer.json() == {
            "error": "unknown Host header (see MEMTROVE_ALLOWED_HOSTS and serve --allow-host)"
        }


@pytest.mark.parametrize("host", ACCEPTED_HOSTS)
def test_loopback_names_are_served(client: TestClient, host: str) -> None:
    answer = client.get("/collections", headers={"Host": host})
    assert answer.status_code == 200 and answer.json()["count"] == 1


def test_a_rebound_page_cannot_forget_or_export(client: TestClient, demo: Vault) -> None:
    docid = demo.search("refresh token")[0].docid
    rebound = {"Host": "evil.example:7438", "Origin": "http://evil.example:7438", **JSON}
    assert client.post(f"/documents/{docid}/forget", headers=rebound).status_code == 421
    assert client.get("/export", headers=rebound).status_code == 421
    assert demo.get(f"#{docid}").active


@pytest.mark.parametrize(
    "headers",
    [
        [],  # no Host at all (HTTP/1.0)
        [("Host", "")],
        [("Host", "127.0.0.1:7438"), ("Host", "evil.example")],
        [("Host", "127.0.0.1:7438"), ("Host", "127.0.0.1:7438")],
    ],
)
def test_a_missing_empty_or_repeated_host_is_421(demo: Vault, headers: list[Any]) -> None:
    status, body, _ = raw_request(create_app(demo), "GET", "/export", headers)
    assert status == 421 and b"unknown Host header" in body and b"documents" not in body


def test_allowed_hosts_are_added_to_loopback(demo: Vault) -> None:
    app = create_app(demo, allowed_hosts=["memory.example", " 192.0.2.10 ", "[2001:db8::1]", ""])
    with local_client(app) as client:
        for host in (
            "memory.example:7438",
            "MEMORY.example:7438",
            "192.0.2.10:7438",
            "[2001:db8::1]:7438",
            "localhost:7438",
        ):
            assert client.get("/collections", headers={"Host": host}).status_code == 200, host
        for host in ("evil.example", "sub.memory.example", "memory.example.evil.example"):
            assert client.get("/collections", headers={"Host": host}).status_code == 421, host


@pytest.mark.parametrize(
    "name", ["*", "*.example.com", "example.com:80", "http://example.com", "a b", "", "-x.com"]
)
def test_an_allowed_host_must_be_a_host_name(demo: Vault, name: str) -> None:
    with pytest.raises(ValueError, match="not a host name"):
        check_host_name(name)
    if name:
        with pytest.raises(ValueError):
            create_app(demo, allowed_hosts=[name])


def test_host_names_are_normalised() -> None:
    assert check_host_name(" Memory.Example ") == "memory.example"
    assert check_host_name("[0:0::1]") == "::1" and check_host_name("::1") == "::1"
    assert host_of("[::1]:7438") == ("::1", 7438) and host_of("LOCALHOST") == ("localhost", None)
    assert host_of("::1:7438") is None and host_of("[::1]x") is None


# -- Origin and Sec-Fetch-Site: other sites' pages --------------------------------------------------

FOREIGN_ORIGINS = [
    "http://evil.example",
    "https://evil.example",
    "null",
    "",
    "http://127.0.0.1:7439",  # another local server's page
    "http://localhost:7438",  # another origin, though the same server
    "http://127.0.0.1",
    "file://",
    "chrome-extension://abcdef",
    "http://127.0.0.1:7438.evil.example",
    "http://127.0.0.1:7438/",
    "127.0.0.1:7438",
]


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
def test_a_foreign_origin_is_403_for_reads_and_writes(
    client: TestClient, demo: Vault, origin: str
) -> None:
    docid = demo.search("refresh token")[0].docid
    for method, path in (
        ("GET", "/export"),
        ("GET", "/health"),
        ("POST", f"/documents/{docid}/pin"),
    ):
        answer = client.request(method, path, headers={"Origin": origin, **JSON})
        assert answer.status_code == 403, (origin, path)
        assert answer.json() == {"error": "cross-origin requests are refused"}
    assert not demo.get(f"#{docid}").pinned


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:7438", OWN_ORIGIN),
        ("127.0.0.1:7438", "HTTP://127.0.0.1:7438"),
        ("localhost:7438", "http://localhost:7438"),
        ("[::1]:7438", "http://[::1]:7438"),
        ("LOCALHOST:7438", "http://localhost:7438"),
        ("[0::1]:7438", "http://[::1]:7438"),
    ],
)
def test_the_own_origin_is_served(client: TestClient, demo: Vault, host: str, origin: str) -> None:
    docid = demo.search("refresh token")[0].docid
    headers = {"Host": host, "Origin": origin, **JSON}
    assert client.post(f"/documents/{docid}/pin", headers=headers).status_code == 200
    assert client.get("/export", headers=headers).status_code == 200
    assert demo.get(f"#{docid}").pinned


def test_two_origins_are_refused(demo: Vault) -> None:
    headers = [("Host", "127.0.0.1:7438"), ("Origin", OWN_ORIGIN), ("Origin", OWN_ORIGIN)]
    assert raw_request(create_app(demo), "GET", "/health", headers)[0] == 403


@pytest.mark.parametrize(
    ("site", "status"),
    [
        ("cross-site", 403),
        ("same-site", 403),
        ("CROSS-SITE", 403),
        ("same-origin", 200),
        ("none", 200),
    ],
)
def test_sec_fetch_site_must_be_this_server_or_the_user(
    client: TestClient, site: str, status: int
) -> None:
    # A link or a form GET from another page sends no Origin, but a browser says where it came from
    assert client.get("/export", headers={"Sec-Fetch-Site": site}).status_code == status


def test_origin_helpers() -> None:
    assert is_same_origin("http://127.0.0.1:7438", ("127.0.0.1", 7438))
    assert is_same_origin("https://memory.example", ("memory.example", None))
    assert not is_same_origin("http://memory.example", ("memory.example", 443))
    assert not is_same_origin("ws://127.0.0.1:7438", ("127.0.0.1", 7438))


# -- Content-Type: HTML forms and CORS "simple" requests --------------------------------------------

REFUSED_TYPES = [
    "text/plain",
    "text/plain; charset=utf-8",
    "multipart/form-data; boundary=x",
    "application/x-www-form-urlencoded",
    None,
    "",
    "application/jsonx",
    "application/json-seq",
    "application/x-json",
    "text/json",
    "application/ld+json",
    "application/json, text/plain",
    "text/plain; a=application/json",
]


@pytest.mark.parametrize("content_type", REFUSED_TYPES)
def test_every_write_needs_json_content_type(
    client: TestClient, demo: Vault, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    for method, path in routes(client.app, "POST", "PUT", "PATCH", "DELETE"):
        answer = client.request(method, path, headers=headers, content=b"{}")
        assert answer.status_code == 415, (content_type, method, path, answer.text)
        assert answer.json() == {
            "error": "send Content-Type: application/json (with a JSON body, or none)"
        }
    for method in ("PUT", "PATCH", "DELETE"):  # on any path, known or not
        assert client.request(method, "/search", headers=headers).status_code == 415


def test_a_simple_post_changes_nothing(client: TestClient, demo: Vault) -> None:
    """What the hostile run did: text/plain and form POSTs that forget, pin, snooze,
    reindex and clear a queue, each sent with a JSON-looking body."""
    docid = demo.search("refresh token")[0].docid
    before = client.get("/lifecycle/status").json()
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        for action in ("forget", "pin", "snooze"):
            answer = client.post(
                f"/documents/{docid}/{action}",
                content=b"{}",
                headers={"Content-Type": content_type},
            )
            assert answer.status_code == 415
        assert (
            client.post(
                "/reindex", content=b"{}", headers={"Content-Type": content_type}
            ).status_code
            == 415
        )
        assert (
            client.post(
                "/memory/extraction/s1/done", content=b"", headers={"Content-Type": content_type}
            ).status_code
            == 415
        )
    document = demo.get(f"#{docid}")
    assert document.active and not document.pinned and document.snoozed_until is None
    assert client.get("/lifecycle/status").json() == before


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"]
)
def test_json_content_types_are_served(client: TestClient, demo: Vault, content_type: str) -> None:
    docid = demo.search("refresh token")[0].docid
    headers = {"Content-Type": content_type}
    pinned = client.post(f"/documents/{docid}/pin", headers=headers)  # no body at all
    assert pinned.status_code == 200 and pinned.json()["pinned"] is True
    found = client.post("/search", content=b'{"query": "refresh token"}', headers=headers)
    assert found.status_code == 200 and found.json()["count"] > 0
    assert is_json(content_type) and not is_json("application/jsonx")


def test_reads_need_no_content_type(client: TestClient) -> None:
    assert client.get("/collections", headers={"Content-Type": "text/plain"}).status_code == 200


# -- the token, on every route, loopback included ---------------------------------------------------


def test_the_token_is_needed_on_every_route(secured: TestClient) -> None:
    for method, path in routes(secured.app, "GET", "POST"):
        answer = secured.request(method, path, headers=JSON, content=b"{}")
        assert answer.status_code == 401, (method, path)
        assert answer.headers["www-authenticate"] == "Bearer"
    for path in OPEN_PATHS - {"/docs/oauth2-redirect"}:  # the docs hold no vault data
        assert secured.get(path).status_code == 200, path


def test_refusals_come_in_order(secured: TestClient) -> None:
    """Host, then Origin, then token, then Content-Type: a rebound page learns nothing more."""
    evil = {"Host": "evil.example", "Origin": "http://evil.example", "Content-Type": "text/plain"}
    assert secured.post("/reindex", headers=evil).status_code == 421
    evil.pop("Host")
    assert secured.post("/reindex", headers=evil).status_code == 403
    evil.pop("Origin")
    assert secured.post("/reindex", headers=evil).status_code == 401
    assert secured.post("/reindex", headers={**evil, **BEARER}).status_code == 415
    assert secured.post("/reindex", headers={**JSON, **BEARER}).status_code == 200


# -- no CORS -------------------------------------------------------------------------------------


def test_no_answer_carries_cors_headers(secured: TestClient) -> None:
    for origin in (OWN_ORIGIN, "http://evil.example", "null"):
        for answer in (
            secured.get("/collections", headers={"Origin": origin, **BEARER}),
            secured.post("/search", json={"query": "x"}, headers={"Origin": origin}),
            secured.options(
                "/search",
                headers={
                    "Origin": origin,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "content-type, authorization",
                },
            ),
        ):
            assert not [name for name in answer.headers if name.startswith("access-control-")]


# -- error answers name no path of the server --------------------------------------------------------


def test_no_error_answer_names_a_path(
    client: TestClient, demo: Vault, tmp_path: Path, example_copy: Path
) -> None:
    vault_folder = str(demo.path.parent)
    hidden = [str(demo.path), vault_folder, str(tmp_path), tempfile.gettempdir(), str(example_copy)]
    other_vault = str(tmp_path / "elsewhere" / "other.sqlite")
    env = {"MEMTROVE_VAULT": other_vault, "MEMTROVE_CONFIG_DIR": str(demo.config_file.parent)}
    sweep: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/nope", {}),
        ("GET", f"/nope{tmp_path}/x", {}),
        ("GET", "/documents/abcdef", {}),
        ("GET", "/documents/zzzz", {}),
        ("GET", "/documents", {"params": {"pattern": f"{demo.path}"}}),
        ("GET", "/documents", {"params": {"pattern": f"demo/../{tmp_path}"}}),
        ("GET", "/documents", {"params": {"pattern": f"~/{tmp_path.name}/x"}}),
        ("GET", "/rules/nonsense", {}),
        ("GET", "/sessions", {"params": {"limit": "x"}}),
        ("GET", "/search", {}),
        ("POST", "/search", {"json": {"query": "x", "since": str(tmp_path)}}),
        ("POST", "/search", {"json": {"query": "x", str(tmp_path): 1}}),
        ("POST", "/search", {"content": b'{"query": ', "headers": JSON}),
        ("POST", "/search", {"content": b"x" * 2_000_000, "headers": JSON}),
        ("POST", "/search", {"content": b"{}", "headers": {"Content-Type": "text/plain"}}),
        ("POST", "/reindex", {"json": {"collection": str(tmp_path)}}),
        ("POST", "/memory/forget", {"json": {"label": str(tmp_path)}}),
        ("POST", f"/rules/{tmp_path.name}", {"json": {"statement": "x"}}),
        ("POST", "/warm/search", {"json": {"query": "x", "env": env}}),
        ("POST", "/warm/hook/session-start", {"json": {"payload": "x", "env": env}}),
        ("POST", "/warm/nope", {"json": {"query": "x", "env": env}}),
        ("GET", "/export", {"headers": {"Host": str(tmp_path)}}),
        ("GET", "/export", {"headers": {"Origin": f"file://{tmp_path}"}}),
    ]
    answers = [client.request(method, path, **options) for method, path, options in sweep]
    # and with config.yaml broken: its parser's message names the file
    demo.config_file.write_text("collections: [unclosed\n", encoding="utf-8")
    answers.append(client.post("/reindex", headers=JSON))
    answers.append(client.get("/collections"))
    for method, path, options in sweep[:6]:
        answers.append(client.request(method, path, **options))
    for answer in answers:
        assert answer.status_code >= 400, (answer.request.url, answer.text)
        assert set(answer.json()) == {"error"}, answer.text
        for path in hidden:
            assert path not in answer.text, (answer.request.url, answer.text)
    assert any(PLACEHOLDER in answer.text for answer in answers)  # the sweep did reach paths


def test_scrub_paths() -> None:
    roots = ["/home/me vault", "/srv/notes"]
    cases = {
        "cannot open vault /home/me vault/v.sqlite: locked": "cannot open vault <path>/v.sqlite: locked",
        "collection path /srv/notes does not exist": "collection path <path> does not exist",
        "/etc/memtrove/config.yaml is not valid YAML": "<path> is not valid YAML",
        "cannot read '/var/lib/x': denied": "cannot read '<path>': denied",
        "in ~/notes/a.md.": "in <path>.",
        "file C:\\Users\\me\\v.sqlite is busy": "file <path> is busy",
        "share \\\\server\\notes gone": "share <path> gone",
        "embedding service at http://127.0.0.1:9/v1/embeddings is cooling down": (
            "embedding service at http://127.0.0.1:9/v1/embeddings is cooling down"
        ),
        "no document demo/notes/a.md": "no document demo/notes/a.md",
        "since: 2024/01/02 is not a date": "since: 2024/01/02 is not a date",
        "not found: GET /nope": "not found: GET /nope",
        "/srv/notes/a/b does not exist": "<path>/a/b does not exist",  # was <path><path>
    }
    for message, expected in cases.items():
        assert scrub_paths(message, roots) == expected, message
    assert scrub_paths("GET /srv/notes/x/y", roots, any_absolute=False) == "GET <path>/x/y"
    assert scrub_paths("GET /a/b", ["/"], any_absolute=False) == "GET /a/b"  # "/" hides nothing


def test_websockets_are_refused(client: TestClient) -> None:
    origin = {"Origin": "http://evil.example"}
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect("/x", headers=origin),
    ):
        pass
    assert refused.value.code == 1008
