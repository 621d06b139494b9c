"""BEIR-format retrieval: nDCG@10, R@10, R@100 and MRR over a judged corpus.

A BEIR folder holds ``corpus.jsonl`` (``{_id, title, text}``), ``queries.jsonl``
(``{_id, text}``) and ``qrels/test.tsv`` (``query-id  corpus-id  score``, with a header).
Every corpus document becomes one markdown file (frontmatter title, text as body) in a
fresh vault; each judged query retrieves its top 100.

Scoring is BEIR's: graded nDCG@10 with the qrel score as gain; recall counts documents
with a score above 0, including judged documents missing from the corpus (they stay in
the denominator, as in trec_eval); MRR is the reciprocal rank of the first relevant one.
Queries without judgements are skipped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memtrove.errors import ConfigError
from memtrove.eval.metrics import hit_at_k, ndcg_at_k, recall_at_k, reciprocal_rank
from memtrove.eval.runner import (
    MetricTable,
    ProgressCallback,
    RankingReport,
    TimedRetriever,
    check_method,
    latency_summary,
    pipeline_summary,
    prepare,
    read_text_file,
    retrieved_paths,
    scratch_vault,
    token_summary,
)

__all__ = [
    "RANKING_METRICS",
    "corpus_document",
    "load_qrels",
    "ranking_metrics",
    "read_jsonl",
    "run_beir",
]

RANKING_METRICS = ("nDCG@10", "R@10", "R@100", "MRR", "hit@3")
RETRIEVE_LIMIT = 100
COLLECTION = "beir"
_FILES_PER_FOLDER = 1000


def read_jsonl(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; a bad line is a ConfigError."""
    text = read_text_file(path, what)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path} line {number}: invalid JSON ({error.msg})") from None
        if not isinstance(value, dict):
            raise ConfigError(f"{path} line {number}: expected a JSON object")
        yield number, value


def _identifier(path: Path, number: int, value: dict[str, Any]) -> str:
    identifier = value.get("_id")
    if isinstance(identifier, bool) or not isinstance(identifier, (str, int)):
        raise ConfigError(f"{path} line {number}: '_id' must be a string")
    if str(identifier) == "":
        raise ConfigError(f"{path} line {number}: '_id' must not be empty")
    return str(identifier)


def load_qrels(path: Path) -> dict[str, dict[str, float]]:
    """``{query id: {corpus id: score}}`` from a qrels TSV (header line optional)."""
    qrels: dict[str, dict[str, float]] = {}
    for number, line in enumerate(read_text_file(path, "qrels file").splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) < 3:
            raise ConfigError(f"{path} line {number}: expected query-id, corpus-id, score")
        query_id, corpus_id, score = (field.strip() for field in fields[:3])
        try:
            value = float(score)
        except ValueError:
            if number == 1 or not qrels:  # the header: query-id corpus-id score
                continue
            raise ConfigError(f"{path} line {number}: score {score!r} is not a number") from None
        qrels.setdefault(query_id, {})[corpus_id] = value
    return qrels


