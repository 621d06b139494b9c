"""LoCoMo turn retrieval: recall of a conversation's evidence turns for each question.

The task (``bench/locomo/README.md``): per conversation, a fresh vault holding one document
per dialogue turn; each question retrieves the top 10 turns of its own conversation and is
scored on the evidence turns it was judged against:

- ``R@k``: the fraction of the question's evidence turns in the top k;
- ``SessR@k``: the fraction of its evidence sessions (``N`` in ``D<N>:<turn>``) that a
  top-k turn belongs to;
- ``MRR``: reciprocal rank of the first evidence turn (0 when none is in the top 10).

Reported for all categories and for categories 1-4 (5 is adversarial), with per-query
latency. Evidence ids are normalised first (:func:`normalise_evidence`); questions left
without valid evidence are skipped and counted.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtrove.errors import ConfigError
from memtrove.eval.metrics import coverage, hit_at_k, recall_at_k, reciprocal_rank, unique
from memtrove.eval.runner import (
    MetricTable,
    ProgressCallback,
    TimedRetriever,
    check_method,
    json_head,
    latency_summary,
    pipeline_summary,
    prepare,
    read_text_file,
    retrieved_paths,
    scratch_vault,
    token_summary,
)
from memtrove.text import to_iso

__all__ = [
    "CATEGORIES",
    "LOCOMO_METRICS",
    "LocomoReport",
    "Turn",
    "exchange_metrics",
    "index_turns",
    "normalise_evidence",
    "parse_session_date",
    "run_locomo",
    "session_of",
    "turn_document",
]

LOCOMO_METRICS = ("R@5", "R@10", "SessR@5", "SessR@10", "MRR", "hit@3")
RETRIEVE_LIMIT = 10
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
COLLECTION = "locomo"

_SESSION_KEY = re.compile(r"session_(\d+)")
# "D8:6", "D:11:26" (a stray colon), "D30:05" (a zero-padded turn)
_DIALOGUE_ID = re.compile(r"D:?0*(\d+):0*(\d+)")
_EVIDENCE_SEPARATORS = re.compile(r"[\s;,]+")
# "1:56 pm on 8 May, 2023"
_SESSION_DATE = re.compile(
    r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I
)
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_MONTHS = {
    **{name.lower(): number for number, name in enumerate(_MONTH_NAMES, 1)},
    **{name[:3].lower(): number for number, name in enumerate(_MONTH_NAMES, 1)},
    "sept": 9,
}


@dataclass(frozen=True)
class Turn:
    """One dialogue turn and the session it belongs to."""

    dia_id: str
    session: int
    speaker: str
    text: str
    caption: str | None = None
    session_date: str | None = None  # as written, e.g. "1:56 pm on 8 May, 2023"


@dataclass
class LocomoReport:
    """Metrics for ``all`` categories and ``cat1-4``, latency, and what was skipped."""

    method: str
    metrics: dict[str, dict[str, float]]
    latency_ms: dict[str, float]
    n: int
    n_by_group: dict[str, int]
    by_category: dict[str, dict[str, float]]
    conversations: int
    skipped_questions: int
    dropped_evidence: int
    failed_queries: int = 0
    session: bool = False
    tokens: dict[str, float] = field(default_factory=dict)
    pipeline: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    elapsed_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: ``metrics``, ``latency_ms`` and ``n`` first, then context."""
        return json_head(self, "locomo") | {
            "n_by_group": self.n_by_group,
            "by_category": self.by_category,
            "conversations": self.conversations,
            "skipped": {"questions_without_evidence": self.skipped_questions},
            "dropped_evidence_ids": self.dropped_evidence,
            "failed_queries": self.failed_queries,
            "session": self.session,
            "tokens": self.tokens,
            "pipeline": self.pipeline,
            "notes": self.notes,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


def session_of(dia_id: str) -> int:
    """The session number of a normalised dialogue id: ``D12:3`` -> 12."""
    return int(dia_id[1:].split(":", 1)[0])


def normalise_evidence(raw: object, known: Iterable[str]) -> tuple[list[str], int]:
    """Valid, deduplicated dialogue ids of one question, and how many entries were dropped.

    Entries holding several ids are split (``'D8:6; D9:17'``, ``'D9:1 D4:4 D4:6'``);
    ``'D:11:26'`` becomes ``D11:26`` and ``'D30:05'`` ``D30:5``; junk (``'D'``) and ids that
    name no turn of the dialogue are dropped.
    """
    existing = set(known)
    entries = raw if isinstance(raw, list) else [raw]
    valid: list[str] = []
    dropped = 0
    for entry in entries:
        for token in _EVIDENCE_SEPARATORS.split(str(entry)) if entry is not None else []:
            if not token:
                continue
            match = _DIALOGUE_ID.fullmatch(token)
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}" if match else None
            if dia_id is None or dia_id not in existing:
                dropped += 1
            elif dia_id not in valid:
                valid.append(dia_id)
    return valid, dropped


