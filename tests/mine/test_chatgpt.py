"""The ChatGPT reader on every real export in bench/mine/chatgpt and on LoCoMo written out as a
ChatGPT export. Expected counts were taken by reading the files directly (json + the mapping
tree walked from current_node by hand), not from the reader."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memtrove.mine.exchanges import Conversation, Skips, exchanges
from memtrove.mine.formats import chatgpt, reader

BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"
FOLDER = BENCH / "mine" / "chatgpt"
GOLDEN = Path(__file__).parent / "golden"
FULL = FOLDER / "pkuppens-my_chat_gpt__conversations.json"
NATIVE = FOLDER / "Sinity-polylogue__native-conversation-v1.json"
SIMPLE = FOLDER / "aucontraire-echomine__golden_master-001_simple_text-raw.json"
IMAGES = FOLDER / "aucontraire-echomine__golden_master-002_with_images-raw.json"
CODE = FOLDER / "aucontraire-echomine__golden_master-003_with_code-raw.json"
LOCOMO = BENCH / "locomo" / "locomo-dev.json"

needs_bench = pytest.mark.skipif(not FOLDER.is_dir(), reason="bench/mine is not here")


def read_all(path: Path) -> tuple[list[Conversation], Skips]:
    skips = Skips()
    return list(chatgpt.read(path, skips)), skips


def head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(4096)


def test_the_module_is_the_chatgpt_reader() -> None:
    assert reader("chatgpt") is chatgpt
    assert chatgpt.LABEL == "chatgpt"


@needs_bench
def test_every_export_is_sniffed_and_other_json_is_not() -> None:
    for path in (FULL, NATIVE, SIMPLE, IMAGES, CODE):
        assert chatgpt.sniff(path, head(path)), path.name
    for other in (BENCH / "mine" / "claude-ai").iterdir():
        assert not chatgpt.sniff(other, head(other)), other.name
    assert not chatgpt.sniff(FULL.with_suffix(".txt"), head(FULL))


@needs_bench
def test_the_full_2023_export() -> None:
    conversations, skips = read_all(FULL)
    assert len(conversations) == 192
    assert sum(len(list(exchanges(c))) for c in conversations) == 645  # user nodes on the paths
    # 653 assistant texts + 645 user + 28 tool calls + 19 pages + 11 quotes + 2 errors + 1 result
    assert sum(len(c.messages) for c in conversations) == 1359
    assert skips == {"system message": 192}
    first = conversations[0]
    assert first.conversation_id == "58f522f1-b174-492d-a52c-5240dacc06d0"
    assert first.title == "Django Multi-DB Setup"
    assert first.messages[-1].key == "d8c33269-608c-4ccf-af58-8cef0e51ee6a"  # current_node
    opening = next(exchanges(first))
    assert opening.speakers == ("User", "ChatGPT")
    assert opening.messages[0].text.startswith("I want to develop a django application")
    assert opening.messages[0].timestamp == "2023-06-09T13:39:59Z"  # 1686317999.727911
    assert opening.authored_at == "2023-06-09T13:40:46Z"  # 1686318046.301795


@needs_bench
def test_tool_calls_and_browsing_are_short_summaries() -> None:
    conversations, _ = read_all(FULL)
    texts = [m.text for c in conversations for m in c.messages]
    assert sum(t.startswith("[tool call browser: ") for t in texts) == 27
    assert sum(t.startswith("[tool call show_me.get_MermaidRoute: ") for t in texts) == 1
    assert sum(t.startswith("[browsing: ") for t in texts) == 19
    assert sum(t.startswith("[quote ") for t in texts) == 11
    assert sum(t.startswith("[browser error: Error when executing command") for t in texts) == 2
    assert sum(t.startswith("[show_me.get_MermaidRoute result: ") for t in texts) == 1
    summaries = [t for t in texts if t.startswith("[") and "\n" not in t]
    assert all(len(t) <= chatgpt.SUMMARY_CHARS + 140 for t in summaries)
    assert not any("Sample Oscar projects" in t and len(t) > 400 for t in texts)  # no page dump


@needs_bench
def test_the_branch_kept_is_the_one_current_node_ends() -> None:
    conversations, _ = read_all(FULL)
    by_id = {c.conversation_id: c for c in conversations}
    raw = json.loads(FULL.read_text(encoding="utf-8"))
    branching = [c for c in raw if any(len(n["children"]) > 1 for n in c["mapping"].values())]
    assert len(branching) == 4
    for source in branching:
        mapping = source["mapping"]
        on_path, node = set(), source["current_node"]
        while node:
            on_path.add(node)
            node = mapping[node]["parent"]
        kept = {m.key for m in by_id[source["id"]].messages}
        assert kept <= on_path
        assert not kept & (set(mapping) - on_path)
    # "Logo design": the kept answer is children[0]; in "Intro to Multivariate Stats." it is
    # children[1], and the abandoned regeneration's text must not appear.
    stats = by_id["3af5baaa-e3c9-4fec-928d-0007faaa9430"]
    assert "eb5d508e" not in " ".join(m.key or "" for m in stats.messages)
    assert any(m.key and m.key.startswith("4ac5aced") for m in stats.messages)
    logo = by_id["e96087ed-b714-4a54-a06a-e425db1680bd"]
    assert any(m.key and m.key.startswith("d80333b5") for m in logo.messages)
    assert not any(m.key and m.key.startswith("50d1ea72") for m in logo.messages)


@needs_bench
def test_the_native_fixture_matches_its_golden_file() -> None:
    conversations, skips = read_all(NATIVE)
    assert skips == {"system message": 1, "reasoning": 2}
    [conversation] = conversations
    assert conversation.conversation_id == "chatgpt-fixture-conversation"
    golden = json.loads((GOLDEN / "chatgpt-native.json").read_text(encoding="utf-8"))
    assert [m._asdict() for m in conversation.messages] == golden
    assert "Superseded answer." not in json.dumps(golden)  # the inactive branch
    assert len(list(exchanges(conversation))) == 1


@needs_bench
def test_hidden_nodes_images_and_web_calls_of_2025_exports() -> None:
    [simple], skips = read_all(SIMPLE)
    # 3 hidden system nodes + the hidden custom instructions; one empty assistant node
    assert skips == {"hidden message": 4, "empty message": 1}
    assert [m.role for m in simple.messages] == ["user", "assistant"]
    assert not any(
        "user_profile" in m.text or "The user provided" in m.text for m in simple.messages
    )
    [images], skips = read_all(IMAGES)
    assert skips == {"hidden message": 2, "empty message": 1}
    assert images.messages[0].text == "[image]\n\nInterpret this painting"
    assert images.title == "Interpretación pintura surrealista"
    assert len(list(exchanges(images))) == 2
    [code], skips = read_all(CODE)
    assert skips == {"hidden message": 2, "empty message": 1}
    assert len(list(exchanges(code))) == 3
    assert code.messages[1].text.startswith('[tool call web: search("I want to build an app')
    assert not any("\ue203" in m.text or "\ue204" in m.text for m in code.messages)


def conversation_json(nodes: list[tuple[str, str, float | None, Any]], **extra: Any) -> Any:
    """A ChatGPT conversation whose nodes form one chain under a null root."""
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None}}
    parent = "root"
    for node_id, role, stamp, content in nodes:
        mapping[parent].setdefault("children", []).append(node_id)
        mapping[node_id] = {
            "id": node_id,
            "parent": parent,
            "children": [],
            "message": {
                "id": node_id,
                "author": {"role": role},
                "create_time": stamp,
                "content": content,
                "recipient": "all",
            },
        }
        parent = node_id
    return {"id": "c1", "title": "t", "create_time": 1700000000.0, "mapping": mapping,
            "current_node": parent, **extra}  # fmt: skip


def text(value: str) -> dict[str, Any]:
    return {"content_type": "text", "parts": [value]}


def test_hostile_and_broken_input_is_skipped_and_counted(tmp_path: Path) -> None:
    good = conversation_json(
        [("u", "user", 1.0e9, text("hi")), ("a", "assistant", None, text("ho"))]
    )
    weird = conversation_json(
        [("u", "user", float("nan"), text("x")), ("a", "assistant", 1e300, {"parts": 5})]
    )
    path = tmp_path / "conversations.json"
    body = json.dumps([good, 7, {"mapping": "no"}, weird, good | {"current_node": "missing"}])
    path.write_text(body[:-1] + ', {"mapping": {', encoding="utf-8")  # cut off at the end
    conversations, skips = read_all(path)
    assert len(conversations) == 3
    assert conversations[0].messages[1].timestamp == "2023-11-14T22:13:20Z"  # the conversation's
    assert conversations[1].messages[0].timestamp == "2023-11-14T22:13:20Z"
    assert [m.text for m in conversations[2].messages] == ["hi", "ho"]  # newest leaf
    assert skips["not a conversation"] == 2
    assert skips["malformed JSON"] == 1
    assert skips["empty message"] == 1


def test_a_conversation_larger_than_a_read_chunk_streams(tmp_path: Path, monkeypatch: Any) -> None:
    from memtrove.mine import json_stream

    monkeypatch.setattr(json_stream, "CHUNK_CHARS", 64)
    nodes = [(f"n{i}", "user" if i % 2 == 0 else "assistant", 1.7e9 + i, text(f"turn {i} " * 30))
             for i in range(40)]  # fmt: skip
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation_json(nodes)] * 3), encoding="utf-8")
    conversations, skips = read_all(path)
    assert not skips
    assert [len(list(exchanges(c))) for c in conversations] == [20, 20, 20]


def locomo_as_chatgpt(sample: dict[str, Any]) -> list[Any]:
    """A LoCoMo sample as ChatGPT would export it: a conversation per session, speaker_a as
    the user, each turn ``speaker: text [image: caption]`` at the session's time."""
    from memtrove.eval.locomo import parse_session_date

    conversation = sample["conversation"]
    exported = []
    for key, turns in conversation.items():
        if not key.startswith("session_") or not isinstance(turns, list) or not turns:
            continue
        moment = parse_session_date(str(conversation.get(f"{key}_date_time", "")))
        start = moment.timestamp() if moment else 1.68e9
        nodes = []
        for number, turn in enumerate(turns):
            body = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                body += f" [image: {turn['blip_caption']}]"
            role = "user" if turn["speaker"] == conversation["speaker_a"] else "assistant"
            nodes.append((turn["dia_id"], role, start + number, text(body)))
        exported.append(conversation_json(nodes, id=f"{sample['sample_id']}-{key}", title=key))
    return exported


