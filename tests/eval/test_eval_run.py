"""``memtrove eval run``: the trust gate, run.json and report.md, the read-only --db snapshot.

The gate is exercised on the project's real judged set (tests/benchmarks/go_proposals.jsonl,
44 questions over the Go design documents, read from ../shared/bench at test time) and on
small vaults of both engines for unresolved references.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from memtrove import Vault
from memtrove.cli import app
from memtrove.eval.replay import RUN_METRICS, score_example
from tests.conftest import where, write
from tests.eval.conftest import write_jsonl

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
GO_GOLD = BENCHMARKS / "go_proposals.jsonl"
GO_DOCS = Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose" / "go-proposals"
GO_EXAMPLES = sum(1 for line in GO_GOLD.read_text(encoding="utf-8").splitlines() if line.strip())


def invoke(vault: Path | str, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(app, ["--vault", str(vault), "eval", "run", *args])
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def go_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A closed vault file of the Go design documents (BM25 only: no vectors needed)."""
    if not GO_DOCS.is_dir():
        pytest.skip(f"{GO_DOCS} is not here")
    root = tmp_path_factory.mktemp("go-snapshot")
    with Vault.open(root / "go.sqlite", config_dir=root / "config") as vault:
        vault.add_collection(GO_DOCS, name="go")
        vault.update()
    yield root / "go.sqlite"


def test_audited_real_set_passes_and_the_snapshot_is_untouched(
    go_snapshot: Path, tmp_path: Path
) -> None:
    before = digest(go_snapshot)
    out = tmp_path / "run"
    empty_global = tmp_path / "global.sqlite"
    result = invoke(
        empty_global, "--gold", str(GO_GOLD), "--db", str(go_snapshot), "--audited",
        "--out", str(out),
    )  # fmt: skip
    assert result.stderr == ""
    assert "gate      passed" in result.stdout
    assert digest(go_snapshot) == before
    assert not Path(f"{go_snapshot}-wal").exists() and not empty_global.exists()
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["gate"] == {
        "passed": True, "reasons": [], "min_examples": 30, "scored_examples": GO_EXAMPLES,
        "unresolved_references": 0, "audited": True,
    }  # fmt: skip
    assert run["snapshot"] is True and run["profile"] == "query" and run["limit"] == 10
    assert run["gold"]["sha256"] == digest(GO_GOLD)
    assert set(run["metrics"]) == set(RUN_METRICS)
    assert len(run["results"]) == GO_EXAMPLES
    # the replay really ranks the right design documents (BM25 alone finds most of them)
    assert run["metrics"]["hit@k"] > 0.8 and run["metrics"]["MRR"] > 0.5
    for row in run["results"]:
        assert row["scored"] and len(row["retrieved"]) <= 10
        hits = set(row["retrieved"]) & set(row["evidence"])
        assert row["metrics"]["recall@k"] == pytest.approx(len(hits) / len(row["evidence"]))
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Trust gate: PASSED" in report and "(snapshot, read-only)" in report
    assert f"| {run['metrics']['MRR']:.3f} |" in report


def test_gate_fails_without_the_attestation_or_enough_examples(
    go_snapshot: Path, tmp_path: Path
) -> None:
    out = tmp_path / "unaudited"
    result = invoke(
        tmp_path / "g.sqlite", "--gold", str(GO_GOLD), "--db", str(go_snapshot),
        "--out", str(out), code=1,
    )  # fmt: skip
    assert result.stderr == (
        "memtrove: error: trust gate failed: the labels are not attested as audited (--audited)\n"
    )
    assert json.loads((out / "run.json").read_text())["gate"]["passed"] is False
    assert "## Trust gate: FAILED" in (out / "report.md").read_text()
    result = invoke(
        tmp_path / "g.sqlite", "--gold", str(GO_GOLD), "--db", str(go_snapshot), "--audited",
        "--min-examples", str(GO_EXAMPLES + 1), "--out", str(tmp_path / "few"), "--json",
        code=1,
    )  # fmt: skip
    data = json.loads(result.stdout)
    assert data["gate"]["reasons"] == [
        f"{GO_EXAMPLES} scored examples, fewer than --min-examples {GO_EXAMPLES + 1}"
    ]
    assert data["out"] == str(tmp_path / "few") and result.stderr.count("\n") == 1


@pytest.fixture
def small_vault(vault: Vault, notes: Path) -> Vault:
    write(notes, "pets/ferret.md", "# Ferret\n\nOur ferret Pickles sleeps in the piano.\n")
    write(notes, "music/piano.md", "# Piano\n\nThe piano needs tuning before the recital.\n")
    write(notes, "travel/lisbon.md", "# Lisbon\n\nTrams, tiles and custard tarts.\n")
    vault.add_collection(notes, name="notes")
    vault.update()
    return vault


def gold_row(identifier: str, query: str, *paths: str, **extra: Any) -> dict[str, Any]:
    evidence = [{"collection": "notes", "path": path} for path in paths]
    return {"id": identifier, "query": query, "gold_evidence": evidence, **extra}


