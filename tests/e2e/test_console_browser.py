"""The web console in a real browser: Debian's Chromium, headless, driven by Playwright,
against a real ``memtrove serve`` process on the example vault after a real hook session.

Screenshots of each page go to ``$SCREENSHOTS_DIR`` (the README's come from a run with
it set to ``docs/console``), else to the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memtrove import Vault
from tests.conftest import EXAMPLES
from tests.e2e.test_hooks_processes import hook
from tests.e2e.test_serve import Server, base_env, start

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).is_file(), reason="Debian's chromium is not installed"
)

QUESTION = "what went wrong with logins when tokens were refreshed?"
POSTMORTEM = "problems/2026-09-10-refresh-token-race-logouts.md"
SESSION = "5e55c0de-0000-4000-8000-00000000c0de"
HOSTILE = """# Hostile note

<script>window.__pwned = 1; alert("script")</script>
<img src="x" onerror="window.__pwned = 2">
<svg onload="window.__pwned = 3"></svg>
<scr<script>ipt>alert("split")</script>
<a href="javascript:window.__pwned=4">click me</a>
[a link](javascript:alert(5)) and [data](data:text/html,<script>alert(6)</script>)
![remote](https://example.invalid/pixel.png)
<iframe src="https://example.invalid"></iframe>
<div style="background:url(https://example.invalid/x)">styled</div>

## Section

Plain text that should still read.
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("console")
    notes = folder / "notes"
    shutil.copytree(EXAMPLES, notes)
    (notes / "hostile.md").write_text(HOSTILE, encoding="utf-8")
    (notes / "huge.md").write_text("# Huge\n\n" + "word " * 120_000, encoding="utf-8")
    env = base_env(folder)
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", "bootstrap", str(notes), "--name", "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    hook_env = {**env, "XDG_CACHE_HOME": str(folder / ".cache")}
    ask = {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": QUESTION}
    hook("context-surfacing", json.dumps(ask).encode(), hook_env)
    return folder


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[Server]:
    running = start(base_env(home), "--port", "0", log=home / "serve.log")
    yield running
    running.stop()
    assert "Traceback" not in running.log.read_text()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    yield opened
    context.close()


def shoot(page: Any, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=False)
    assert (folder / f"{name}.png").stat().st_size > 1000


def open_vault(home: Path) -> Vault:
    return Vault.open(home / "vault.sqlite", config_dir=home / "config")


def test_search_finds_the_postmortem_and_explains_its_score(
    page: Any, server: Server, tmp_path: Path
) -> None:
    page.goto(server.url + "/")
    page.fill("#q", QUESTION)
    page.select_option("#method", "query")
    page.press("#q", "Enter")
    page.wait_for_selector("ol.results")
    first = page.locator("li.result").first
    assert POSTMORTEM in first.locator(".path").inner_text()
    first.locator("details.explain summary").click()
    first.locator("details.explain[data-filled=true]").wait_for()
    legs = first.locator("tr.leg th").all_inner_texts()
    assert legs[:2] == ["BM25", "vector"] and "rerank" in legs and "MMR" in legs
    scores = first.locator("tr.leg").first.locator("td").all_inner_texts()
    assert float(scores[0]) > 0 and int(scores[1]) >= 1
    assert "recency" in first.locator("table.signals").inner_text()
    shoot(page, "search", tmp_path)


def test_a_document_is_pinned_and_forgotten_from_its_page(
    page: Any, server: Server, home: Path, tmp_path: Path
) -> None:
    with open_vault(home) as vault:
        target = vault.get("demo/decisions/0003-resumable-chunked-uploads.md")
    assert not target.pinned and target.active
    page.goto(f"{server.url}/ui/doc?ref=%23{target.docid}")
    assert page.locator("h1").inner_text() == target.title
    shoot(page, "document", tmp_path)
    page.click("button[data-action=pin]")
    page.wait_for_selector("button[data-action=unpin]")
    assert page.locator("td.pinned").inner_text() == "yes"
    with open_vault(home) as vault:
        assert vault.get(f"#{target.docid}").pinned
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button[data-action=forget]")
    page.wait_for_selector("td.active >> text=no")
    with open_vault(home) as vault:
        assert not vault.get(f"#{target.docid}", include_inactive=True).active


def test_the_audit_lists_what_the_hook_injected(
    page: Any, server: Server, home: Path, tmp_path: Path
) -> None:
    with open_vault(home) as vault:
        rows = vault._connection.execute(
            "SELECT injected_paths, estimated_tokens FROM context_usage WHERE session_id = ?",
            (SESSION,),
        ).fetchall()
        (prompt,) = vault.sessions.session_prompts(SESSION)
    assert len(rows) == 1
    injected = json.loads(rows[0][0])
    # the trail: what was injected, in order, then what was weighed and left out, and why
    trail = [c.path for c in prompt.considered if c.status == "injected"]
    assert trail == injected and all(c.chars in (80, 150, 300) for c in prompt.considered[:1])
    left = [c for c in prompt.considered if c.status == "left out"]
    reasons = {"not admitted", "threshold", "depth", "lead cut", "budget or guard"}
    assert left and {c.reason for c in left} <= reasons
    assert injected and f"demo/{POSTMORTEM}" in injected
    page.goto(server.url + "/ui/sessions")
    page.click(f"a[href='/ui/sessions/{SESSION}']")
    page.wait_for_selector("section.prompt")
    assert page.locator("blockquote.query").inner_text() == QUESTION
    assert page.locator("a.injected-path").all_inner_texts() == injected
    assert page.locator(".totals .tokens").inner_text() == str(rows[0][1])
    first = page.locator("tr.entry").first
    first.locator("details.explain summary").click()
    first.locator("details.explain[data-filled=true]").wait_for()
    assert first.locator("tr.leg th").all_inner_texts() == ["BM25", "vector"]
    assert "recency" in first.locator("table.signals").inner_text()
    page.click("details.left-out summary")
    assert page.locator("tr.left").count() == len(left)
    assert "lead ratio" in page.locator("details.left-out").inner_text() or all(
        c.reason != "lead cut" for c in left
    )
    shoot(page, "audit", tmp_path)


def test_the_graph_draws_a_neighbourhood_and_expands_a_node(
    page: Any, server: Server, home: Path, tmp_path: Path
) -> None:
    with open_vault(home) as vault:
        start_doc = vault.get(f"demo/{POSTMORTEM}")
        neighbours = {e.target_id for e in vault.graph.relations_of(f"#{start_doc.docid}")} | {
            e.source_id for e in vault.graph.relations_of(f"#{start_doc.docid}")
        }
    assert len(neighbours) >= 2
    page.goto(f"{server.url}/ui/graph?ref=%23{start_doc.docid}")
    page.wait_for_selector("#graph[data-ready=true]")
    drawn = page.evaluate("window.memtroveGraph.nodes().length")
    assert drawn == len(neighbours | {start_doc.doc_id})
    before = page.evaluate("window.memtroveGraph.edges().length")
    page.locator("#graph-nodes button").nth(1).click()  # expand the first neighbour
    page.wait_for_selector("#graph[data-loads='2']")
    assert page.evaluate("window.memtroveGraph.nodes('.expanded').length") >= 2
    after = page.evaluate("window.memtroveGraph.edges().length")
    assert after >= before
    shoot(page, "graph", tmp_path)


def test_hostile_stored_text_renders_inert(
    page: Any, server: Server, home: Path, tmp_path: Path
) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    answer = page.goto(f"{server.url}/ui/doc?ref=demo/hostile.md")
    assert answer is not None and answer.status == 200
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    page.wait_for_load_state("load")
    assert dialogs == []
    assert page.evaluate("window.__pwned === undefined")
    body = page.locator(".body")
    assert body.locator("script, img, svg, iframe, [onerror], [onload], [style]").count() == 0
    hrefs = body.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert all(not (href or "").lower().startswith(("javascript:", "data:")) for href in hrefs)
    assert "Plain text that should still read." in body.inner_text()
    assert all(url.startswith(server.url) for url in requests), requests
    huge = page.goto(f"{server.url}/ui/doc?ref=demo/huge.md")
    assert huge is not None and huge.status == 200
    assert "first 200,000 characters" in page.locator(".note").inner_text()
    shoot(page, "hostile", tmp_path)


def test_changes_need_the_csrf_token_and_this_origin(page: Any, server: Server) -> None:
    page.goto(server.url + "/")
    status = page.evaluate(
        """async () => (await fetch('/ui/actions/pin', {method: 'POST',
            headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({ref: 'demo/index.md'})})).status"""
    )
    assert status == 403
    with httpx.Client(base_url=server.url) as http:
        token = page.locator('meta[name="csrf-token"]').get_attribute("content")
        headers = {"X-CSRF-Token": token, "Origin": "https://evil.example"}
        assert http.post("/ui/actions/pin", json={"ref": "x"}, headers=headers).status_code == 403
        assert http.get("/", headers={"Host": "evil.example"}).status_code == 421
        form = http.post(
            "/ui/actions/pin",
            content=b"ref=x",
            headers={"X-CSRF-Token": token, "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 415


def test_keyboard_and_dark_scheme(browser: Any, server: Server, tmp_path: Path) -> None:
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    page.goto(server.url + "/ui/sessions")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(22, 24, 28)"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Search"
    page.keyboard.press("Enter")  # the search page, its box focused
    page.wait_for_selector("#q:focus")
    page.keyboard.type("refresh token")
    page.keyboard.press("Enter")
    page.wait_for_selector("li.result")
    shoot(page, "search-dark", tmp_path)
    context.close()


def test_ui_serves_and_opens_the_console(tmp_path: Path, home: Path) -> None:
    opened = tmp_path / "opened.txt"
    opener = tmp_path / "browser.sh"
    opener.write_text(f'#!/bin/sh\necho "$1" > {opened}\n', encoding="utf-8")
    opener.chmod(0o755)
    env = {**base_env(home), "BROWSER": str(opener)}
    running = start(env, "--port", "0", log=tmp_path / "ui.log", command="ui")
    try:
        for _ in range(600):  # the browser is started from a thread once the URL is out
            if opened.is_file() and opened.read_text().strip():
                break
            time.sleep(0.1)
        url = opened.read_text().strip()
        assert url == running.url + "/"
        assert f"console at {url}" in running.log.read_text()
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200 and "<title>Search · memtrove</title>" in page.text
    finally:
        running.stop()


def test_the_graph_starts_from_an_entity_and_expands_another(
    page: Any, server: Server, home: Path, tmp_path: Path
) -> None:
    with open_vault(home) as vault:
        vault.knowledge.add_triple("Lanternfish", "uses", "Redis", valid_from="2025-01-01")
        vault.knowledge.add_triple("Redis", "depends_on", "Sentinel")
    page.goto(f"{server.url}/ui/graph?entity=Lanternfish")
    page.wait_for_selector("#graph[data-ready=true]")
    assert page.evaluate("window.memtroveGraph.nodes().length") == 2
    assert "Redis" in page.locator("table.facts").inner_text()
    page.locator("#graph-nodes li", has_text="Redis").locator("button").click()
    page.wait_for_selector("#graph[data-loads='2']")
    labels = page.evaluate("window.memtroveGraph.nodes().map(n => n.data('label'))")
    assert sorted(labels) == ["Lanternfish", "Redis", "Sentinel"]
    shoot(page, "graph-entity", tmp_path)


def test_every_page_loads_without_a_console_error(
    page: Any, server: Server, home: Path, tmp_path: Path
) -> None:
    """A Content-Security-Policy violation or a script error shows here as a console error."""
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    with open_vault(home) as vault:
        ref = vault.get(f"demo/{POSTMORTEM}").docid
    pages = {
        "search": f"/?q={QUESTION}&method=query",
        "document": f"/ui/doc?ref=%23{ref}",
        "sessions": "/ui/sessions",
        "audit": f"/ui/sessions/{SESSION}",
        "graph": f"/ui/graph?ref=%23{ref}",
        "memory": "/ui/memory?sweep=1",
        "health": "/ui/health?doctor=1",
        "login": "/ui/login",
    }
    for name, url in pages.items():
        answer = page.goto(server.url + url)
        assert answer is not None and answer.status == 200, name
        assert page.locator("h1").count() == 1, name
        if name == "search":
            page.locator("details.explain summary").first.click()
            page.locator("details.explain[data-filled=true]").first.wait_for()
        if name == "graph":
            page.wait_for_selector("#graph[data-ready=true]")
        if name in ("memory", "health"):
            shoot(page, name, tmp_path)
    assert errors == [], errors


def test_a_duplicate_pair_is_judged_from_the_memory_page(
    page: Any, server: Server, home: Path
) -> None:
    with open_vault(home) as vault:
        vault.memory.remember("release rule", "Release on Tuesdays after the demo.", store="global")
        vault.memory.remember(
            "release rules", "Release on Tuesdays after the demo!", store="global"
        )
        assert vault.memory.find_duplicates("global").clusters
    page.goto(f"{server.url}/ui/memory?store=global")
    row = page.locator("tr.pair", has_text="release rules")
    row.locator("select").select_option("duplicate")
    row.locator("button[data-action=verdict]").click()
    page.wait_for_selector("#toast.shown")
    assert "done" in page.locator("#toast").inner_text()
    with open_vault(home) as vault:
        assert not vault.memory.find_duplicates("global").clusters