@pytest.mark.skipif(not LOCOMO.is_file(), reason="bench/locomo is not here")
def test_locomo_dev_written_as_a_chatgpt_export(tmp_path: Path) -> None:
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([c for s in samples for c in locomo_as_chatgpt(s)]), "utf-8")
    expected_exchanges = expected_turns = sessions = 0
    for sample in samples:
        conversation = sample["conversation"]
        for key, turns in conversation.items():
            if key.startswith("session_") and isinstance(turns, list) and turns:
                sessions += 1
                expected_turns += len(turns)
                openers = sum(t["speaker"] == conversation["speaker_a"] for t in turns)
                expected_exchanges += openers + (turns[0]["speaker"] != conversation["speaker_a"])
    conversations, skips = read_all(path)
    assert (sessions, expected_turns) == (128, 2760)  # bench/locomo/README.md
    assert len(conversations) == sessions
    assert sum(len(c.messages) for c in conversations) == expected_turns
    assert sum(len(list(exchanges(c))) for c in conversations) == expected_exchanges
    assert not skips


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.is_file(), reason="bench/locomo is not here")
def test_locomo_mined_from_chatgpt_exports_recalls_like_eval_locomo(tmp_path: Path) -> None:
    """Each conversation of LoCoMo dev as a ChatGPT export, mined; BM25 over the exchange
    documents, each standing for the turns it holds, against ``eval locomo -m bm25`` over
    one document per turn: R@10 over the first ten turns (the same text) within .02 (measured
    .661 against .655)."""
    from memtrove import Vault
    from memtrove.eval.locomo import (
        conversation_turns,
        normalise_evidence,
        question_metrics,
        run_locomo,
    )
    from memtrove.eval.runner import retrieve

    recalls: list[float] = []
    for number, sample in enumerate(json.loads(LOCOMO.read_text(encoding="utf-8"))):
        folder = tmp_path / f"export{number}"
        folder.mkdir()
        export = folder / "conversations.json"
        export.write_text(json.dumps(locomo_as_chatgpt(sample)), encoding="utf-8")
        turns_of = {
            (c.conversation_id, e.key): [m.key for m in e.messages]
            for c in chatgpt.read(export, Skips())
            for e in exchanges(c)
        }
        known = [turn.dia_id for turn in conversation_turns(sample)]
        with Vault.open(tmp_path / f"v{number}.sqlite", config_dir=tmp_path / "c") as vault:
            vault.mining.mine(folder, "conversations")
            held = {}
            for path, body in vault._connection.execute(
                "SELECT d.path, c.doc FROM documents d JOIN content c ON c.hash = d.hash "
                "WHERE d.collection = 'conversations'"
            ):
                front = dict(re.findall(r'^(conversation_id|exchange): "(.*)"$', body, re.M))
                held[path] = turns_of[(front["conversation_id"], front["exchange"])]
            for qa in sample["qa"]:
                evidence, _ = normalise_evidence(qa.get("evidence", []), known)
                if not evidence:
                    continue
                results = retrieve(vault, "bm25", str(qa["question"]), 10, ["conversations"])
                ranking = [dia for r in results for dia in held.get(r.path, [])]
                recalls.append(question_metrics(ranking, evidence)["R@10"])
    mined = sum(recalls) / len(recalls)
    baseline = run_locomo(LOCOMO, "bm25").metrics["all"]["R@10"]
    assert len(recalls) == 997  # 999 questions, 2 without valid evidence
    assert abs(mined - baseline) <= 0.02, (mined, baseline)
