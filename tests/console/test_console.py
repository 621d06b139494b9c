"""The console's pages, assets and actions in-process (the browser tests in
tests/e2e/test_console_browser.py drive them for real)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove import Vault
from memtrove.api import create_app
from memtrove.console.app import CSP
from memtrove.console.safe import MAX_RENDERED_CHARS, render_markdown
from tests.api.conftest import JSON, JWT_NOTE, TOKEN, local_client
from tests.console.conftest import change_headers


def test_every_page_answers_with_the_security_headers(client: TestClient, docid: str) -> None:
    for url in ("/", "/?q=refresh+token", "/?q=tokens&method=query", "/ui/sessions",
                f"/ui/doc?ref=%23{docid}", f"/ui/graph?ref=%23{docid}", "/ui/health",
                "/ui/sessions/unknown-session"):  # fmt: skip
        answer = client.get(url)
        assert answer.status_code == 200, url
        assert answer.headers["content-security-policy"] == CSP
        assert answer.headers["x-frame-options"] == "DENY"
        assert "<script>" not in answer.text  # scripts only by src, from this server


def test_errors_are_pages_with_one_line(client: TestClient) -> None:
    missing = client.get("/ui/doc?ref=nope/none.md")
    assert missing.status_code == 404 and "no document" in missing.text
    bad = client.get("/?q=x&method=grep")
    assert bad.status_code == 200 and "unknown method &#39;grep&#39;" in bad.text
    graph = client.get("/ui/graph.json?ref=%23ffffff")
    assert graph.status_code == 404 and set(graph.json()) == {"error"}


def test_assets_are_served_by_name_only(client: TestClient) -> None:
    assert client.get("/ui/static/cytoscape.min.js").status_code == 200
    for name in ("../app.py", "..%2Fapp.py", "templates", "app.py"):
        assert client.get(f"/ui/static/{name}").status_code == 404


def test_actions_need_the_csrf_token(client: TestClient, demo: Vault) -> None:
    refused = client.post("/ui/actions/pin", json={"ref": JWT_NOTE}, headers=JSON)
    assert refused.status_code == 403 and "X-CSRF-Token" in refused.json()["error"]
    wrong = {**JSON, "X-CSRF-Token": "x" * 43}
    assert client.post("/ui/actions/pin", json={"ref": JWT_NOTE}, headers=wrong).status_code == 403
    assert not demo.get(JWT_NOTE).pinned
    token = change_headers(client)
    done = client.post("/ui/actions/pin", json={"ref": JWT_NOTE}, headers=token)
    assert done.status_code == 200 and done.json()["document"]["pinned"] is True
    assert demo.get(JWT_NOTE).pinned
    snoozed = client.post("/ui/actions/snooze", json={"ref": JWT_NOTE, "days": 7}, headers=token)
    assert snoozed.status_code == 200 and demo.get(JWT_NOTE).snoozed_until
    for body, status in (
        ({"ref": JWT_NOTE, "days": 0}, 400),
        ({"ref": JWT_NOTE, "days": True}, 400),
        ({"ref": ""}, 400),
        ({}, 400),
        ({"ref": "demo/none.md"}, 404),
    ):
        answer = client.post("/ui/actions/snooze", json=body, headers=token)
        assert answer.status_code == status and set(answer.json()) == {"error"}, body
    assert (
        client.post("/ui/actions/purge", json={"ref": JWT_NOTE}, headers=token).status_code == 404
    )
    raw = client.post("/ui/actions/pin", content=b"[1, 2", headers=token)
    assert raw.status_code == 400
    forgot = client.post("/ui/actions/forget", json={"ref": JWT_NOTE}, headers=token)
    assert forgot.status_code == 200 and not demo.get(JWT_NOTE, include_inactive=True).active
    page = client.get(f"/ui/doc?ref={JWT_NOTE}")
    assert page.status_code == 200 and "forgotten or archived" in page.text


def test_the_console_is_behind_the_token(demo: Vault) -> None:
    with local_client(create_app(demo, token=TOKEN), follow_redirects=False) as guarded:
        sent = guarded.get("/")
        assert sent.status_code == 303 and sent.headers["location"] == "/ui/login"
        assert guarded.get("/ui/doc?ref=x").status_code == 303
        assert guarded.post("/ui/actions/pin", json={}, headers=JSON).status_code == 401
        assert guarded.get("/ui/login").status_code == 200
        assert guarded.get("/ui/static/console.css").status_code == 200
        assert guarded.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        wrong = guarded.post("/ui/login", json={"token": "nope"}, headers=JSON)
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        forged = guarded.get("/", headers={"Cookie": "memtrove_token=nope"})
        assert forged.status_code == 303
        right = guarded.post("/ui/login", json={"token": TOKEN}, headers=JSON)
        cookie = right.headers["set-cookie"]
        assert right.status_code == 200 and "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert TOKEN not in cookie  # its digest, not the token
        assert guarded.get("/").status_code == 200  # the client keeps the cookie
        assert guarded.get("/health").status_code == 200


def test_hostile_markdown_is_inert() -> None:
    html, cut = render_markdown(
        "# T\n\n<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n"
        "[a](javascript:alert(3)) [b](JaVaScRiPt:alert(4)) [c](data:text/html,x) "
        "[d](vbscript:x) [ok](https://example.org/x) ![i](https://example.org/p.png)\n"
        '<a href="javascript:alert(5)">x</a> <iframe src="x"></iframe>'
    )
    assert not cut
    assert "<script" not in html and "<img" not in html and "<iframe" not in html
    assert not re.search(r'<a\s[^>]*href="\s*(javascript|data|vbscript):', html, re.I)
    assert 'href="https://example.org/x"' in html and "noopener" in html
    assert html.startswith("<h2>T</h2>")  # the page's title is its only h1
    _, cut = render_markdown("x " * MAX_RENDERED_CHARS)
    assert cut


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>\"'=/ &;:#[]()!`*_-\nabcjsvrpt")), max_size=300))
def test_no_generated_text_yields_a_tag_with_an_event_or_a_script(text: str) -> None:
    html, _ = render_markdown(text)
    assert not re.search(r"<(script|img|iframe|svg|style|object|embed)\b", html, re.I)
    assert not re.search(r"<[^>]*\son\w+\s*=", html, re.I)
    assert not re.search(r'<a\s[^>]*href="\s*(javascript|data|vbscript):', html, re.I)


def test_scores_are_explained_on_demand(client: TestClient, demo: Vault) -> None:
    found = demo.search("refresh token", 3)
    ids = ",".join(str(r.doc_id) for r in found)
    answer = client.get(f"/ui/explain.json?q=refresh+token&ids={ids}")
    assert answer.status_code == 200
    explained = answer.json()
    assert list(explained) == [str(r.doc_id) for r in found]
    first = explained[str(found[0].doc_id)]
    assert [leg["name"] for leg in first["legs"]] == ["BM25", "vector"]
    assert first["legs"][0]["rank"] == 1 and first["legs"][0]["score"] > 0
    assert first["legs"][1]["score"] is None and first["legs"][1]["note"]  # not embedded
    assert dict(first["signals"])["type"] == found[0].content_type
    assert client.get("/ui/explain.json?q=x&ids=1,two").status_code == 400
    assert client.get("/ui/explain.json?q=x&ids=").json() == {}


def test_search_filters_as_the_cli_has_them(client: TestClient, demo: Vault) -> None:
    every = client.get("/?q=refresh+token").text
    assert every.count('class="result"') > 1
    typed = client.get("/?q=refresh+token&type=decision").text
    assert 0 < typed.count('class="result"') < every.count('class="result"')
    assert 'class="type">decision<' in typed and 'class="type">problem<' not in typed
    strict = client.get("/?q=refresh+token&min_score=0.99").text
    assert 'class="result"' not in strict and "No results." in strict
    later = client.get("/?q=refresh+token&since=2999-01-01").text
    assert "No results." in later
    for bad in ("min_score=2", "min_score=x", "since=yesterday", "method=intent&type=decision"):
        page = client.get(f"/?q=refresh+token&{bad}")
        assert page.status_code == 200 and 'class="error"' in page.text, bad