def parse_session_date(text: str) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 UTC; None when it does not parse."""
    match = _SESSION_DATE.search(text)
    if not match:
        return None
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower())
    if month is None or not 1 <= int(hour) <= 12:
        return None
    hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    try:
        return datetime(int(year), month, int(day), hour_24, int(minute), tzinfo=UTC)
    except ValueError:
        return None


def turn_document(turn: Turn) -> str:
    """The markdown file indexed for one turn.

    Body: ``speaker: text``, then `` [image: caption]`` when the turn shared an image, then
    the session's date on its own line. Frontmatter: a title of the speaker and the date,
    ``content_type: conversation`` (a turn of a dialogue, as conversation imports are), and
    ``authored_at`` (the session's time, ISO-8601 UTC) when the date parses.
    """
    moment = parse_session_date(turn.session_date) if turn.session_date else None
    day = f"{moment.day} {_MONTH_NAMES[moment.month - 1]} {moment.year}" if moment else None
    title = f"{turn.speaker}, {day}" if day else turn.speaker
    lines = ["---", f"title: {json.dumps(title, ensure_ascii=False)}", "content_type: conversation"]
    if moment:
        lines.append(f"authored_at: {to_iso(moment)}")
    lines.append("---")
    line = f"{turn.speaker}: {turn.text}"
    if turn.caption:
        line += f" [image: {turn.caption}]"
    lines.append(line)
    if day or turn.session_date:
        lines.append(f"Date: {day or turn.session_date}")
    return "\n".join(lines) + "\n"


def load_locomo(path: Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo JSON file (a list of conversations with their questions)."""
    try:
        data = json.loads(read_text_file(path, "LoCoMo file"))
    except json.JSONDecodeError as error:
        raise ConfigError(f"LoCoMo file {path} is not valid JSON: {error}") from None
    if not isinstance(data, list) or not data:
        raise ConfigError(f"LoCoMo file {path} must hold a non-empty JSON list of samples")
    for index, sample in enumerate(data):
        name = sample.get("sample_id", f"#{index}") if isinstance(sample, dict) else f"#{index}"
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise ConfigError(f"LoCoMo sample {name} has no 'conversation' object")
        questions = sample.get("qa", [])
        if not isinstance(questions, list) or not all(isinstance(q, dict) for q in questions):
            raise ConfigError(f"LoCoMo sample {name}: 'qa' must be a list of objects")
    return data


def conversation_turns(sample: Mapping[str, Any]) -> list[Turn]:
    """Every turn of a sample's sessions, in session order (date keys without turns ignored)."""
    conversation: Mapping[str, Any] = sample["conversation"]
    name = sample.get("sample_id", "?")
    sessions: list[tuple[int, list[Any]]] = []
    for key, value in conversation.items():
        match = _SESSION_KEY.fullmatch(key)
        if match and isinstance(value, list):
            sessions.append((int(match.group(1)), value))
    turns: list[Turn] = []
    for number, items in sorted(sessions):
        date = conversation.get(f"session_{number}_date_time")
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise ConfigError(f"LoCoMo sample {name}: session {number} has a turn without text")
            match = _DIALOGUE_ID.fullmatch(str(item.get("dia_id", "")))
            if not match:
                raise ConfigError(
                    f"LoCoMo sample {name}: turn id {item.get('dia_id')!r} is not D<session>:<turn>"
                )
            caption = item.get("blip_caption")
            turns.append(
                Turn(
                    dia_id=f"D{int(match.group(1))}:{int(match.group(2))}",
                    session=int(match.group(1)),
                    speaker=str(item.get("speaker", "")).strip() or "unknown",
                    text=item["text"],
                    caption=caption.strip() if isinstance(caption, str) and caption else None,
                    session_date=date if isinstance(date, str) else None,
                )
            )
    return turns


def question_metrics(ranking: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """R@5, R@10, SessR@5, SessR@10 and MRR of one question's ranked dialogue ids."""
    ranked = unique(ranking)
    sessions = {session_of(dia_id) for dia_id in evidence}
    return {
        "R@5": recall_at_k(ranked, evidence, 5),
        "R@10": recall_at_k(ranked, evidence, 10),
        "SessR@5": coverage((session_of(d) for d in ranked[:5]), sessions),
        "SessR@10": coverage((session_of(d) for d in ranked[:10]), sessions),
        "MRR": reciprocal_rank(ranked[:RETRIEVE_LIMIT], evidence),
        "hit@3": hit_at_k(ranked, evidence, 3),
    }


def exchange_metrics(
    documents: Sequence[Sequence[str]], evidence: Sequence[str]
) -> dict[str, float]:
    """The metrics of :func:`question_metrics` over retrieved documents that each hold
    several turns (mined exchanges, in rank order): R@k counts the evidence among the turns
    of the first k documents, MRR the rank of the first document holding some, as a search
    of k returns them."""
    wanted = set(evidence)
    sessions = {session_of(dia_id) for dia_id in evidence}

    def turns(k: int) -> list[str]:
        return [dia_id for held in documents[:k] for dia_id in held]

    first = next((rank for rank, held in enumerate(documents, 1) if wanted.intersection(held)), 0)
    return {
        "R@5": coverage(turns(5), evidence),
        "R@10": coverage(turns(10), evidence),
        "SessR@5": coverage((session_of(d) for d in turns(5)), sessions),
        "SessR@10": coverage((session_of(d) for d in turns(10)), sessions),
        "MRR": 1.0 / first if 0 < first <= RETRIEVE_LIMIT else 0.0,
        "hit@3": 1.0 if wanted.intersection(turns(3)) else 0.0,
    }


def run_locomo(
    path: Path,
    method: str,
    *,
    conversations: int | None = None,
    session: bool = False,
    hook_vectors: str = "auto",
    progress: ProgressCallback | None = None,
    mined: str | None = None,
    server: str | None = None,
) -> LocomoReport:
    """Run the LoCoMo retrieval task on the file at ``path`` with one retrieval ``method``.

    ``session`` (``surfacing`` only): each conversation's questions come in order through
    one hook session, so lookback sees the earlier questions. ``mined`` (``claude-code`` or
    ``chatgpt``): the sessions are written in that export format and imported with ``mine``
    (one document per exchange; see :mod:`memtrove.eval.locomo_mined`) instead of one
    document per turn.
    """
    check_method(method)
    started = time.perf_counter()
    samples = load_locomo(Path(path))[:conversations]
    groups = {"all": MetricTable(LOCOMO_METRICS), "cat1-4": MetricTable(LOCOMO_METRICS)}
    per_category: dict[int, MetricTable] = {}
    retrievers: list[TimedRetriever] = []
    skipped = dropped = 0
    notes: list[str] = []
    equal_text: list[float] = []  # mined: recall over the first ten turns retrieved
    for index, sample in enumerate(samples):
        name = str(sample.get("sample_id", f"#{index}"))
        if progress:
            progress(index, len(samples), f"conversation {name}")
        turns = conversation_turns(sample)
        with scratch_vault(server=server) as (vault, folder):
            # document path -> the turns it holds
            if mined is not None:
                turns_of = _mine_sample(vault, sample, turns, folder, method, mined)
            else:
                turns_of = index_turns(vault, turns, folder, method, notes)
            known = [turn.dia_id for turn in turns]
            retriever = TimedRetriever(vault, method, session=session, hook_vectors=hook_vectors)
            retrievers.append(retriever)
            for qa in sample.get("qa", []):
                evidence, bad = normalise_evidence(qa.get("evidence", []), known)
                dropped += bad
                if not evidence:
                    skipped += 1
                    continue
                results = retriever(str(qa.get("question", "")), RETRIEVE_LIMIT)
                held = [turns_of.get(path, []) for path in retrieved_paths(results, COLLECTION)]
                ranking = [dia_id for turns_held in held for dia_id in turns_held]
                if mined is not None:
                    values = exchange_metrics(held, evidence)
                    equal_text.append(recall_at_k(ranking, evidence, RETRIEVE_LIMIT))
                else:
                    values = question_metrics(ranking, evidence)
                category = qa.get("category")
                groups["all"].add(values)
                if category in (1, 2, 3, 4):
                    groups["cat1-4"].add(values)
                if isinstance(category, int):
                    per_category.setdefault(category, MetricTable(LOCOMO_METRICS)).add(values)
    if progress:
        progress(len(samples), len(samples), "done")
    if skipped:
        notes.append(f"{skipped} questions skipped: no valid evidence after normalisation")
    if equal_text:
        notes.append(
            f"mined: R@k counts the turns of the first k exchanges retrieved; over their first "
            f"{RETRIEVE_LIMIT} turns (the text of {RETRIEVE_LIMIT} per-turn documents), recall is "
            f"{sum(equal_text) / len(equal_text):.3f}"
        )
    failures = sum(retriever.failures for retriever in retrievers)
    if failures:
        first = next(r.first_failure for r in retrievers if r.first_failure)
        notes.append(f"{failures} questions could not be searched (first: {first})")
    return LocomoReport(
        method=method,
        metrics={group: table.means() for group, table in groups.items()},
        latency_ms=latency_summary([ms for r in retrievers for ms in r.latencies_ms]),
        n=len(groups["all"]),
        n_by_group={group: len(table) for group, table in groups.items()},
        by_category={
            f"cat{category}": {**table.means(), "n": len(table)}
            for category, table in sorted(per_category.items())
        },
        conversations=len(samples),
        skipped_questions=skipped,
        dropped_evidence=dropped,
        failed_queries=failures,
        session=session,
        tokens=token_summary(retrievers),
        pipeline=pipeline_summary(retrievers),
        notes=notes,
        elapsed_seconds=time.perf_counter() - started,
    )


def index_turns(
    vault: Any, turns: Sequence[Turn], folder: Path, method: str, notes: list[str]
) -> dict[str, list[str]]:
    """Write one document per turn in ``folder``, index it as the task's collection and
    prepare it for ``method`` (its notes added to ``notes``); each document's turn."""
    turns_of: dict[str, list[str]] = {}
    for number, turn in enumerate(turns):
        relative = f"t{number:05d}.md"
        (folder / relative).write_text(turn_document(turn), encoding="utf-8")
        turns_of[relative] = [turn.dia_id]
    vault.add_collection(folder, name=COLLECTION)
    notes.extend(prepare(vault, method))
    return turns_of


def _mine_sample(
    vault: Any,
    sample: Mapping[str, Any],
    turns: list[Turn],
    folder: Path,
    method: str,
    format: str,
) -> dict[str, list[str]]:
    """Write ``sample``'s sessions in ``folder`` as ``format`` exports, mine them into the
    task's collection (embedding them for the vector methods); their documents' turns."""
    from memtrove.eval.locomo_mined import FORMATS, exchange_turns, write_sessions

    if format not in FORMATS:
        raise ConfigError(f"mined must be one of {', '.join(FORMATS)}, not {format!r}")
    write_sessions(sample, turns, folder, parse_session_date, format)
    vault.mining.mine(folder, COLLECTION, format=format)
    if method != "bm25":
        vault.embed()
    return exchange_turns(folder, format)