def test_unresolved_reference_fails_the_gate_on_both_engines(
    small_vault: Vault, tmp_path: Path
) -> None:
    gold = write_jsonl(
        tmp_path / "gold.jsonl",
        [
            gold_row("ferret", "ferret piano", "pets/ferret.md", tags=["pets"]),
            gold_row("trams", "custard tarts", "travel/lisbon.md"),
            gold_row("gone", "ferret", "pets/ferret.md", "pets/hamster.md"),
            gold_row("none", "hello there"),  # no document helps: not scored
        ],
    )
    out = tmp_path / "out"
    result = invoke(
        where(small_vault), "--gold", str(gold), "--min-examples", "2", "--audited",
        "--out", str(out), code=1,
    )  # fmt: skip
    assert result.stderr == (
        "memtrove: error: trust gate failed: 1 gold references name no document of the vault "
        "(first: gone -> notes/pets/hamster.md)\n"
    )
    run = json.loads((out / "run.json").read_text())
    assert run["gate"]["scored_examples"] == 2 and run["gate"]["unresolved_references"] == 1
    assert run["skipped"] == {"unresolved": 1, "no evidence": 1}
    by_id = {row["id"]: row for row in run["results"]}
    assert by_id["ferret"]["retrieved"][0] == "notes/pets/ferret.md"
    assert by_id["ferret"]["metrics"]["MRR"] == 1.0 and by_id["trams"]["metrics"]["hit@k"] == 1.0
    assert by_id["gone"]["unresolved"] == ["notes/pets/hamster.md"]
    assert run["by_tag"]["pets"]["n"] == 1
    assert "`notes/pets/hamster.md`" in (out / "report.md").read_text()
    # the same set without the broken label passes, replayed on a snapshot of this vault
    write_jsonl(gold, [gold_row("ferret", "ferret piano", "pets/ferret.md")])
    result = invoke(
        tmp_path / "unused.sqlite", "--gold", str(gold), "--min-examples", "1", "--audited",
        "--db", str(where(small_vault)), "--out", str(tmp_path / "again"),
    )  # fmt: skip
    assert "gate      passed" in result.stdout


def test_default_out_is_a_new_folder_under_eval_runs(
    small_vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    gold = write_jsonl(tmp_path / "gold.jsonl", [gold_row("f", "ferret", "pets/ferret.md")])
    invoke(where(small_vault), "--gold", str(gold), "--min-examples", "1", "--audited")
    [folder] = (tmp_path / "eval-runs").iterdir()
    assert folder.name.endswith("-query") and folder.name[:8].isdigit()
    assert sorted(p.name for p in folder.iterdir()) == ["report.md", "run.json"]
    result = invoke(
        where(small_vault), "--gold", str(gold), "--out", str(folder), "--audited", code=1
    )
    assert result.stderr == (
        f"memtrove: error: --out {folder} already holds a run (run.json); choose another\n"
    )


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["--profile", "intent"], 2, "--profile 'intent' is not implemented; known: query"),
        (["--db", "{tmp}/absent.sqlite"], 1, "snapshot {tmp}/absent.sqlite does not exist"),
        (["--db", "{tmp}"], 1, "snapshot {tmp} is a folder, not a vault file"),
        (["--db", "{tmp}/gold.jsonl"], 1, "cannot read snapshot {tmp}/gold.jsonl: "),
    ],
)
def test_refusals_are_one_line(
    tmp_path: Path, arguments: list[str], code: int, message: str
) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", [gold_row("f", "ferret", "pets/ferret.md")])
    filled = [argument.format(tmp=tmp_path) for argument in arguments]
    result = invoke(tmp_path / "v.sqlite", "--gold", str(gold), *filled, code=code)
    assert result.stderr.startswith(f"memtrove: error: {message.format(tmp=tmp_path)}")
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert not (tmp_path / "absent.sqlite").exists() and not (tmp_path / "eval-runs").exists()


def test_malformed_gold_names_the_line(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps(gold_row("a", "q", "x.md")) + "\n{not json\n", encoding="utf-8")
    result = invoke(tmp_path / "v.sqlite", "--gold", str(gold), code=1)
    assert result.stderr.startswith(f"memtrove: error: gold file {gold}: line 2: invalid JSON (")
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_metrics_by_hand() -> None:
    ranking = ["n/a.md", "n/b.md", "n/a.md", "n/c.md", "n/d.md"]
    values = score_example(ranking, {"n/b.md": 2.0, "n/d.md": 1.0, "n/z.md": 1.0}, 4)
    # top 4 distinct: a, b, c, d; gold b, d, z: 2 found, union of 5
    assert values["jaccard"] == pytest.approx(2 / 5)
    assert values["precision@k"] == pytest.approx(2 / 4)
    assert values["recall@k"] == pytest.approx(2 / 3)
    assert values["hit@k"] == 1.0 and values["MRR"] == pytest.approx(1 / 2)
    ideal = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert values["nDCG@k"] == pytest.approx((2 / math.log2(3) + 1 / math.log2(5)) / ideal)


def test_out_for_the_other_eval_commands(
    small_vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", [gold_row("f", "ferret", "pets/ferret.md")])
    out = tmp_path / "gold-run"
    result = CliRunner().invoke(
        app, ["--vault", str(where(small_vault)), "eval", "gold", str(gold), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text())
    assert run["task"] == "gold" and run["n"] == 1 and run["metrics"]["MRR"] == 1.0
    report = (out / "report.md").read_text()
    assert report.startswith(f"# eval gold {gold}\n") and result.stdout.strip() in report
