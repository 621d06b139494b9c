"""Hand-judged gold sets: JSONL in the format of ClawMem's eval harness, run on a real vault.

One example per line::

    {"id": "auth-1", "query": "how do we rotate refresh tokens", "mode": "query",
     "include_internal": false, "collection": "notes",
     "gold_evidence": [{"collection": "notes", "path": "auth/tokens.md", "weight": 2}],
     "tags": ["auth"]}

Parsing is strict: a line that is not JSON, a missing or mistyped field, an unknown field
(a typo would silently change what is measured) or a repeated id is an error naming the
line. Evidence is resolved by ``collection/path`` to an active document of the vault; an
example with any unresolved reference is reported, counted and left out of the scores
(partial gold would inflate recall). A ``hash`` pin that does not match the live document
is a warning. An empty ``gold_evidence`` says that no document helps (a prompt that needs
no memory): such an example is left out of the ranking metrics, and ``surfacing`` still
runs it, to count what was injected for nothing. Scoring is per document: nDCG@10 with ``weight`` as gain (default 1), R@10,
R@100 and MRR; ``span`` and ``chunk_seq`` are validated and carried, not scored.

``mode`` picks the retrieval method (:data:`MODE_METHODS`): ClawMem's replay surfaces that
memtrove has no call for yet run through ``query``, the default agent path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtrove.errors import ConfigError, DocumentNotFoundError, MemtroveError
from memtrove.eval.beir import RANKING_METRICS, ranking_metrics
from memtrove.eval.injection import InjectedPrompt, injection_summary, useful_references
from memtrove.eval.runner import (
    MetricTable,
    ProgressCallback,
    RankingReport,
    TimedRetriever,
    check_method,
    latency_summary,
    pipeline_summary,
    read_text_file,
    token_summary,
)
from memtrove.eval.surfacing import SURFACING
from memtrove.vault import Vault

__all__ = [
    "MODE_METHODS",
    "GoldEvidence",
    "GoldExample",
    "load_gold",
    "parse_gold_line",
    "resolve_evidence",
    "run_gold",
]

RETRIEVE_LIMIT = 100
MODE_METHODS = {
    "query": "query",
    "intent_search": "intent",
    "context": "surfacing",
    "surfacing": "surfacing",
    "structured": "query",
    "raw": "bm25",
    "search": "bm25",
    "bm25": "bm25",
    "vsearch": "vector",
    "vector": "vector",
    "hybrid": "hybrid",
}
_EXAMPLE_FIELDS = {
    "id", "query", "prompt", "session", "mode", "force_intent", "budget_tokens", "include_internal", "collection",
    "gold_evidence", "gold_answer", "tags",
}  # fmt: skip
_EVIDENCE_FIELDS = {"collection", "path", "hash", "chunk_seq", "weight", "span"}
_SPAN_FIELDS = {"start_line", "end_line"}


@dataclass(frozen=True)
class GoldEvidence:
    """One judged document: ``collection/path``, its gain, and the optional pins."""

    collection: str
    path: str
    weight: float = 1.0
    hash: str | None = None
    chunk_seq: int | None = None
    span: tuple[int, int] | None = None

    @property
    def reference(self) -> str:
        return f"{self.collection}/{self.path}"


@dataclass(frozen=True)
class GoldExample:
    """One validated line of a gold file."""

    id: str
    query: str
    gold_evidence: tuple[GoldEvidence, ...]
    mode: str = "query"
    include_internal: bool = False
    collection: str | None = None
    tags: tuple[str, ...] = ()
    force_intent: str | None = None
    budget_tokens: int | None = None
    gold_answer: str | None = None
    session: str | None = None
    line: int = 0


def _unknown(value: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(value) - allowed)
    if extra:
        raise ValueError(f"{where}unknown field {extra[0]!r}")


def _string(value: Mapping[str, Any], key: str, where: str = "", *, required: bool) -> str | None:
    item = value.get(key)
    if item is None and not required:
        return None
    if not isinstance(item, str) or (required and not item.strip()):
        raise ValueError(f"{where}{key!r} must be a non-empty string")
    return item


def _integer(value: Mapping[str, Any], key: str, where: str = "") -> int | None:
    item = value.get(key)
    if item is None:
        return None
    if isinstance(item, bool) or not isinstance(item, int):
        raise ValueError(f"{where}{key!r} must be an integer")
    return item


def _evidence(value: object, where: str) -> GoldEvidence:
    if not isinstance(value, dict):
        raise ValueError(f"{where}must be an object")
    _unknown(value, _EVIDENCE_FIELDS, where)
    weight = value.get("weight")
    if weight is None:
        weight = 1.0
    elif isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
        raise ValueError(f"{where}'weight' must be a positive number")
    span = value.get("span")
    span_pair: tuple[int, int] | None = None
    if span is not None:
        if not isinstance(span, dict):
            raise ValueError(f"{where}'span' must be an object")
        _unknown(span, _SPAN_FIELDS, f"{where}span: ")
        start, end = _integer(span, "start_line", where), _integer(span, "end_line", where)
        if start is None or end is None:
            raise ValueError(f"{where}'span' needs start_line and end_line")
        span_pair = (start, end)
    return GoldEvidence(
        collection=str(_string(value, "collection", where, required=True)),
        path=str(_string(value, "path", where, required=True)),
        weight=float(weight),
        hash=_string(value, "hash", where, required=False),
        chunk_seq=_integer(value, "chunk_seq", where),
        span=span_pair,
    )


def parse_gold_line(text: str, line: int = 0) -> GoldExample:
    """One gold example from one line of JSON; ``ValueError`` says what is wrong with it."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON ({error.msg})") from None
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object")
    _unknown(value, _EXAMPLE_FIELDS, "")
    mode = _string(value, "mode", required=False) or "query"
    if mode not in MODE_METHODS:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODE_METHODS)}")
    include_internal = value.get("include_internal", False)
    if not isinstance(include_internal, bool):
        raise ValueError("'include_internal' must be true or false")
    evidence = value.get("gold_evidence")
    # An empty list is a judgement too: no document helps (a prompt that needs no memory).
    if not isinstance(evidence, list):
        raise ValueError("'gold_evidence' must be a list")
    tags = value.get("tags", [])
    if tags is None:
        tags = []
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ValueError("'tags' must be a list of strings")
    if ("query" in value) == ("prompt" in value):
        raise ValueError("give exactly one of 'query' and 'prompt'")
    text_field = "query" if "query" in value else "prompt"
    budget = _integer(value, "budget_tokens")
    if budget is not None and budget < 1:
        raise ValueError("'budget_tokens' must be positive")
    return GoldExample(
        id=str(_string(value, "id", required=True)),
        query=str(_string(value, text_field, required=True)),
        gold_evidence=tuple(
            _evidence(item, f"gold_evidence[{index}]: ") for index, item in enumerate(evidence)
        ),
        mode=mode,
        include_internal=include_internal,
        collection=_string(value, "collection", required=False),
        tags=tuple(dict.fromkeys(tags)),
        force_intent=_string(value, "force_intent", required=False),
        budget_tokens=budget,
        gold_answer=_string(value, "gold_answer", required=False),
        session=_string(value, "session", required=False),
        line=line,
    )


