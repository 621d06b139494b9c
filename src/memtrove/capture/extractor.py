"""``decision-extractor``'s work: the turns since the last capture become observations.

1. The turns after the session's capture cursor (the fingerprint of the last turn read;
   the last :data:`MAX_TURNS` turns of the window when there is none or it scrolled out).
2. The observer LLM (bounded by ``time_budget``; see :mod:`.observations`), or, without one
   or when its answer fails or cannot be read, the heuristic (``source: heuristic``).
3. Contradiction candidates for each new decision, judged (LLM when there is one,
   see :mod:`.contradictions`).
4. One write transaction holds all of it: the documents (:mod:`.store`), the confidence of
   contradicted decisions, SPO triples of eligible observations (:data:`TRIPLE_TYPES`,
   canonical predicates only, through :mod:`memtrove.graph.triples`), ``causal`` edges
   between observations (:mod:`.causal`), ``contradicts`` edges from the new decision to the
   one it reverses (:mod:`memtrove.graph.relations`) and the cursor. A failure before or
   inside it writes nothing. Each triple is a savepoint of its own: one that is refused is
   skipped, and the documents stand without it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from memtrove.capture.causal import causal_links
from memtrove.capture.contradictions import (
    Contradiction,
    apply_contradiction,
    find_candidates,
    judge,
)
from memtrove.capture.observations import (
    Observation,
    heuristic_observations,
    observer_prompt,
    parse_observer_answer,
)
from memtrove.capture.store import session_observations, write_capture
from memtrove.capture.turns import Turn, fingerprint
from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import MemtroveError
from memtrove.text import parse_iso_datetime, to_iso

if TYPE_CHECKING:
    from memtrove.models.protocols import LLM

__all__ = ["MAX_TURNS", "TRIPLE_TYPES", "CaptureReport", "bounded", "capture_turns", "new_turns"]

MAX_TURNS = 10
OBSERVER_MAX_TOKENS = 1500
VERDICT_MAX_TOKENS = 60
TRIPLE_TYPES = frozenset(
    {"decision", "preference", "discovery", "feature", "change", "refactor", "bugfix"}
)
T = TypeVar("T")


class CaptureReport(NamedTuple):
    turns: int
    source: str  # "observer" | "heuristic" | "none" (no new turn)
    observations: int
    skipped: int
    triples: int
    causal_links: int
    contradictions: tuple[str, ...]
    would_invalidate: tuple[str, ...]
    llm_error: str | None
    documents: tuple[int, ...] = ()  # ids of the documents written (observations, sessions)

    @property
    def summary(self) -> str:
        return (
            f"{self.turns} turn(s), {self.observations} observation(s) ({self.source}), "
            f"{self.skipped} duplicate(s), {self.triples} triple(s), {self.causal_links} causal "
            f"link(s), {len(self.contradictions)} contradiction(s)"
        )


def bounded(action: Callable[[], T], seconds: float) -> tuple[T | None, str | None]:
    """``action()`` given at most ``seconds``: (its value, None), or (None, why) when it
    raised a memtrove error or ran out of time (it is left to finish in the background)."""
    outcome: list[T] = []
    failure: list[str] = []

    def work() -> None:
        try:
            outcome.append(action())
        except MemtroveError as error:
            failure.append(f"{type(error).__name__}: {error}")
        except Exception as error:  # a bug in a backend must not cost the capture
            failure.append(f"{type(error).__name__}: {error}")

    thread = threading.Thread(target=work, name="memtrove-capture-llm", daemon=True)
    thread.start()
    thread.join(max(0.0, seconds))
    if outcome:
        return outcome[0], None
    return None, failure[0] if failure else f"no answer within {seconds:.1f} s"


def new_turns(turns: Sequence[Turn], cursor: str | None) -> list[Turn]:
    """The turns after the one ``cursor`` names (the last MAX_TURNS without it)."""
    if cursor:
        for index in range(len(turns) - 1, -1, -1):
            if fingerprint(turns[index]) == cursor:
                return list(turns[index + 1 :])
    return list(turns[-MAX_TURNS:])


def _observe(
    turns: Sequence[Turn], llm: LLM | None, seconds: float, redact: Callable[[str], str]
) -> tuple[list[Observation], str, str | None]:
    if llm is not None:
        prompt = redact(observer_prompt(turns))  # secrets never leave for the model either
        answer, error = bounded(
            lambda: llm.complete(prompt, max_tokens=OBSERVER_MAX_TOKENS), seconds
        )
        if answer is not None:
            parsed = parse_observer_answer(answer)
            if parsed is not None:
                return parsed, "observer", None
            error = "the observer's answer held no <observation> elements"
        return heuristic_observations(turns), "heuristic", error
    return heuristic_observations(turns), "heuristic", None


def capture_turns(
    connection: Connection,
    session_id: str,
    turns: Sequence[Turn],
    now: datetime,
    *,
    llm: LLM | None = None,
    redact: Callable[[str], str] = lambda text: text,
    invalidate: bool = False,
    time_budget: float = 20.0,
    retry_seconds: float = 5.0,
    authored_at: str | None = None,
    guard: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
) -> CaptureReport:
    """Capture the session's new turns (see the module docstring). ``guard`` is held while
    the connection is used, never across a model call."""
    from memtrove.graph.relations import upsert_relation
    from memtrove.lifecycle.sessions import capture_cursor, set_capture_cursor

    started = time.monotonic()
    with guard():
        cursor = capture_cursor(connection, session_id)
    todo = [turn for turn in new_turns(turns, cursor) if turn.reply]
    if not todo:
        return CaptureReport(0, "none", 0, 0, 0, 0, (), (), None)
    observations, source, llm_error = _observe(todo, llm, time_budget * 0.6, redact)
    ask: Callable[[str], str | None] | None = None
    if llm is not None and source == "observer":
        deadline = started + time_budget

        def ask(prompt: str) -> str | None:
            left = deadline - time.monotonic()
            text = redact(prompt)
            answer, _ = bounded(lambda: llm.complete(text, max_tokens=VERDICT_MAX_TOKENS), left)
            return answer

    verdicts: dict[str, list[Contradiction]] = {}
    for observation in observations:
        if observation.type == "decision":
            with guard():
                candidates = find_candidates(connection, observation, session_id)
            if candidates:
                verdicts[observation.title] = judge(observation, candidates, ask)
    stamp = to_iso(now)
    authored_at = authored_at or parse_iso_datetime(todo[-1].at) or None
    lowered: list[str] = []
    would: list[str] = []
    contradicts: list[tuple[int, int, float]] = []
    with guard(), write_transaction(connection, retry_seconds=retry_seconds):
        earlier = session_observations(connection, session_id, now)
        written = write_capture(
            connection, session_id, observations, now, authored_at=authored_at, redact=redact
        )
        by_title = {observation.title: doc_id for doc_id, observation in written.observations}
        for title, found in verdicts.items():
            new_id = by_title.get(title)
            if new_id is None:
                continue
            for contradiction in found:
                old = contradiction.old
                apply_contradiction(connection, contradiction, new_id, stamp, invalidate=invalidate)
                contradicts.append((new_id, old.doc_id, contradiction.confidence))
                lowered.append(
                    f"{old.path} ({contradiction.method}, {contradiction.confidence:.2f})"
                )
                if not invalidate:
                    would.append(old.path)
        triples = 0
        for doc_id, observation in written.observations:
            if observation.type in TRIPLE_TYPES:
                triples += _write_triples(connection, doc_id, observation, redact)
        links = causal_links(earlier, written.observations)
        for cause, effect, weight in links:
            upsert_relation(
                connection, cause, effect, "causal", weight, {"source": "decision-extractor"}
            )
        for new_id, old_id, confidence in contradicts:
            upsert_relation(
                connection,
                new_id,
                old_id,
                "contradicts",
                confidence,
                {"source": "decision-extractor"},
            )
        set_capture_cursor(connection, session_id, fingerprint(todo[-1]), stamp)
    return CaptureReport(
        len(todo),
        source,
        len(written.observations),
        written.skipped,
        triples,
        len(links),
        tuple(lowered),
        tuple(would),
        llm_error,
        tuple(
            dict.fromkeys(
                [doc_id for doc_id, _ in written.observations]
                + [doc for doc in (written.decisions_id, written.antipatterns_id) if doc]
            )
        ),
    )


def _write_triples(
    connection: Connection, doc_id: int, observation: Observation, redact: Callable[[str], str]
) -> int:
    from memtrove.graph.triples import PREDICATES, add_fact

    count = 0
    for triple in observation.triples:
        predicate = "_".join(triple.predicate.strip().lower().replace("-", " ").split())
        if predicate not in PREDICATES:
            continue
        subject, obj = redact(triple.subject), redact(triple.object)
        literal = predicate in ("prefers", "avoids")
        try:
            add_fact(
                connection,
                subject,
                predicate,
                None if literal else obj,
                object_literal=obj if literal else None,
                confidence=min(1.0, max(0.0, observation.confidence)),
                source_doc_id=doc_id,
                source_fact=redact(f"{triple.subject} {predicate} {triple.object}")[:300],
            )
        except MemtroveError:
            continue
        count += 1
    return count