def corpus_document(identifier: str, title: str, text: str) -> str:
    """The markdown file indexed for one corpus document."""
    lines = ["---", f"beir_id: {json.dumps(identifier, ensure_ascii=False)}"]
    if title.strip():
        lines.append(f"title: {json.dumps(' '.join(title.split()), ensure_ascii=False)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + text + "\n"


def ranking_metrics(ranking: list[str], gains: dict[str, float]) -> dict[str, float]:
    """nDCG@10, R@10, R@100 and MRR of one ranking against graded judgements."""
    relevant = {item for item, gain in gains.items() if gain > 0}
    return {
        "nDCG@10": ndcg_at_k(ranking, gains, 10),
        "R@10": recall_at_k(ranking, relevant, 10),
        "R@100": recall_at_k(ranking, relevant, 100),
        "MRR": reciprocal_rank(ranking, relevant),
        "hit@3": hit_at_k(ranking, relevant, 3),
    }


def _write_corpus(path: Path, folder: Path) -> tuple[dict[str, str], int]:
    """Write every corpus document; return ``{relative path: corpus id}`` and the count."""
    corpus_ids: dict[str, str] = {}
    seen: set[str] = set()
    for number, value in read_jsonl(path, "corpus file"):
        identifier = _identifier(path, number, value)
        if identifier in seen:
            raise ConfigError(f"{path} line {number}: duplicate _id {identifier!r}")
        seen.add(identifier)
        index = len(corpus_ids)
        relative = f"b{index // _FILES_PER_FOLDER:04d}/d{index:07d}.md"
        target = folder / relative
        target.parent.mkdir(exist_ok=True)
        title = value.get("title") if isinstance(value.get("title"), str) else ""
        text = value.get("text") if isinstance(value.get("text"), str) else ""
        target.write_text(corpus_document(identifier, str(title), str(text)), encoding="utf-8")
        corpus_ids[relative] = identifier
    return corpus_ids, len(corpus_ids)


def run_beir(
    folder: Path,
    method: str,
    *,
    limit_queries: int | None = None,
    split: str = "test",
    session: bool = False,
    hook_vectors: str = "auto",
    progress: ProgressCallback | None = None,
    server: str | None = None,
) -> RankingReport:
    """Run the judged queries of a BEIR folder with one retrieval ``method``.

    ``session`` (``surfacing`` only): every query comes through one hook session, in order.
    """
    check_method(method)
    started = time.perf_counter()
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"BEIR folder {folder} does not exist or is not a folder")
    corpus_path, queries_path = folder / "corpus.jsonl", folder / "queries.jsonl"
    qrels = load_qrels(folder / "qrels" / f"{split}.tsv")
    queries: list[tuple[str, str]] = []
    without_judgements = 0
    for number, value in read_jsonl(queries_path, "queries file"):
        identifier = _identifier(queries_path, number, value)
        if not any(score > 0 for score in qrels.get(identifier, {}).values()):
            without_judgements += 1
            continue
        queries.append((identifier, str(value.get("text", ""))))
    beyond_limit = max(0, len(queries) - limit_queries) if limit_queries is not None else 0
    queries = queries[:limit_queries]
    table = MetricTable(RANKING_METRICS)
    with scratch_vault(server=server) as (vault, docs):
        if progress:
            progress(0, len(queries), "writing the corpus")
        corpus_ids, documents = _write_corpus(corpus_path, docs)
        known = set(corpus_ids.values())
        missing = sum(
            1 for query_id, _ in queries for corpus_id in qrels[query_id] if corpus_id not in known
        )
        vault.add_collection(docs, name=COLLECTION)
        if progress:
            progress(0, len(queries), f"indexing {documents} documents")
        indexing_notes = prepare(vault, method)
        retriever = TimedRetriever(vault, method, session=session, hook_vectors=hook_vectors)
        for done, (query_id, text) in enumerate(queries):
            if progress and done % 100 == 0:
                progress(done, len(queries), "querying")
            results = retriever(text, RETRIEVE_LIMIT)
            ranking = [
                corpus_ids[path]
                for path in retrieved_paths(results, COLLECTION)
                if path in corpus_ids
            ]
            table.add(ranking_metrics(ranking, qrels[query_id]))
    notes = list(indexing_notes)
    if without_judgements:
        notes.append(f"{without_judgements} queries skipped: no relevant judgement in {split}.tsv")
    if missing:
        notes.append(f"{missing} judged documents are not in the corpus (counted as missed)")
    if retriever.first_failure:
        notes.append(
            f"{retriever.failures} queries could not be searched (first: {retriever.first_failure})"
        )
    return RankingReport(
        task="beir",
        method=method,
        metrics=table.means(),
        latency_ms=latency_summary(retriever.latencies_ms),
        n=len(table),
        skipped={"without_judgements": without_judgements, "beyond_limit": beyond_limit},
        notes=notes,
        details={
            "documents": documents,
            "failed_queries": retriever.failures,
            "session": session,
            "tokens": token_summary([retriever]),
            "pipeline": pipeline_summary([retriever]),
        },
        elapsed_seconds=time.perf_counter() - started,
    )
