"""LoCoMo: evidence normalisation, unit documents, and a run with hand-computed metrics."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from memtrove import ConfigError, InvalidQueryError, Vault
from memtrove.eval.locomo import (
    LOCOMO_METRICS,
    Turn,
    normalise_evidence,
    parse_session_date,
    question_metrics,
    run_locomo,
    session_of,
    turn_document,
)

KNOWN = ["D8:6", "D9:17", "D9:1", "D4:4", "D4:6", "D11:26", "D30:5", "D1:1"]
HAS_VECTORS = hasattr(Vault, "vsearch")


@pytest.mark.parametrize(
    ("raw", "expected", "dropped"),
    [
        (["D8:6; D9:17"], ["D8:6", "D9:17"], 0),
        (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"], 0),
        (["D:11:26"], ["D11:26"], 0),
        (["D30:05"], ["D30:5"], 0),
        (["D"], [], 1),
        (["D99:1", "D1:1"], ["D1:1"], 1),  # an id that names no turn
        (["D1:1", "D1:01", "D1:1"], ["D1:1"], 0),  # duplicates after fixing
        ("D8:6, D9:17", ["D8:6", "D9:17"], 0),  # a bare string, comma-separated
        ([], [], 0),
        (None, [], 0),
        (["turn 3"], [], 2),
    ],
)
def test_normalise_evidence(raw: object, expected: list[str], dropped: int) -> None:
    assert normalise_evidence(raw, KNOWN) == (expected, dropped)


def test_session_of() -> None:
    assert session_of("D12:3") == 12
    assert session_of("D1:10") == 1


def test_parse_session_date() -> None:
    moment = parse_session_date("1:56 pm on 8 May, 2023")
    assert moment is not None and moment.isoformat() == "2023-05-08T13:56:00+00:00"
    assert parse_session_date("12:09 am on 13 September, 2023").hour == 0  # type: ignore[union-attr]
    assert parse_session_date("12:30 pm on 1 Sept, 2023").hour == 12  # type: ignore[union-attr]
    assert parse_session_date("sometime in May") is None
    assert parse_session_date("1:00 pm on 31 February, 2023") is None


def test_turn_document_text_and_frontmatter() -> None:
    turn = Turn(
        dia_id="D1:5",
        session=1,
        speaker="Caroline",
        text="The stories were so inspiring!",
        caption="a photo of a mural",
        session_date="1:56 pm on 8 May, 2023",
    )
    assert turn_document(turn) == (
        "---\n"
        'title: "Caroline, 8 May 2023"\n'
        "content_type: conversation\n"
        "authored_at: 2023-05-08T13:56:00Z\n"
        "---\n"
        "Caroline: The stories were so inspiring! [image: a photo of a mural]\n"
        "Date: 8 May 2023\n"
    )
    plain = turn_document(Turn("D1:1", 1, "Mel", "Hi", session_date="whenever"))
    assert "authored_at" not in plain and plain.endswith("Mel: Hi\nDate: whenever\n")


def test_turn_document_is_indexed_with_title_and_authored_time(tmp_path: Path) -> None:
    folder = tmp_path / "turns"
    folder.mkdir()
    turn = Turn("D2:1", 2, "Bob", 'He said "yes": fine', None, "10:04 am on 19 June, 2023")
    (folder / "t00000.md").write_text(turn_document(turn), encoding="utf-8")
    with Vault.open(tmp_path / "v.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(folder, name="locomo")
        vault.update()
        document = vault.get("locomo/t00000.md")
    assert document.title == "Bob, 19 June 2023"
    assert document.authored_at == "2023-06-19T10:04:00Z"
    assert document.body.endswith('Bob: He said "yes": fine\nDate: 19 June 2023\n')


def test_question_metrics() -> None:
    ranking = ["D1:1", "D2:4", "D3:1", "D2:4", "D5:5", "D6:1", "D4:2"]
    values = question_metrics(ranking, ["D2:4", "D4:2", "D9:9"])
    assert values == {
        "R@5": pytest.approx(1 / 3),
        "R@10": pytest.approx(2 / 3),
        "SessR@5": pytest.approx(1 / 3),  # sessions 2, 4, 9; top 5 (unique) covers 2
        "SessR@10": pytest.approx(2 / 3),
        "MRR": 0.5,
        "hit@3": 1.0,
    }


def test_run_on_synthetic_conversations(locomo_file: Path) -> None:
    report = run_locomo(locomo_file, "bm25")
    # scored: conv-a ferret(4) 1, theremin+bassoon(1) 1, marathon(2) 1, Lisbon(5) 1/2,
    # zebra(3) 0; conv-b piano(4) 1, escaped(2) 1. Skipped: "lost" and "nothing".
    assert report.n == 7
    assert report.n_by_group == {"all": 7, "cat1-4": 6}
    all_ = report.metrics["all"]
    assert all_["R@5"] == all_["R@10"] == pytest.approx(5.5 / 7, abs=1e-6)
    assert all_["SessR@5"] == all_["SessR@10"] == pytest.approx(5.5 / 7, abs=1e-6)
    assert all_["MRR"] == pytest.approx(6 / 7, abs=1e-6)
    cat = report.metrics["cat1-4"]
    assert cat == {name: pytest.approx(5 / 6, abs=1e-6) for name in LOCOMO_METRICS}
    assert report.by_category["cat5"]["R@10"] == 0.5
    assert report.by_category["cat3"]["n"] == 1
    assert report.skipped_questions == 2
    assert report.dropped_evidence == 3  # "D", "D9:9", "D30:05"
    assert report.conversations == 2
    assert report.latency_ms["p95"] >= report.latency_ms["p50"] >= 0
    assert any("2 questions skipped" in note for note in report.notes)


def test_json_shape(locomo_file: Path) -> None:
    data = run_locomo(locomo_file, "bm25", conversations=1).to_dict()
    assert set(data["metrics"]) == {"all", "cat1-4"}
    for values in data["metrics"].values():
        assert set(values) == set(LOCOMO_METRICS)
        assert all(0.0 <= value <= 1.0 for value in values.values())
    assert set(data["latency_ms"]) == {"p50", "p95"}
    assert data["n"] == 5 and data["conversations"] == 1
    json.dumps(data)


def test_progress_is_reported(locomo_file: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    run_locomo(locomo_file, "bm25", progress=lambda *event: seen.append(event))
    assert seen[0] == (0, 2, "conversation conv-a") and seen[-1] == (2, 2, "done")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("{}", "non-empty JSON list"),
        ("[]", "non-empty JSON list"),
        ('[{"sample_id": "s1"}]', "s1 has no 'conversation'"),
        ('[{"conversation": {}, "qa": [1]}]', "list of objects"),
        ('[{"conversation": {"session_1": [{"dia_id": "D1:1"}]}}]', "turn without text"),
        ('[{"conversation": {"session_1": [{"dia_id": "x", "text": "hi"}]}}]', "D<session>"),
    ],
)
def test_bad_files_are_config_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        run_locomo(path, "bm25")


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        run_locomo(tmp_path / "nope.json", "bm25")
    with pytest.raises(ConfigError, match="is a folder"):
        run_locomo(tmp_path, "bm25")


def test_unknown_method(locomo_file: Path) -> None:
    with pytest.raises(InvalidQueryError, match="unknown retrieval method 'bogus'"):
        run_locomo(locomo_file, "bogus")


@pytest.mark.skipif(not HAS_VECTORS, reason="Vault.vsearch is not written yet")
@pytest.mark.parametrize("method", ["vector", "hybrid", "query"])
def test_vector_methods_run(locomo_file: Path, method: str) -> None:
    report = run_locomo(locomo_file, method)
    assert report.n == 7 and report.failed_queries == 0
    for values in report.metrics.values():
        assert all(0.0 <= value <= 1.0 for value in values.values())


def test_cli_json(run_eval: Callable[..., Result], locomo_file: Path) -> None:
    result = run_eval("locomo", str(locomo_file), "--method", "bm25", "--json")
    data = json.loads(result.stdout)
    assert data["n"] == 7 and data["metrics"]["all"]["MRR"] == pytest.approx(6 / 7, abs=1e-6)


def test_cli_table(run_eval: Callable[..., Result], locomo_file: Path) -> None:
    out = run_eval("locomo", str(locomo_file), "-m", "bm25", "--conversations", "1").stdout
    lines = out.splitlines()
    assert "1 conversations, 5 questions" in lines[0]
    header = next(line for line in lines if line.startswith("group"))
    assert header.split() == ["group", "n", *LOCOMO_METRICS]
    assert any(line.split()[:2] == ["cat1-4", "4"] for line in lines)
    assert any(line.startswith("latency") and "p95" in line for line in lines)


def test_cli_progress_goes_to_stderr(run_eval: Callable[..., Result], locomo_file: Path) -> None:
    result = run_eval("locomo", str(locomo_file), "-m", "bm25", "--json", "--progress")
    assert "[0/2] conversation conv-a" in result.stderr
    json.loads(result.stdout)


def test_cli_errors_are_one_line(run_eval: Callable[..., Result], tmp_path: Path) -> None:
    result = run_eval("locomo", str(tmp_path / "missing.json"), "-m", "bm25", code=1)
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("memtrove: error: LoCoMo file")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2", encoding="utf-8")
    result = run_eval("locomo", str(bad), "-m", "bm25", code=1)
    assert result.stderr.count("\n") == 1 and "not valid JSON" in result.stderr
    assert "Traceback" not in result.output


def test_cli_rejects_unknown_method(run_eval: Callable[..., Result], locomo_file: Path) -> None:
    run_eval("locomo", str(locomo_file), "--method", "bogus", code=2)
