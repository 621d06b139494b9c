"""Post-import conversation synthesis against the loopback fake model server: stable paths
across reruns and answer orders, dedup-aware saves, alias and SQL link resolution (ambiguous
names unresolved, self-links skipped), monotone weights, the seven counters, unreadable
answers and timeouts counted, and nothing at all without an LLM."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove.errors import InvalidQueryError
from memtrove.mine.synthesize import SynthesisReport, fact_path, facts_prompt, parse_facts
from memtrove.models.registry import ModelSettings
from memtrove.vault import Vault
from tests.conftest import write
from tests.fakes.model_server import ModelServer

CHATS = {
    "auth.md": "# Auth design chat\n\nUser: shall we use OAuth for the login?\n\n"
    "Assistant: Yes, OAuth with PKCE; the session lives in Postgres.\n",
    "storage.md": "# Storage chat\n\nUser: which database?\n\nAssistant: Postgres, and the "
    "user prefers the dark theme in the admin.\n",
    "later.md": "# Later chat\n\nUser: remind me of the OAuth choice.\n\nAssistant: PKCE.\n",
}

AUTH = [
    {"title": "Use OAuth.", "contentType": "decision", "facts": ["Login uses OAuth with PKCE."],
     "aliases": ["oauth login", "shared name"],
     "links": [
         {"target": "Postgres for storage", "relationType": "causal", "weight": 0.6},
         {"target": "DB choice", "relationType": "supporting", "weight": 0.4},
         {"target": "shared name", "relationType": "semantic", "weight": 0.9},
         {"target": "Use OAuth.", "relationType": "causal", "weight": 1.0},
         {"target": "Nothing like this", "relationType": "causal", "weight": 1.0},
     ]},
    {"title": "Use OAuth!", "contentType": "milestone", "facts": ["The OAuth login shipped."],
     "links": [{"target": "oauth login", "relationType": "temporal", "weight": 7}]},
    {"title": "", "contentType": "decision"},
    {"title": "Not a kind", "contentType": "opinion"},
]  # fmt: skip
STORAGE = [
    {"title": "Postgres for storage", "contentType": "decision", "facts": ["Sessions in Postgres.", 5],
     "aliases": ["DB choice", "shared name"]},
    {"title": "Prefers the dark theme", "contentType": "preference", "facts": "Dark admin theme.",
     "links": [{"target": "Use OAuth.", "relationType": "contradicts", "weight": "high"},
               {"target": "Postgres for storage", "relationType": "friends", "weight": 1}]},
]  # fmt: skip
# Resolved: auth->Postgres (causal), auth->Postgres via alias (supporting), Use OAuth! -> Use
# OAuth. via alias (temporal, weight clamped to 1), dark theme -> Use OAuth. (contradicts,
# default weight). Unresolved: "shared name" (two documents), the self-link, the unknown name.
RESOLVED, UNRESOLVED = 4, 3


def answers(
    chats: dict[str, Any], *, reverse: bool = False, match_body: bool = False
) -> Callable[[str], str]:
    def reply(prompt: str) -> str:
        for title, facts in chats.items():
            if (title in prompt) if match_body else (f"Title: {title}\n" in prompt):
                return json.dumps(list(reversed(facts)) if reverse else facts)
        return "[]"

    return reply


@pytest.fixture
def mined(tmp_path: Path, model_server: ModelServer) -> Iterator[tuple[Vault, list[int]]]:
    folder = tmp_path / "chats"
    for name, text in CHATS.items():
        write(folder, name, text)
    settings = ModelSettings(llm_url=model_server.url)
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c", models=settings) as vault:
        vault.add_collection(folder, name="chats")
        vault.update()
        yield vault, ids(vault, "chats")


def ids(vault: Vault, collection: str) -> list[int]:
    rows = vault._connection.execute(
        "SELECT id FROM documents WHERE collection = ? ORDER BY path", (collection,)
    ).fetchall()
    return [int(row[0]) for row in rows]


def synthesized(vault: Vault) -> dict[str, tuple[int, str, str]]:
    rows = vault._connection.execute(
        "SELECT path, id, title, content_type FROM documents "
        "WHERE collection = '_memtrove' AND path LIKE 'synthesized/%' AND active = 1"
    ).fetchall()
    return {str(path): (int(doc), str(title), str(kind)) for path, doc, title, kind in rows}


def relations(vault: Vault) -> dict[tuple[str, str, str], float]:
    rows = vault._connection.execute(
        "SELECT s.title, t.title, r.relation_type, r.weight FROM memory_relations r "
        "JOIN documents s ON s.id = r.source_id JOIN documents t ON t.id = r.target_id"
    ).fetchall()
    return {(str(a), str(b), str(kind)): float(weight) for a, b, kind, weight in rows}


def conversations_of(vault: Vault) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in vault._connection.execute(
        "SELECT id, path, hash, active, modified_at FROM documents WHERE collection = 'chats'"
    )]  # fmt: skip


def test_facts_are_saved_linked_and_counted(
    mined: tuple[Vault, list[int]], model_server: ModelServer
) -> None:
    vault, (auth, later, storage) = mined
    before = conversations_of(vault)
    model_server.set_chat_reply(answers({"Auth design chat": AUTH, "Storage chat": STORAGE}))
    report = vault.synthesis.synthesize_conversations([auth, storage, later])
    assert report == SynthesisReport(
        docs_scanned=3,
        facts_extracted=4,
        facts_saved=4,
        links_resolved=RESOLVED,
        links_unresolved=UNRESOLVED,
        llm_failures=0,
        docs_with_no_facts=1,  # "Later chat" answered []
    )
    assert report.to_dict() == {
        "docsScanned": 3, "factsExtracted": 4, "factsSaved": 4, "linksResolved": RESOLVED,
        "linksUnresolved": UNRESOLVED, "llmFailures": 0, "docsWithNoFacts": 1, "llm": True,
    }  # fmt: skip
    saved = synthesized(vault)
    assert {title for _, title, _ in saved.values()} == {
        "Use OAuth.", "Use OAuth!", "Postgres for storage", "Prefers the dark theme"
    }  # fmt: skip
    assert {kind for _, _, kind in saved.values()} == set(CONTENT_KINDS)
    assert fact_path(auth, "Use OAuth.") in saved and fact_path(auth, "Use OAuth!") in saved
    assert fact_path(auth, "Use OAuth.") != fact_path(auth, "Use OAuth!")  # same slug
    for path in saved:
        assert re.fullmatch(r"synthesized/[\w-]+-src\d+-[0-9a-f]{8}\.md", path), path
    assert relations(vault) == {
        ("Use OAuth.", "Postgres for storage", "causal"): 0.6,
        ("Use OAuth.", "Postgres for storage", "supporting"): 0.4,
        ("Use OAuth!", "Use OAuth.", "temporal"): 1.0,
        ("Prefers the dark theme", "Use OAuth.", "contradicts"): 0.5,
    }
    assert conversations_of(vault) == before  # the import is never touched
    hits = vault.search("PKCE login", collections=["_memtrove"])
    assert any(hit.title == "Use OAuth." for hit in hits)


CONTENT_KINDS = ("decision", "milestone", "preference")


def test_reruns_in_another_answer_order_keep_paths_and_weights(
    mined: tuple[Vault, list[int]], model_server: ModelServer
) -> None:
    vault, (auth, later, storage) = mined
    chats = {"Auth design chat": AUTH, "Storage chat": STORAGE}
    model_server.set_chat_reply(answers(chats))
    vault.synthesis.synthesize_conversations([auth, storage, later])
    paths, edges = synthesized(vault), relations(vault)
    model_server.set_chat_reply(answers(chats, reverse=True))
    again = vault.synthesis.synthesize_conversations([later, storage, auth])
    assert synthesized(vault) == paths  # same paths, same ids
    assert relations(vault) == edges  # equal weights: no inflation
    assert (again.facts_extracted, again.facts_saved) == (4, 0)  # all deduplicated
    assert (again.links_resolved, again.links_unresolved) == (RESOLVED, UNRESOLVED)
    stronger = [dict(AUTH[0], links=[{"target": "Postgres for storage", "relationType":
                                      "causal", "weight": 0.9}]), *AUTH[1:]]  # fmt: skip
    model_server.set_chat_reply(answers({"Auth design chat": stronger, "Storage chat": STORAGE}))
    changed = vault.synthesis.synthesize_conversations([auth, storage])
    assert changed.facts_saved == 0  # the fact's text did not change, only a link
    assert relations(vault)[("Use OAuth.", "Postgres for storage", "causal")] == 0.9
    weaker = [
        dict(
            AUTH[0],
            facts=["Login uses OAuth with PKCE, reviewed."],
            links=[{"target": "Postgres for storage", "relationType": "causal", "weight": 0.1}],
        )
    ]
    model_server.set_chat_reply(answers({"Auth design chat": weaker, "Storage chat": STORAGE}))
    updated = vault.synthesis.synthesize_conversations([auth, storage])
    assert updated.facts_saved == 1  # "updated": same path, new text
    assert synthesized(vault)[fact_path(auth, "Use OAuth.")] == paths[fact_path(auth, "Use OAuth.")]
    assert relations(vault)[("Use OAuth.", "Postgres for storage", "causal")] == 0.9


def test_the_same_fact_from_two_conversations_is_one_document(
    mined: tuple[Vault, list[int]], model_server: ModelServer
) -> None:
    vault, (auth, later, _) = mined
    same = [{"title": "Use OAuth.", "contentType": "decision", "facts": ["Login uses OAuth."]}]
    model_server.set_chat_reply(answers({"Auth design chat": same, "Later chat": same}))
    report = vault.synthesis.synthesize_conversations([later, auth])
    assert (report.facts_extracted, report.facts_saved) == (2, 1)
    assert list(synthesized(vault)) == [fact_path(auth, "Use OAuth.")]  # the lower id first


def test_duplicate_titles_in_the_vault_are_ambiguous(
    mined: tuple[Vault, list[int]], model_server: ModelServer
) -> None:
    vault, (auth, later, storage) = mined
    twice = {
        "Auth design chat": [{"title": "Cache policy", "contentType": "decision", "facts": ["A"]}],
        "Storage chat": [{"title": "Cache policy", "contentType": "decision", "facts": ["B"]}],
    }
    model_server.set_chat_reply(answers(twice))
    assert vault.synthesis.synthesize_conversations([auth, storage]).facts_saved == 2
    linking = [
        {"title": "Follow up", "contentType": "milestone",
         "links": [{"target": "cache POLICY ", "relationType": "causal"},
                   {"target": "Prefers nothing", "relationType": "causal"}]},
    ]  # fmt: skip
    model_server.set_chat_reply(answers({"Later chat": linking}))
    report = vault.synthesis.synthesize_conversations([later])
    assert (report.links_resolved, report.links_unresolved) == (0, 2)  # SQL found two
    assert relations(vault) == {}
    single = [{"title": "Follow up", "contentType": "milestone",
               "links": [{"target": "Use the cache", "relationType": "entity"}]}]  # fmt: skip
    only = {"title": "Use the cache", "contentType": "decision", "facts": ["C"]}
    model_server.set_chat_reply(answers({"Auth design chat": [only]}))
    vault.synthesis.synthesize_conversations([auth])
    model_server.set_chat_reply(answers({"Later chat": single}))
    report = vault.synthesis.synthesize_conversations([later])
    assert report.links_resolved == 1  # one title in the vault: the SQL fallback binds it
    assert relations(vault) == {("Follow up", "Use the cache", "entity"): 0.5}


@pytest.mark.parametrize(
    ("reply", "failures", "empty"),
    [
        ("I cannot help with that.", 3, 0),
        ('{"facts": "none"}', 3, 0),
        ("[]", 0, 3),
        ('[{"title": "", "contentType": "decision"}, {"title": "x", "contentType": "vibe"}]', 0, 3),
    ],
)
def test_unreadable_answers_are_counted(
    mined: tuple[Vault, list[int]], model_server: ModelServer, reply: str, failures: int, empty: int
) -> None:
    vault, doc_ids = mined
    model_server.set_chat_reply(reply)
    report = vault.synthesis.synthesize_conversations(doc_ids)
    assert (report.docs_scanned, report.llm_failures, report.docs_with_no_facts) == (
        3,
        failures,
        empty,
    )
    assert report.facts_saved == 0 and synthesized(vault) == {}


def test_fences_thinking_and_truncation_are_read() -> None:
    good = {"title": "Use OAuth.", "contentType": "Decision", "facts": ["a", 3, "a"]}
    fenced = f"<think>hmm</think>```json\n{json.dumps([good])}\n```"
    assert parse_facts(fenced) == parse_facts(json.dumps([good]))
    [fact] = parse_facts(fenced) or []
    assert (fact.content_type, fact.facts) == ("decision", ("a",))
    cut = json.dumps([good, good])[:-30]
    assert len(parse_facts(cut) or []) == 1  # the complete item before the cut
    assert parse_facts(json.dumps({"facts": [good]})) is not None
    assert parse_facts("") is None
    assert parse_facts("[1, 2, 3]") == []
    prompt = facts_prompt("T", "x" * 10_000)
    assert prompt.count("x") <= 3000 + 10 and "never instructions" in prompt


@pytest.mark.parametrize("mode", ["slow", "http500", "malformed_json", "degenerate"])
def test_a_failing_model_is_counted_and_writes_nothing(
    mined: tuple[Vault, list[int]], model_server: ModelServer, mode: str
) -> None:
    from memtrove.models.openai_compat import HttpLLM

    vault, doc_ids = mined
    model_server.set_chat_reply(answers({"Auth design chat": AUTH}))
    model_server.slow_seconds = 1.0
    model_server.set_mode("chat", mode)
    vault.models._llm = HttpLLM(model_server.url, timeout=0.2)
    report = vault.synthesis.synthesize_conversations(doc_ids)
    assert report.llm_failures == 3 and report.facts_extracted == 0
    assert synthesized(vault) == {} and relations(vault) == {}


def test_without_an_llm_nothing_is_asked(tmp_path: Path, model_server: ModelServer) -> None:
    write(tmp_path / "chats", "a.md", CHATS["auth.md"])
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "c") as vault:
        vault.add_collection(tmp_path / "chats", name="chats")
        vault.update()
        report = vault.synthesis.synthesize_conversations(ids(vault, "chats"))
        assert report.llm is False and report.docs_scanned == 0
        assert "no LLM" in report.text() and report.to_dict()["llm"] is False
        assert synthesized(vault) == {}
        with pytest.raises(InvalidQueryError):
            vault.synthesis.synthesize_conversations([], max_docs=-1)
    assert model_server.requests_to("chat") == []


def test_max_docs_caps_the_scan(mined: tuple[Vault, list[int]], model_server: ModelServer) -> None:
    vault, doc_ids = mined
    model_server.set_chat_reply("[]")
    assert vault.synthesis.synthesize_conversations(doc_ids, max_docs=2).docs_scanned == 2
    assert len(model_server.requests_to("chat")) == 2
    assert vault.synthesis.synthesize_conversations([*doc_ids, 10**9], max_docs=0).docs_scanned == 0


@settings(max_examples=100, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["title", "contentType", "facts", "aliases", "links",
                                       "target", "relationType", "weight"]), inner, max_size=6),
    max_leaves=20,
))  # fmt: skip
def test_any_answer_parses_to_facts_or_none(value: object) -> None:
    try:
        answer = json.dumps(value)
    except ValueError:
        answer = str(value)
    facts = parse_facts(answer)
    assert facts is None or all(
        fact.title
        and fact.content_type in ("decision", "preference", "milestone", "problem")
        and all(0.0 <= link.weight <= 1.0 for link in fact.links)
        for fact in facts
    )


def run_memtrove(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memtrove", *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_mine_synthesize_as_a_real_process(tmp_path: Path, model_server: ModelServer) -> None:
    from tests.e2e.test_serve import base_env
    from tests.mine.test_chatgpt import conversation_json, text

    export = tmp_path / "export" / "conversations.json"
    export.parent.mkdir()
    chat = conversation_json(
        [("u1", "user", 1.7e9, text("Shall we use OAuth with PKCE for the login page?")),
         ("a1", "assistant", 1.7e9 + 5, text("Yes: OAuth with PKCE, sessions kept in Postgres."))],
        id="chat-1", title="Auth design chat",
    )  # fmt: skip
    export.write_text(json.dumps([chat]), encoding="utf-8")
    model_server.set_chat_reply(answers({"Shall we use OAuth": AUTH[:2]}, match_body=True))
    env = {**base_env(tmp_path), "MEMTROVE_LLM_URL": model_server.url}
    args = ("mine", str(export.parent), "-c", "chats", "--synthesize", "--json")
    first = run_memtrove(env, *args)
    assert first.returncode == 0, first.stderr
    synthesis = json.loads(first.stdout)["synthesis"]
    assert synthesis["docsScanned"] == 1 and synthesis["factsSaved"] == 2
    assert synthesis["linksResolved"] == 1  # Use OAuth! -> Use OAuth. through its alias
    again = run_memtrove(env, *args)  # nothing changed: the collection's documents again
    assert json.loads(again.stdout)["synthesis"]["factsSaved"] == 0, again.stderr
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        assert len(synthesized(vault)) == 2
    plain = {**base_env(tmp_path)}
    quiet = run_memtrove(plain, "mine", str(export.parent), "-c", "chats", "--synthesize")
    assert quiet.returncode == 0 and "synthesis skipped: no LLM" in quiet.stdout
    usage = run_memtrove(plain, "mine", str(export.parent), "--synthesize", "--dry-run")
    assert usage.returncode == 2 and "--synthesize" in usage.stderr
    assert "Traceback" not in usage.stderr + quiet.stderr


def test_secrets_in_answers_are_redacted(
    mined: tuple[Vault, list[int]], model_server: ModelServer
) -> None:
    vault, (auth, _, _) = mined
    leaky = [{"title": "Staging database", "contentType": "decision",
              "facts": ["Connect with DB_PASSWORD=hunter2-very-secret-9f8e7d"]}]  # fmt: skip
    model_server.set_chat_reply(answers({"Auth design chat": leaky}))
    assert vault.synthesis.synthesize_conversations([auth]).facts_saved == 1
    [(doc_id, _, _)] = synthesized(vault).values()
    stored = vault._connection.execute(
        "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash WHERE d.id = ?",
        (doc_id,),
    ).fetchone()[0]
    assert "hunter2" not in stored and "[REDACTED" in stored
    # the redacted text is what is compared
    again = vault.synthesis.synthesize_conversations([auth])
    assert (again.facts_extracted, again.facts_saved) == (1, 0)
