"""Lone surrogates (``\\ud800`` escapes in JSON) are replaced at the boundary and searched."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.hooks.events import parse_event
from memtrove.hooks.runner import main
from memtrove.text import scrub

RAW = '{"query": "refresh \\ud800 token"}'  # the escape, as a hostile client sends it


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/search", RAW),
        ("/retrieve", RAW),
        ("/memory/recall", '{"query": "tok\\udfffen"}'),
        ("/memory/remember", '{"label": "lab\\ud800el", "content": "body \\udc00 text"}'),
        ("/search/intent", RAW),  # fields with a length limit refused them (422)
        ("/search/plan", '{"query": "\\ud800"}'),
    ],
)
def test_rest_answers_instead_of_500(client: TestClient, route: str, body: str) -> None:
    answer = client.post(route, content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 200, answer.text
    answer.json()  # valid JSON, encodable as UTF-8


def test_search_still_finds_the_words_around_it(demo: Vault) -> None:
    results = demo.search(json.loads(RAW)["query"])
    assert any("refresh" in r.title.lower() for r in results)


def test_scrub() -> None:
    assert scrub("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert scrub("plain") == "plain" and scrub("😀 ok") == "😀 ok"


def test_a_hook_payload_with_a_lone_surrogate_gets_context(
    demo: Vault, tmp_path: Path, isolated_environment: Path
) -> None:
    raw = b'{"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "Why were users logged out by the refresh \\ud800 token race?"}'
    assert "\ud800" not in parse_event(raw).prompt
    env = {
        "HOME": str(isolated_environment),
        "XDG_CACHE_HOME": str(isolated_environment / ".cache"),
        "MEMTROVE_VAULT": str(demo.path),
        "MEMTROVE_CONFIG_DIR": str(Path(demo.config_file).parent),
    }
    out = io.BytesIO()
    assert (
        main(["context-surfacing"], env=env, stdin=io.BytesIO(raw), stdout=out, watchdog=False) == 0
    )
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "refresh-token-race" in context
