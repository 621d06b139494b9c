"""Gold JSONL: strict validation, resolution against a real vault, doc-level scoring."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from memtrove import ConfigError, Vault
from memtrove.eval.beir import RANKING_METRICS
from memtrove.eval.gold import GoldEvidence, load_gold, parse_gold_line, run_gold
from tests.conftest import write
from tests.eval.conftest import write_jsonl

HAS_VECTORS = hasattr(Vault, "vsearch")


def example(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "e1",
        "query": "ferret",
        "gold_evidence": [{"collection": "notes", "path": "pets/ferret.md"}],
    }
    return {**base, **fields}


@pytest.fixture
def judged_vault(vault: Vault, notes: Path) -> Vault:
    write(notes, "pets/ferret.md", "# Ferret\n\nOur ferret Pickles sleeps in the piano.\n")
    write(notes, "pets/cat.md", "# Cat\n\nThe cat ignores the ferret entirely.\n")
    write(notes, "music/piano.md", "# Piano\n\nThe piano needs tuning before the recital.\n")
    write(notes, "travel/lisbon.md", "# Lisbon\n\nTrams, tiles and custard tarts.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    return vault


def test_parse_a_full_line() -> None:
    parsed = parse_gold_line(
        json.dumps(
            example(
                mode="intent_search",
                include_internal=True,
                collection="notes",
                tags=["pets", "pets"],
                force_intent="WHY",
                budget_tokens=800,
                gold_answer="in the piano",
                gold_evidence=[
                    {
                        "collection": "notes",
                        "path": "a.md",
                        "hash": "abc",
                        "weight": 2,
                        "span": {"start_line": 1, "end_line": 3},
                        "chunk_seq": 0,
                    }
                ],
            )
        ),
        line=7,
    )
    assert parsed.mode == "intent_search" and parsed.include_internal
    assert parsed.tags == ("pets",) and parsed.line == 7 and parsed.budget_tokens == 800
    assert parsed.gold_evidence == (
        GoldEvidence("notes", "a.md", weight=2.0, hash="abc", chunk_seq=0, span=(1, 3)),
    )


def test_defaults() -> None:
    parsed = parse_gold_line(json.dumps(example()))
    assert parsed.mode == "query" and not parsed.include_internal and parsed.tags == ()
    assert parsed.gold_evidence[0].weight == 1.0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{oops", "invalid JSON"),
        ("[1]", "expected a JSON object"),
        (json.dumps(example(includeInternal=True)), "unknown field 'includeInternal'"),
        (json.dumps({"query": "q", "gold_evidence": [{}]}), "'id' must be a non-empty string"),
        (json.dumps(example(query=" ")), "'query' must be a non-empty string"),
        (json.dumps(example(gold_evidence={})), "'gold_evidence' must be a list"),
        (json.dumps(example(gold_evidence=None)), "'gold_evidence' must be a list"),
        (json.dumps(example(mode="psychic")), "unknown mode 'psychic'"),
        (json.dumps(example(include_internal="yes")), "'include_internal' must be true or false"),
        (json.dumps(example(tags="pets")), "'tags' must be a list of strings"),
        (json.dumps(example(budget_tokens=0)), "'budget_tokens' must be positive"),
        (
            json.dumps(example(gold_evidence=[{"collection": "n", "path": "p", "score": 1}])),
            "gold_evidence[0]: unknown field 'score'",
        ),
        (
            json.dumps(example(gold_evidence=[{"collection": "n"}])),
            "gold_evidence[0]: 'path' must be a non-empty string",
        ),
        (
            json.dumps(example(gold_evidence=[{"collection": "n", "path": "p", "weight": -1}])),
            "'weight' must be a positive number",
        ),
        (
            json.dumps(example(gold_evidence=[{"collection": "n", "path": "p", "weight": True}])),
            "'weight' must be a positive number",
        ),
        (
            json.dumps(
                example(gold_evidence=[{"collection": "n", "path": "p", "span": {"start": 1}}])
            ),
            "span: unknown field 'start'",
        ),
        (
            json.dumps(example(gold_evidence=[{"collection": "n", "path": "p", "chunk_seq": 1.5}])),
            "'chunk_seq' must be an integer",
        ),
        (json.dumps(example(gold_evidence=["notes/a.md"])), "gold_evidence[0]: must be an object"),
    ],
)
def test_invalid_lines(line: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_gold_line(line)
    assert message in str(caught.value)


def test_load_names_the_line_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(example()),
                "",
                json.dumps(example(id="e2", extra=1)),
                json.dumps(example(id="e3", mode="bad")),
            ]
        )
    )
    with pytest.raises(ConfigError) as caught:
        load_gold(path)
    message = str(caught.value)
    assert message == f"gold file {path}: line 3: unknown field 'extra' (and 1 more)"
    assert "\n" not in message


def test_load_rejects_duplicate_ids_and_empty_files(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "gold.jsonl", [example(), example()])
    with pytest.raises(ConfigError, match=r"line 2: duplicate id 'e1' \(first on line 1\)"):
        load_gold(path)
    path.write_text("\n\n")
    with pytest.raises(ConfigError, match="holds no examples"):
        load_gold(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_gold(tmp_path / "missing.jsonl")


def test_run_scores_resolves_and_reports_unresolved(judged_vault: Vault) -> None:
    examples = [
        parse_gold_line(json.dumps(row))
        for row in [
            # ferret: pets/ferret.md ranks first (title and body), cat.md also mentions it
            example(id="e1", mode="search"),
            # piano: graded; piano.md (gain 1) and ferret.md (gain 3) both match
            example(
                id="e2",
                query="recital tuning",
                mode="search",
                gold_evidence=[
                    {"collection": "notes", "path": "music/piano.md", "weight": 1},
                    {"collection": "notes", "path": "pets/ferret.md", "weight": 3},
                ],
            ),
            # nothing matches "zebra"
            example(id="e3", query="zebra", mode="search"),
            # a label pointing at a file that is not in the vault
            example(
                id="e4",
                mode="search",
                gold_evidence=[
                    {"collection": "notes", "path": "pets/ferret.md"},
                    {"collection": "notes", "path": "pets/gone.md"},
                ],
            ),
        ]
    ]
    report = run_gold(judged_vault, examples)
    assert report.n == 3
    # e2 ranks piano.md (gain 1) only: 1 / (3 + 1/log2 3)
    ndcg_e2 = 1 / (3 + 1 / math.log2(3))
    assert report.metrics["nDCG@10"] == pytest.approx((1 + ndcg_e2 + 0) / 3, abs=1e-6)
    assert report.metrics["R@10"] == pytest.approx((1 + 0.5 + 0) / 3, abs=1e-6)
    assert report.metrics["R@100"] == report.metrics["R@10"]
    assert report.metrics["MRR"] == pytest.approx(2 / 3, abs=1e-6)
    assert report.skipped == {"unresolved_examples": 1}
    data = report.to_dict()
    assert data["unresolved_references"] == 1
    assert data["unresolved"] == [{"id": "e4", "references": ["notes/pets/gone.md"]}]
    assert data["methods"] == {"bm25": 3}
    assert report.notes[0].startswith("1 evidence references did not resolve; 1 examples")


def test_hash_pin_mismatch_is_a_warning(judged_vault: Vault) -> None:
    document = judged_vault.get("notes/pets/ferret.md")
    rows = [
        example(id="ok", gold_evidence=[{"collection": "notes", "path": "pets/ferret.md",
                                         "hash": document.hash[:12]}]),
        example(id="stale", gold_evidence=[{"collection": "notes", "path": "pets/ferret.md",
                                            "hash": "0" * 64}]),
    ]  # fmt: skip
    report = run_gold(
        judged_vault, [parse_gold_line(json.dumps(row)) for row in rows], method="bm25"
    )
    assert report.n == 2 and report.method == "bm25"
    assert [note for note in report.notes if "hash pin" in note] == [
        "stale: hash pin of notes/pets/ferret.md does not match (stale label?)"
    ]


def test_collection_filter(judged_vault: Vault, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other, "ferret.md", "# Ferret ferret ferret\n\nferret ferret\n")
    judged_vault.add_collection(other, name="other")
    judged_vault.update()
    row = example(mode="search", collection="notes")
    report = run_gold(judged_vault, [parse_gold_line(json.dumps(row))])
    assert report.metrics["MRR"] == 1.0


@pytest.mark.skipif(not HAS_VECTORS, reason="Vault.vsearch is not written yet")
@pytest.mark.parametrize("mode", ["query", "vsearch", "hybrid"])
def test_vector_modes_run(judged_vault: Vault, mode: str) -> None:
    judged_vault.embed()
    report = run_gold(judged_vault, [parse_gold_line(json.dumps(example(mode=mode)))])
    assert report.n == 1 and 0.0 <= report.metrics["nDCG@10"] <= 1.0


def test_cli_json_against_the_global_vault(
    run_eval: Callable[..., Result], tmp_path: Path, notes: Path
) -> None:
    write(notes, "pets/ferret.md", "# Ferret\n\nOur ferret sleeps in the piano.\n")
    with Vault.open(tmp_path / "cli" / "vault.sqlite", config_dir=tmp_path / "cli" / "config") as v:
        v.add_collection(notes, name="notes")
        v.update()
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            example(mode="search"),
            example(id="e2", gold_evidence=[{"collection": "notes", "path": "nope.md"}]),
        ],
    )
    data = json.loads(run_eval("gold", str(gold), "--json").stdout)
    assert set(data["metrics"]) == set(RANKING_METRICS)
    assert data["n"] == 1 and data["metrics"]["MRR"] == 1.0
    assert data["unresolved_references"] == 1
    assert set(data["latency_ms"]) == {"p50", "p95"}
    human = run_eval("gold", str(gold), "--method", "bm25").stdout
    assert "note: 1 evidence references did not resolve" in human


def test_cli_invalid_gold_is_one_line(run_eval: Callable[..., Result], tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", [example(), example(id="e2", typo=True)])
    result = run_eval("gold", str(gold), code=1)
    assert result.stderr == f"memtrove: error: gold file {gold}: line 2: unknown field 'typo'\n"
    result = run_eval("gold", str(tmp_path / "absent.jsonl"), code=1)
    assert result.stderr.count("\n") == 1 and "does not exist" in result.stderr