def load_gold(path: Path) -> list[GoldExample]:
    """Every example of a gold JSONL file; the first invalid line is a :class:`ConfigError`."""
    examples: list[GoldExample] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, text in enumerate(read_text_file(Path(path), "gold file").splitlines(), 1):
        if not text.strip():
            continue
        try:
            example = parse_gold_line(text, number)
        except ValueError as error:
            problems.append(f"line {number}: {error}")
            continue
        if example.id in first_line:
            problems.append(
                f"line {number}: duplicate id {example.id!r} (first on line {first_line[example.id]})"
            )
            continue
        first_line[example.id] = number
        examples.append(example)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(f"gold file {path}: {problems[0]}{more}")
    if not examples:
        raise ConfigError(f"gold file {path} holds no examples")
    return examples


def resolve_evidence(
    vault: Vault, example: GoldExample
) -> tuple[dict[str, float], list[str], list[str]]:
    """``({reference: gain}, unresolved references, warnings)`` for one example: each
    reference that names no active document of ``vault`` is unresolved."""
    gains: dict[str, float] = {}
    unresolved: list[str] = []
    warnings: list[str] = []
    for evidence in example.gold_evidence:
        try:
            document = vault.get(evidence.reference)
        except DocumentNotFoundError:
            unresolved.append(evidence.reference)
            continue
        reference = f"{document.collection}/{document.path}"
        if evidence.hash and not document.hash.startswith(evidence.hash.lower()):
            warnings.append(f"{example.id}: hash pin of {reference} does not match (stale label?)")
        gains[reference] = max(gains.get(reference, 0.0), evidence.weight)
    return gains, unresolved, warnings


