"""The rules area (``vault.rules``): the prediction and behavior engines.

Contract: given the vault's database, the redaction of stored text, the vault's clock and
the memory area (``memory``: store names, as :meth:`MemoryArea.resolve_store`, and
the vectors of situations and prompts, as :meth:`MemoryArea.embed_text`). Its statements
are those of :mod:`memtrove.memory.rules` (``predictions``, ``behaviors`` and their
``*_matchers``, ``*_edges`` and ``*_provenance`` tables).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memtrove.errors import EntryNotFoundError, InvalidQueryError
from memtrove.text import to_iso

if TYPE_CHECKING:
    from memtrove.db.database import Database
    from memtrove.results import Rule, RuleMatch
    from memtrove.vault.areas import Clock, Redact
    from memtrove.vault.memory import MemoryArea

__all__ = ["RulesArea"]


class RulesArea:
    """Predictions (what the user wants) and behaviors (what the agent keeps to)."""

    def __init__(
        self, database: Database, *, redact: Redact, clock: Clock, memory: MemoryArea
    ) -> None:
        self._connection, self._lock = database.connection, database.lock
        self.redact, self._clock, self._memory = redact, clock, memory

    def add_rule(
        self,
        kind: str,
        statement: str,
        *,
        rationale: str | None = None,
        when: Sequence[str] = (),
        store: str | None = None,
    ) -> Rule:
        """A new prediction or behavior (confidence 0.5), linked to a new matcher for each
        situation in ``when``."""
        from memtrove.memory import rules

        target = self._memory.resolve_store(store)
        now = to_iso(self._clock())
        statement = self.redact(statement)
        rationale = None if rationale is None else self.redact(rationale)
        with self._lock:
            item = rules.add_item(self._connection, kind, target, statement, rationale, now)
        for description in when:
            self.link_rule(kind, item, when=description, store=target)
        return self._rule(kind, item, target)

    def link_rule(
        self,
        kind: str,
        item_id: str,
        *,
        matcher_id: str | None = None,
        when: str | None = None,
        weight: float = 1.0,
        store: str | None = None,
    ) -> str:
        """Link a situation to a rule: an existing matcher, or a new one described by
        ``when`` (embedded now). Returns the matcher's id."""
        from memtrove.memory import rules
        from memtrove.memory.vectors import pack

        if (matcher_id is None) == (when is None):
            raise InvalidQueryError("give either a matcher id or a situation (when), not both")
        now = to_iso(self._clock())
        if matcher_id is None:
            assert when is not None
            when = self.redact(when)
            vector, model = self._memory.embed_text(when)
            with self._lock:
                matcher_id = rules.add_matcher(
                    self._connection,
                    kind,
                    self._memory.resolve_store(store),
                    when,
                    None if vector is None else pack(vector),
                    model,
                    now,
                )
        with self._lock:
            rules.link(self._connection, kind, matcher_id, item_id, weight, now)
        return matcher_id

    def signal_rule(self, kind: str, item_id: str, signal: str, detail: str | None = None) -> float:
        """``confirm``, ``disconfirm`` or ``soft``; returns the new confidence."""
        from memtrove.memory import rules

        detail = None if detail is None else self.redact(detail)
        with self._lock:
            return rules.signal(
                self._connection, kind, item_id, signal, detail, to_iso(self._clock())
            )

    def codify_behavior(self, item_id: str, detail: str | None = None) -> None:
        from memtrove.memory import rules

        detail = None if detail is None else self.redact(detail)
        with self._lock:
            rules.codify(self._connection, item_id, detail, to_iso(self._clock()))

    def rules(self, kind: str, store: str | None = None) -> builtins.list[Rule]:
        from memtrove.memory import rules

        with self._lock:
            return rules.list_rules(self._connection, kind, [self._memory.resolve_store(store)])

    def rule_provenance(
        self, kind: str, item_id: str
    ) -> builtins.list[tuple[str, str | None, str]]:
        from memtrove.memory import rules

        with self._lock:
            return rules.provenance(self._connection, kind, item_id)

    def has_rules(self) -> bool:
        """Whether any store has a rule with a situation to match (asked on every prompt:
        plain SQL, so the engines' modules load only when there are rules)."""
        with self._lock:
            row = self._connection.execute(
                "SELECT EXISTS (SELECT 1 FROM prediction_matchers) "
                "OR EXISTS (SELECT 1 FROM behavior_matchers)"
            ).fetchone()
        return bool(row[0])

    def match_rules(
        self, prompt: str, stores: Sequence[str], threshold: float | None = None
    ) -> builtins.list[RuleMatch]:
        """Rules of ``stores`` surfaced for ``prompt`` (nothing is embedded when the stores
        have no matchers)."""
        from memtrove.memory import rules

        with self._lock:
            if not rules.has_matchers(self._connection, stores):
                return []
        vector, model = self._memory.embed_text(prompt)
        if vector is None or model is None:
            return []
        with self._lock:
            return rules.match_rules(
                self._connection,
                stores,
                vector,
                model,
                rules.SURFACE_THRESHOLD if threshold is None else threshold,
            )

    def _rule(self, kind: str, item_id: str, store: str) -> Rule:
        for rule in self.rules(kind, store):
            if rule.id == item_id:
                return rule
        raise EntryNotFoundError(f"no {kind} {item_id[:80]!r}")
