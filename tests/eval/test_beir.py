"""BEIR folders: loading, graded scoring on a tiny corpus, errors."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from memtrove import ConfigError, Vault
from memtrove.eval.beir import RANKING_METRICS, corpus_document, load_qrels, run_beir
from tests.eval.conftest import write_jsonl

HAS_VECTORS = hasattr(Vault, "vsearch")
# q1 finds d1 (gain 2) first: 1. q2 finds d2 (gain 1) but not d3 (gain 2):
# 1 / (2 + 1/log2 3). q3 finds "4" but "missing-doc" is not in the corpus: 1 / (1 + 1/log2 3).
NDCG = (1.0 + 1 / (2 + 1 / math.log2(3)) + 1 / (1 + 1 / math.log2(3))) / 3


def test_run_on_a_tiny_folder(beir_folder: Path) -> None:
    report = run_beir(beir_folder, "bm25")
    assert report.n == 3
    assert report.metrics["nDCG@10"] == pytest.approx(NDCG, abs=1e-6)
    assert report.metrics["R@10"] == pytest.approx(2 / 3, abs=1e-6)  # (1 + 1/2 + 1/2) / 3
    assert report.metrics["R@100"] == pytest.approx(2 / 3, abs=1e-6)
    assert report.metrics["MRR"] == 1.0
    assert report.skipped == {"without_judgements": 2, "beyond_limit": 0}
    assert report.details["documents"] == 4
    assert any("1 judged documents are not in the corpus" in note for note in report.notes)


def test_limit_queries(beir_folder: Path) -> None:
    report = run_beir(beir_folder, "bm25", limit_queries=1)
    assert report.n == 1 and report.metrics["nDCG@10"] == 1.0
    assert report.skipped["beyond_limit"] == 2


def test_json_shape(beir_folder: Path) -> None:
    data = run_beir(beir_folder, "bm25").to_dict()
    assert set(data["metrics"]) == set(RANKING_METRICS)
    assert all(0.0 <= value <= 1.0 for value in data["metrics"].values())
    assert set(data["latency_ms"]) == {"p50", "p95"} and data["n"] == 3
    assert data["pipeline"]["stages"] == {"bm25": 3}
    json.dumps(data)


def test_qrels_with_and_without_header(tmp_path: Path) -> None:
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\n\nq2\td1\t0\n")
    assert load_qrels(path) == {"q1": {"d1": 1.0, "d2": 2.0}, "q2": {"d1": 0.0}}
    path.write_text("q1 d1 1\n")
    assert load_qrels(path) == {"q1": {"d1": 1.0}}
    path.write_text("q1\td1\t1\nq2\td2\thigh\n")
    with pytest.raises(ConfigError, match="line 2: score 'high' is not a number"):
        load_qrels(path)
    path.write_text("q1\td1\n")
    with pytest.raises(ConfigError, match="line 1: expected query-id"):
        load_qrels(path)


def test_corpus_document_quotes_the_title() -> None:
    text = corpus_document("a:1", 'Title: with "quotes"\nand a break', "---\nbody")
    assert text == (
        '---\nbeir_id: "a:1"\ntitle: "Title: with \\"quotes\\" and a break"\n---\n---\nbody\n'
    )
    assert corpus_document("x", " ", "body").startswith('---\nbeir_id: "x"\n---\n')


def test_titles_are_indexed(beir_folder: Path) -> None:
    # "soil" appears only in d2's title
    write_jsonl(beir_folder / "queries.jsonl", [{"_id": "q2", "text": "soil"}])
    report = run_beir(beir_folder, "bm25")
    assert report.n == 1 and report.metrics["MRR"] == 1.0


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda f: (f / "corpus.jsonl").unlink(), "corpus file .* does not exist"),
        (lambda f: (f / "qrels" / "test.tsv").unlink(), "qrels file .* does not exist"),
        (lambda f: (f / "queries.jsonl").write_text("{oops\n"), "line 1: invalid JSON"),
        (lambda f: (f / "corpus.jsonl").write_text('{"_id": "a"}\n[1]\n'), "line 2: expected"),
        (lambda f: (f / "corpus.jsonl").write_text('{"title": "t"}\n'), "'_id' must be"),
        (
            lambda f: (f / "corpus.jsonl").write_text('{"_id": "a"}\n{"_id": "a"}\n'),
            "line 2: duplicate _id 'a'",
        ),
    ],
)
def test_bad_folders(beir_folder: Path, setup: Callable[[Path], object], message: str) -> None:
    setup(beir_folder)
    with pytest.raises(ConfigError, match=message):
        run_beir(beir_folder, "bm25")


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist or is not a folder"):
        run_beir(tmp_path / "nope", "bm25")


@pytest.mark.skipif(not HAS_VECTORS, reason="Vault.vsearch is not written yet")
@pytest.mark.parametrize("method", ["vector", "hybrid", "query"])
def test_vector_methods_run(beir_folder: Path, method: str) -> None:
    report = run_beir(beir_folder, method)
    assert report.n == 3
    assert all(0.0 <= value <= 1.0 for value in report.metrics.values())


def test_cli_json(run_eval: Callable[..., Result], beir_folder: Path) -> None:
    data = json.loads(run_eval("beir", str(beir_folder), "-m", "bm25", "--json").stdout)
    assert set(data["metrics"]) == set(RANKING_METRICS) and data["n"] == 3
    assert data["metrics"]["nDCG@10"] == pytest.approx(NDCG, abs=1e-6)
    limited = run_eval("beir", str(beir_folder), "-m", "bm25", "--limit-queries", "2", "--json")
    assert json.loads(limited.stdout)["n"] == 2


def test_cli_table(run_eval: Callable[..., Result], beir_folder: Path) -> None:
    out = run_eval("beir", str(beir_folder), "-m", "bm25").stdout
    row = next(line for line in out.splitlines() if line.startswith("all"))
    assert row.split() == ["all", "3", f"{NDCG:.3f}", "0.667", "0.667", "1.000", "1.000"]


def test_cli_errors(run_eval: Callable[..., Result], beir_folder: Path, tmp_path: Path) -> None:
    result = run_eval("beir", str(tmp_path / "nope"), "-m", "bm25", code=1)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("memtrove: error: BEIR")
    (beir_folder / "queries.jsonl").write_text("not json\n")
    result = run_eval("beir", str(beir_folder), "-m", "bm25", code=1)
    assert result.stderr.count("\n") == 1 and "invalid JSON" in result.stderr