def run_gold(
    vault: Vault,
    examples: Sequence[GoldExample],
    *,
    method: str | None = None,
    session: bool = False,
    progress: ProgressCallback | None = None,
    hook_vectors: str = "auto",
) -> RankingReport:
    """Score every example on ``vault``; ``method`` overrides each example's own mode.

    ``session`` (``surfacing`` only): examples come in file order through one hook session
    per ``session`` value (examples without one share the file's session), so lookback
    sees the earlier prompts of the same session. Without it every example is a fresh
    session.
    """
    started = time.perf_counter()
    methods = {method} if method else {MODE_METHODS[example.mode] for example in examples}
    for name in sorted(methods):
        check_method(name)
    if session and SURFACING in methods:
        # A session writes usage rows (lookback reads them): keep them out of the user's vault.
        with vault.scratch_copy() as copy:
            report = _run_gold(copy, examples, method, session, progress, started, hook_vectors)
        return report
    return _run_gold(vault, examples, method, session, progress, started, hook_vectors)


def _run_gold(
    vault: Vault,
    examples: Sequence[GoldExample],
    method: str | None,
    session: bool,
    progress: ProgressCallback | None,
    started: float,
    hook_vectors: str,
) -> RankingReport:
    table = MetricTable(RANKING_METRICS)
    retrievers: dict[str, TimedRetriever] = {}
    unresolved: dict[str, list[str]] = {}
    warnings: list[str] = []
    modes: dict[str, int] = {}
    current_session: dict[str, str | None] = {}
    injected: list[InjectedPrompt] = []
    no_gold = 0
    for done, example in enumerate(examples):
        if progress and done % 50 == 0:
            progress(done, len(examples), "querying")
        try:
            gains, missing, notes = resolve_evidence(vault, example)
        except MemtroveError as error:  # e.g. an ambiguous reference: a label to fix
            gains, missing, notes = {}, [f"{example.gold_evidence[0].reference}: {error}"], []
        warnings.extend(notes)
        if missing:
            unresolved[example.id] = missing
            continue
        chosen = method or MODE_METHODS[example.mode]
        if not example.gold_evidence:
            no_gold += 1
            if chosen != SURFACING:  # nothing to rank against, nothing injected to count
                continue
        modes[chosen] = modes.get(chosen, 0) + 1
        retriever = retrievers.get(chosen)
        if retriever is None:
            retriever = retrievers[chosen] = TimedRetriever(
                vault, chosen, session=session, hook_vectors=hook_vectors
            )
            current_session[chosen] = example.session
            retriever.new_session()
        elif session and current_session.get(chosen) != example.session:
            current_session[chosen] = example.session
            retriever.new_session()
        collections = [example.collection] if example.collection else None
        surfacer = retriever.surfacer
        before = len(surfacer.injected) if surfacer is not None else 0
        results = retriever(example.query, RETRIEVE_LIMIT, collections)
        if surfacer is not None and len(surfacer.injected) > before:
            injected.append(
                InjectedPrompt(
                    id=example.id,
                    entries=surfacer.injected[-1],
                    tokens=surfacer.tokens[-1],
                    useful=useful_references(gains),
                    session=example.session,
                    tags=example.tags,
                )
            )
        if not example.gold_evidence:
            continue
        ranking = [
            reference
            for r in results
            if example.include_internal or not r.collection.startswith("_")
            for reference in (f"{r.collection}/{r.path}", *r.also_at)
        ]
        table.add(ranking_metrics(ranking, gains))
    latencies = [value for retriever in retrievers.values() for value in retriever.latencies_ms]
    failures = sum(retriever.failures for retriever in retrievers.values())
    notes = list(warnings)
    references = sum(len(refs) for refs in unresolved.values())
    if unresolved:
        first = next(iter(unresolved.items()))
        notes.insert(
            0,
            f"{references} evidence references did not resolve; {len(unresolved)} examples "
            f"not scored (first: {first[0]} -> {first[1][0]})",
        )
    if failures:
        notes.append(f"{failures} queries could not be searched")
    return RankingReport(
        task="gold",
        method=method or "by mode",
        metrics=table.means(),
        latency_ms=latency_summary(latencies),
        n=len(table),
        skipped={
            "unresolved_examples": len(unresolved),
            **({"no_gold_examples": no_gold} if no_gold else {}),
        },
        notes=notes,
        details={
            "examples": len(examples),
            "unresolved_references": references,
            "unresolved": [
                {"id": identifier, "references": refs} for identifier, refs in unresolved.items()
            ],
            "methods": modes,
            "session": session,
            "tokens": token_summary(retrievers.values()),
            "pipeline": pipeline_summary(retrievers.values()),
            **(
                {
                    "injection": injection_summary(injected),
                    "prompts": [prompt.to_dict() for prompt in injected],
                }
                if injected
                else {}
            ),
        },
        elapsed_seconds=time.perf_counter() - started,
    )
