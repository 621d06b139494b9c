"""``reflect``: what recent decisions keep saying, recent antipatterns, strong co-activations.

Over the decision documents whose effective time falls in the last ``days`` (default 14):
the 2- and 3-word phrases used at least 3 times (phrases that start or end with a stopword
are left out, and a 2-word phrase only inside one 3-word phrase of the same count is not
listed twice); then the antipattern documents of the same period, and document pairs
surfaced together at least 3 times (``co_activations``).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from memtrove.db.connection import Connection
from memtrove.text import STOPWORDS, to_iso

__all__ = ["MIN_COUNT", "Reflection", "reflect"]

MIN_COUNT = 3
MAX_PHRASES = 20
MAX_ITEMS = 10
MAX_BODY_CHARS = 20_000  # of each decision: phrases repeat early, and memory stays bounded
_WORD = re.compile(r"[a-z][a-z0-9'+#.-]*[a-z0-9+#]|[a-z]")


class Reflection(NamedTuple):
    """``patterns``: the active consolidated observations Phase 2 merged, most proofs first
    (filled in by the vault, which owns the consolidation table's reader)."""

    days: int
    decisions: int
    phrases: list[dict[str, Any]]
    antipatterns: list[dict[str, Any]]
    co_activations: list[dict[str, Any]]
    patterns: tuple[dict[str, Any], ...] = ()

    def text(self) -> str:
        lines = [f"reflection over {self.days} day(s): {self.decisions} decision document(s)"]
        lines.append("recurring phrases:" if self.phrases else "recurring phrases: none")
        lines += [f"  {p['count']:>3}  {p['phrase']}" for p in self.phrases]
        lines.append("antipatterns:" if self.antipatterns else "antipatterns: none")
        lines += [f"  #{a['docid']}  {a['title']}  ({a['date']})" for a in self.antipatterns]
        lines.append("co-activations:" if self.co_activations else "co-activations: none")
        lines += [
            f"  {c['count']:>3}  {c['first']}  <->  {c['second']}" for c in self.co_activations
        ]
        lines.append("consolidated patterns:" if self.patterns else "consolidated patterns: none")
        lines += [
            f"  {p['proof_count']:>3}x {p['observation']}  ({p['trend']}, {p['collection']})"
            for p in self.patterns
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "patterns": list(self.patterns)}


def _phrases(bodies: list[str]) -> list[dict[str, Any]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for body in bodies:
        tokens = _WORD.findall(body[:MAX_BODY_CHARS].lower())
        for size in (2, 3):
            for i in range(len(tokens) - size + 1):
                gram = tuple(tokens[i : i + size])
                if gram[0] in STOPWORDS or gram[-1] in STOPWORDS:
                    continue
                counts[gram] += 1
    frequent = {gram: n for gram, n in counts.items() if n >= MIN_COUNT}
    triples = [gram for gram in frequent if len(gram) == 3]
    kept: list[dict[str, Any]] = []
    for gram, count in frequent.items():
        if len(gram) == 2 and any(
            frequent[t] == count and (t[:2] == gram or t[1:] == gram) for t in triples
        ):
            continue
        kept.append({"phrase": " ".join(gram), "count": count})
    kept.sort(
        key=lambda item: (-int(item["count"]), -len(str(item["phrase"])), str(item["phrase"]))
    )
    return kept[:MAX_PHRASES]


def reflect(connection: Connection, days: int, now: datetime) -> Reflection:
    """See the module doc; ``days`` is 1 to 3650."""
    cutoff = to_iso(now - timedelta(days=days))
    decisions = connection.execute(
        "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash WHERE d.active = 1 "
        "AND d.content_type = 'decision' AND COALESCE(d.authored_at, d.modified_at) >= ?",
        (cutoff,),
    ).fetchall()
    antipatterns = [
        {"docid": r[0], "title": r[1], "collection": r[2], "path": r[3], "date": str(r[4])[:10]}
        for r in connection.execute(
            "SELECT docid, title, collection, path, COALESCE(authored_at, modified_at) AS t "
            "FROM documents WHERE active = 1 AND content_type = 'antipattern' AND "
            "COALESCE(authored_at, modified_at) >= ? ORDER BY t DESC LIMIT ?",
            (cutoff, MAX_ITEMS),
        ).fetchall()
    ]
    pairs = [
        {"first": r[0], "second": r[1], "count": int(r[2]), "last_seen": r[3]}
        for r in connection.execute(
            "SELECT a.title, b.title, c.count, c.last_seen FROM co_activations c "
            "JOIN documents a ON a.id = c.doc_a JOIN documents b ON b.id = c.doc_b "
            "WHERE c.count >= ? AND a.active = 1 AND b.active = 1 "
            "ORDER BY c.count DESC, c.last_seen DESC LIMIT ?",
            (MIN_COUNT, MAX_ITEMS),
        ).fetchall()
    ]
    return Reflection(
        days, len(decisions), _phrases([str(r[0]) for r in decisions]), antipatterns, pairs
    )
