"""Small synthetic judged sets written to tmp_path (never the real LoCoMo or BEIR data)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from memtrove.cli import app as root_app
from memtrove.cli import evaluate


def _turn(dia_id: str, speaker: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


# Queries use words found in exactly one turn of their conversation, so BM25 ranks the
# evidence first and every metric is known by hand (see test_locomo.py).
LOCOMO = [
    {
        "sample_id": "conv-a",
        "conversation": {
            "speaker_a": "Alice",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("D1:1", "Alice", "Hello Bob, long time no see!"),
                _turn(
                    "D1:2",
                    "Alice",
                    "I adopted a ferret from the shelter.",
                    img_url=["https://example.invalid/x.jpg"],
                    blip_caption="a photo of a small animal in a cage",
                ),
                _turn("D1:3", "Bob", "Nice. I have been practising the theremin."),
            ],
            "session_2_date_time": "10:04 am on 19 June, 2023",
            "session_2": [
                _turn("D2:1", "Bob", "I bought a bassoon last week."),
                _turn("D2:2", "Alice", "The marathon in Lisbon was exhausting."),
            ],
            "session_3_date_time": "9:00 am on 1 July, 2023",  # no session_3: ignored
        },
        "qa": [
            {"question": "ferret?", "answer": "shelter", "evidence": ["D1:2"], "category": 4},
            {
                "question": "theremin bassoon",
                "answer": "x",
                "evidence": ["D1:3; D2:1"],
                "category": 1,
            },
            {"question": "marathon", "answer": "x", "evidence": ["D:2:2"], "category": 2},
            {"question": "lost", "answer": "x", "evidence": ["D", "D9:9"], "category": 4},
            {
                "question": "Lisbon",
                "adversarial_answer": "x",
                "evidence": ["D1:01 D2:2"],
                "category": 5,
            },
            {"question": "zebra", "answer": "x", "evidence": ["D1:1"], "category": 3},
        ],
        "observation": {"ignored": True},
        "session_summary": {"ignored": True},
    },
    {
        "sample_id": "conv-b",
        "conversation": {
            "speaker_a": "Carol",
            "speaker_b": "Dan",
            "session_1_date_time": "8:30 am on 2 January, 2022",
            "session_1": [
                _turn("D1:1", "Carol", "My ferret escaped yesterday."),
                _turn("D1:2", "Dan", "Oh no, did you look for the ferret?"),
            ],
            "session_2_date_time": "7:15 pm on 3 January, 2022",
            "session_2": [_turn("D2:1", "Carol", "Found it asleep inside the piano.")],
        },
        "qa": [
            {"question": "piano", "answer": "x", "evidence": ["D2:1"], "category": 4},
            {"question": "escaped", "answer": "x", "evidence": ["D1:1", "D30:05"], "category": 2},
            {"question": "nothing", "answer": "x", "evidence": [], "category": 1},
        ],
    },
]

BEIR_CORPUS = [
    {"_id": "d1", "title": "Aardvark habitats", "text": "Aardvarks dig tunnels in the savanna."},
    {"_id": "d2", "title": "Soil engineering", "text": "Burrows collapse without support."},
    {"_id": "d3", "title": "Cooking pasta", "text": "Boil water and add salt."},
    {"_id": 4, "title": "", "text": "Magma rises through the crust.", "metadata": {}},
]
BEIR_QUERIES = [
    {"_id": "q1", "text": "aardvark"},
    {"_id": "q2", "text": "burrows"},
    {"_id": "q3", "text": "magma"},
    {"_id": "q4", "text": "zebra"},  # no judgements
    {"_id": "q5", "text": "salt"},  # only a score-0 judgement
]
BEIR_QRELS = [
    ("q1", "d1", 2),
    ("q2", "d2", 1),
    ("q2", "d3", 2),
    ("q3", "4", 1),
    ("q3", "missing-doc", 1),
    ("q5", "d3", 0),
]


def write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO), encoding="utf-8")
    return path


@pytest.fixture
def beir_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "beir"
    write_jsonl(folder / "corpus.jsonl", BEIR_CORPUS)
    write_jsonl(folder / "queries.jsonl", BEIR_QUERIES)
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in BEIR_QRELS]
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _eval_app() -> typer.Typer:
    """The real ``memtrove`` app when ``eval`` is mounted on it, else a copy that mounts it."""
    if any(group.name == "eval" for group in root_app.registered_groups):
        return root_app
    test_app = typer.Typer()

    @test_app.callback()
    def root() -> None:
        """memtrove (test app)."""

    test_app.add_typer(evaluate.app, name="eval")
    return test_app


@pytest.fixture
def run_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Invoke ``memtrove eval ...``; the global vault is tmp_path/cli/vault.sqlite."""
    monkeypatch.setenv("MEMTROVE_VAULT", str(tmp_path / "cli" / "vault.sqlite"))
    monkeypatch.setenv("MEMTROVE_CONFIG_DIR", str(tmp_path / "cli" / "config"))
    runner = CliRunner()
    app = _eval_app()

    def invoke(*args: str, code: int = 0) -> Result:
        result = runner.invoke(app, ["eval", *args])
        assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
        return result

    return invoke
