"""The console's Memory page in-process: entries by store and branch, duplicates, hygiene,
lifecycle candidates, consolidated observations and import runs, each section on its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.console.app import CSP
from memtrove.errors import InvalidQueryError, PortableFormatError
from memtrove.lifecycle.maintenance import LaneSettings
from tests.console.conftest import change_headers, section_from
from tests.lifecycle.consolidation_helpers import observe

PATTERN = "we keep the release notes in the wiki"


def _section(page: str, heading: str) -> str:
    """The page's text from ``heading`` to the next heading of any level."""
    start = page.index(heading)
    following = re.search(r"<h[1-3]", page[start + len(heading) :])
    return page[start : start + len(heading) + following.start()] if following else page[start:]


def _store(page: str, name: str) -> str:
    """The page's part about store ``name``."""
    return section_from(page, f"Store <code>{name}</code>")


def test_the_page_shows_entries_upkeep_observations_and_imports(
    client: TestClient, demo: Vault, tmp_path: Path
) -> None:
    demo.memory.remember("deploy rule", "Deploy on Wednesdays after the standup.", store="global")
    demo.memory.remember("deploy rule", "Deploy on Thursdays.", store="global", overwrite=True)
    demo.memory.remember("deploy rules", "Deploy on Thursdays, after the standup.", store="global")
    demo.memory.remember("feature flags", "Flags live in flags.yaml.", branch="feature-x")
    observe(demo, "a1", [PATTERN])
    observe(demo, "a2", [PATTERN])
    demo.consolidation.consolidate(
        lanes=LaneSettings(merge_normal=0.5, merge_strict=0.5), use_llm=False
    )
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not an export\n", encoding="utf-8")
    with pytest.raises(PortableFormatError):
        demo.portable.import_from(broken)

    page = client.get("/ui/memory")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert 'aria-current="page">Memory</a>' in page.text
    project = _store(page.text, demo.memory.resolve_store())
    assert "Branch <code>feature-x</code>" in project and "feature flags" in project
    shared = _store(page.text, "global")
    entries = _section(shared, "<h3>Entries</h3>")
    assert "Every branch" in entries and "Deploy on Thursdays." in entries
    assert re.search(r"deploy rule</a></th>\s*<td>[^<]*</td><td>2</td>", entries)  # 2 versions
    duplicates = _section(shared, "<h3>Duplicate clusters</h3>")
    assert "deploy rule" in duplicates and "deploy rules" in duplicates
    hygiene = _section(shared, "<h3>Hygiene</h3>")
    assert "near-duplicate pair(s) in store global await review" in hygiene
    assert PATTERN in _section(page.text, "<h2>Consolidated observations</h2>")
    imports = _section(page.text, "<h2>Import runs</h2>")
    assert "failed" in imports and "broken.jsonl" in imports


def test_an_empty_store_answers_with_none_yet(client: TestClient) -> None:
    page = client.get("/ui/memory?store=nothing-here")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert page.headers["x-frame-options"] == "DENY"
    assert "Store <code>nothing-here</code>" in page.text
    assert "Store <code>global</code>" not in page.text  # only the store asked for
    for heading in ("<h3>Entries</h3>", "<h3>Duplicate clusters</h3>",
                    "<h2>Consolidated observations</h2>", "<h2>Import runs</h2>"):  # fmt: skip
        assert "None yet." in _section(page.text, heading), heading
    assert "Healthy: no signals." in page.text
    assert client.get("/ui/memory").status_code == 200
    assert client.get("/ui/memory?store=" + "x" * 201).status_code == 422


def test_stored_text_is_escaped(client: TestClient, demo: Vault) -> None:
    hostile = "<script>alert(1)</script>"
    demo.memory.remember(hostile, hostile, store="global", branch='"><img src=x onerror=alert(1)>')
    page = client.get("/ui/memory")
    assert page.status_code == 200
    assert "<script>alert" not in page.text and "<img" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in page.text


def test_a_failing_section_shows_its_error_and_the_rest_renders(
    client: TestClient, demo: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo.memory.remember("deploy rule", "Deploy on Wednesdays.", store="global")

    def refuse(*arguments: object, **options: object) -> None:
        raise InvalidQueryError("duplicates are out of order today\nsecond line")

    monkeypatch.setattr(demo.memory, "find_duplicates", refuse)
    monkeypatch.setattr(demo.mining, "import_runs", refuse)
    page = client.get("/ui/memory")
    assert page.status_code == 200
    duplicates = _section(page.text, "<h3>Duplicate clusters</h3>")
    assert 'class="error">duplicates are out of order today second line</p>' in duplicates
    assert "duplicates are out of order" in _section(page.text, "<h2>Import runs</h2>")
    assert "deploy rule" in page.text  # the entries still show


def test_the_policy_dry_run_and_the_doctor_run_when_asked(client: TestClient) -> None:
    page = client.get("/ui/memory").text
    assert "Run a dry run of the policy" in page and "A dry run of the policy (" not in page
    dry = client.get("/ui/memory?sweep=1").text
    assert "A dry run of the policy (" in dry and "candidate" in dry
    health = client.get("/ui/health").text
    assert "Run every doctor check" in health and 'class="doctor"' not in health
    checked = client.get("/ui/health?doctor=1").text
    assert 'class="doctor"' in checked and "check-ok" in checked


def test_a_duplicate_pair_gets_its_verdict_from_the_page(client: TestClient, demo: Vault) -> None:
    demo.memory.remember("deploy rule", "Deploy on Thursdays, after the standup.", store="global")
    demo.memory.remember("deploy rules", "Deploy on Thursdays, after the standup!", store="global")
    page = client.get("/ui/memory?store=global").text
    assert 'data-action="verdict"' in page and 'data-other="deploy rules"' in page
    headers = change_headers(client)
    body = {"ref": "deploy rule", "other": "deploy rules", "store": "global"}
    refused = client.post("/ui/actions/verdict", json={**body, "verdict": "same"}, headers=headers)
    assert refused.status_code == 400 and "status must be one of" in refused.json()["error"]
    missing = client.post("/ui/actions/verdict", json={"ref": "deploy rule"}, headers=headers)
    assert missing.status_code == 400
    done = client.post(
        "/ui/actions/verdict", json={**body, "verdict": "supplement"}, headers=headers
    )
    assert done.status_code == 200 and done.json()["ok"] is True
    assert not demo.memory.find_duplicates("global").clusters  # judged: no longer listed
    assert 'data-action="verdict"' not in client.get("/ui/memory?store=global").text
