"""The prediction and behavior engines: learned rules, matched against prompts.

Both engines have the same four tables (matchers, items, edges, provenance):

- a *matcher* describes a situation ("the user asks for a refactor"); it is embedded;
- an *item* is the rule: a prediction of what the user wants, or a behavior the agent
  should keep to; its ``confidence`` is the Bayesian posterior
  ``(confirm + K*P0) / (confirm + disconfirm + K)`` with K = 5 and P0 = 0.5;
- an *edge* links a matcher to an item with a weight;
- *provenance* records every signal (``create``, ``confirm``, ``disconfirm``, ``soft`` and,
  for behaviors, ``codify``), so a confidence can always be explained.

A soft signal counts as a quarter of a confirmation. At prompt time each matcher's cosine
with the prompt, times the edge's weight, times the item's confidence, scores the item;
those at or above :data:`SURFACE_THRESHOLD` are surfaced.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtrove.db.connection import Connection, write_transaction
from memtrove.errors import EntryNotFoundError, InvalidQueryError
from memtrove.memory.slugs import store_name
from memtrove.memory.vectors import cosine_to_all, unit_matrix
from memtrove.results import Rule, RuleMatch, RuleMatcher

__all__ = [
    "KINDS",
    "PRIOR",
    "PRIOR_STRENGTH",
    "SOFT_WEIGHT",
    "SURFACE_THRESHOLD",
    "add_item",
    "add_matcher",
    "codify",
    "confidence",
    "has_matchers",
    "link",
    "list_rules",
    "match_rules",
    "signal",
]

PRIOR_STRENGTH = 5.0  # K
PRIOR = 0.5  # P0
SOFT_WEIGHT = 0.25
SURFACE_THRESHOLD = 0.60
MAX_TEXT_CHARS = 2000


@dataclass(frozen=True)
class _Engine:
    kind: str
    matchers: str
    items: str
    edges: str
    provenance: str
    item_column: str
    signals: frozenset[str]


KINDS: dict[str, _Engine] = {
    "prediction": _Engine(
        "prediction",
        "prediction_matchers",
        "predictions",
        "prediction_edges",
        "prediction_provenance",
        "prediction_id",
        frozenset({"confirm", "disconfirm", "soft"}),
    ),
    "behavior": _Engine(
        "behavior",
        "behavior_matchers",
        "behaviors",
        "behavior_edges",
        "behavior_provenance",
        "behavior_id",
        frozenset({"confirm", "disconfirm", "soft"}),
    ),
}


def confidence(confirm: float, disconfirm: float) -> float:
    return (confirm + PRIOR_STRENGTH * PRIOR) / (confirm + disconfirm + PRIOR_STRENGTH)


def _engine(kind: str) -> _Engine:
    try:
        return KINDS[kind]
    except KeyError:
        raise InvalidQueryError(f"kind must be prediction or behavior, not {kind!r}") from None


def _text(value: str, what: str) -> str:
    text = " ".join(value.split())
    if not text:
        raise InvalidQueryError(f"a {what} cannot be empty")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidQueryError(f"a {what} is at most {MAX_TEXT_CHARS} characters")
    return text


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _ensure_store(connection: Connection, store: str, now: str) -> None:
    connection.execute(
        "INSERT INTO memory_stores (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        (store, now),
    )


def add_matcher(
    connection: Connection,
    kind: str,
    store: str,
    description: str,
    embedding: bytes | None,
    model: str | None,
    now: str,
) -> str:
    engine, store = _engine(kind), store_name(store)
    description = _text(description, "situation")
    identifier = _new_id("m")
    with write_transaction(connection):
        _ensure_store(connection, store, now)
        connection.execute(
            f"INSERT INTO {engine.matchers} (id, store, description, embedding, model, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (identifier, store, description, embedding, model, now, now),
        )
    return identifier


def add_item(
    connection: Connection,
    kind: str,
    store: str,
    statement: str,
    rationale: str | None,
    now: str,
) -> str:
    engine, store = _engine(kind), store_name(store)
    statement = _text(statement, kind)
    identifier = _new_id(kind[0])
    with write_transaction(connection):
        _ensure_store(connection, store, now)
        connection.execute(
            f"INSERT INTO {engine.items} (id, store, statement, rationale, confidence, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (identifier, store, statement, rationale, confidence(0, 0), now, now),
        )
        _provenance(connection, engine, identifier, "create", statement, now)
    return identifier


def link(
    connection: Connection, kind: str, matcher_id: str, item_id: str, weight: float, now: str
) -> None:
    """Link a matcher to an item (again: the new weight replaces the old)."""
    engine = _engine(kind)
    if not 0.0 < weight <= 1.0:
        raise InvalidQueryError(f"weight must be above 0 and at most 1, got {weight}")
    with write_transaction(connection):
        _require(connection, engine.matchers, matcher_id, "situation")
        _require(connection, engine.items, item_id, kind)
        connection.execute(
            f"INSERT INTO {engine.edges} (matcher_id, {engine.item_column}, weight, created_at) "
            f"VALUES (?, ?, ?, ?) ON CONFLICT (matcher_id, {engine.item_column}) "
            "DO UPDATE SET weight = excluded.weight",
            (matcher_id, item_id, weight, now),
        )


def signal(
    connection: Connection, kind: str, item_id: str, name: str, detail: str | None, now: str
) -> float:
    """Apply ``confirm``, ``disconfirm`` or ``soft`` (a quarter confirmation); recorded in
    provenance. Returns the new confidence."""
    engine = _engine(kind)
    if name not in engine.signals:
        raise InvalidQueryError(f"signal must be one of {', '.join(sorted(engine.signals))}")
    confirm, disconfirm = (
        (1.0, 0.0)
        if name == "confirm"
        else (0.0, 1.0)
        if name == "disconfirm"
        else (SOFT_WEIGHT, 0.0)
    )
    with write_transaction(connection):
        row = connection.execute(
            f"SELECT confirm_count, disconfirm_count FROM {engine.items} WHERE id = ?",
            (item_id,),
        ).fetchone()
        if row is None:
            raise EntryNotFoundError(f"no {kind} {item_id!r}")
        confirms, disconfirms = float(row[0]) + confirm, float(row[1]) + disconfirm
        posterior = confidence(confirms, disconfirms)
        connection.execute(
            f"UPDATE {engine.items} SET confirm_count = ?, disconfirm_count = ?, confidence = ?, "
            "updated_at = ? WHERE id = ?",
            (confirms, disconfirms, posterior, now, item_id),
        )
        _provenance(connection, engine, item_id, name, detail, now)
    return posterior


def codify(connection: Connection, item_id: str, detail: str | None, now: str) -> None:
    """Mark a behavior as codified (written down as a standing rule); recorded in provenance."""
    engine = KINDS["behavior"]
    with write_transaction(connection):
        _require(connection, engine.items, item_id, "behavior")
        connection.execute(
            "UPDATE behaviors SET codified_at = ?, updated_at = ? WHERE id = ?",
            (now, now, item_id),
        )
        _provenance(connection, engine, item_id, "codify", detail, now)


def provenance(
    connection: Connection, kind: str, item_id: str
) -> list[tuple[str, str | None, str]]:
    """(signal, detail, created_at) of every signal on an item, oldest first."""
    engine = _engine(kind)
    inserted = connection.catalog.insertion_order(engine.provenance)
    rows = connection.execute(
        f"SELECT signal, detail, created_at FROM {engine.provenance} "
        f"WHERE {engine.item_column} = ? ORDER BY created_at, {inserted}",
        (item_id,),
    ).fetchall()
    return [(str(a), b, str(c)) for a, b, c in rows]


def _provenance(
    connection: Connection, engine: _Engine, item_id: str, name: str, detail: str | None, now: str
) -> None:
    connection.execute(
        f"INSERT INTO {engine.provenance} (id, {engine.item_column}, signal, detail, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (_new_id("s"), item_id, name, detail, now),
    )


def _require(connection: Connection, table: str, identifier: str, what: str) -> None:
    if connection.execute(f"SELECT 1 FROM {table} WHERE id = ?", (identifier,)).fetchone() is None:
        raise EntryNotFoundError(f"no {what} {identifier!r}")


def list_rules(connection: Connection, kind: str, stores: Sequence[str]) -> list[Rule]:
    """The items of ``stores`` with their matchers, most confident first."""
    engine = _engine(kind)
    names = [store_name(store) for store in stores]
    marks = ",".join("?" * len(names))
    rows = connection.execute(
        f"SELECT id, store, statement, rationale, confidence, confirm_count, disconfirm_count, "
        f"codified_at, created_at, updated_at FROM {engine.items} WHERE store IN ({marks}) "
        "ORDER BY confidence DESC, created_at, id",
        names,
    ).fetchall()
    matchers: dict[str, list[RuleMatcher]] = {}
    for item_id, matcher_id, description, weight in connection.execute(
        f"SELECT e.{engine.item_column}, m.id, m.description, e.weight FROM {engine.edges} e "
        f"JOIN {engine.matchers} m ON m.id = e.matcher_id WHERE m.store IN ({marks}) "
        "ORDER BY e.weight DESC, m.id",
        names,
    ).fetchall():
        matchers.setdefault(str(item_id), []).append(
            RuleMatcher(str(matcher_id), str(description), float(weight))
        )
    return [
        Rule(
            kind=kind,
            id=str(r[0]),
            store=str(r[1]),
            statement=str(r[2]),
            rationale=r[3],
            confidence=float(r[4]),
            confirm_count=float(r[5]),
            disconfirm_count=float(r[6]),
            codified_at=r[7],
            created_at=str(r[8]),
            updated_at=str(r[9]),
            matchers=matchers.get(str(r[0]), []),
        )
        for r in rows
    ]


def has_matchers(connection: Connection, stores: Sequence[str]) -> bool:
    names = [store_name(store) for store in stores]
    marks = ",".join("?" * len(names))
    return any(
        connection.execute(
            f"SELECT 1 FROM {engine.matchers} WHERE store IN ({marks}) LIMIT 1", names
        ).fetchone()
        for engine in KINDS.values()
    )


def match_rules(
    connection: Connection,
    stores: Sequence[str],
    prompt_vector: Any,
    model: str,
    threshold: float = SURFACE_THRESHOLD,
) -> list[RuleMatch]:
    """Rules of both engines whose best ``cosine x weight x confidence`` reaches
    ``threshold``, best first."""
    names = [store_name(store) for store in stores]
    marks = ",".join("?" * len(names))
    found: list[RuleMatch] = []
    for kind, engine in KINDS.items():
        matchers = connection.execute(
            f"SELECT id, description, embedding FROM {engine.matchers} "
            f"WHERE store IN ({marks}) AND embedding IS NOT NULL AND model = ?",
            [*names, model],
        ).fetchall()
        if not matchers:
            continue
        similarity = cosine_to_all(prompt_vector, unit_matrix([bytes(m[2]) for m in matchers]))
        if len(similarity) != len(matchers):
            continue
        close = {
            str(m[0]): (str(m[1]), float(s)) for m, s in zip(matchers, similarity, strict=True)
        }
        rules = {rule.id: rule for rule in list_rules(connection, kind, names)}
        best: dict[str, RuleMatch] = {}
        for rule in rules.values():
            for matcher in rule.matchers:
                if matcher.id not in close:
                    continue
                description, cosine = close[matcher.id]
                score = max(0.0, cosine) * matcher.weight * rule.confidence
                if score >= threshold and (rule.id not in best or score > best[rule.id].score):
                    best[rule.id] = RuleMatch(rule, description, cosine, matcher.weight, score)
        found.extend(best.values())
    return sorted(found, key=lambda match: (-match.score, match.rule.id))
