"""The memory store's MCP tools as plain functions (``(text, structured)``, like
:mod:`memtrove.mcp.tools`): entries, duplicates, hygiene, the extraction queue and the two
rule engines. ``memory_forget`` stays the document tool; entries are forgotten with
``memory_forget_entry``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtrove.errors import InvalidQueryError
from memtrove.memory.queue import ExtractionQueue
from memtrove.memory.slugs import GLOBAL_STORE

if TYPE_CHECKING:
    from memtrove.vault import Vault

__all__ = [
    "dedup_mark_checked",
    "extraction_done",
    "find_duplicates",
    "get_extraction_payload",
    "hygiene_report",
    "memory_archive",
    "memory_forget_entry",
    "memory_recall",
    "memory_remember",
    "rule_add",
    "rule_codify",
    "rule_link",
    "rule_list",
    "rule_signal",
]

ToolResult = tuple[str, dict[str, Any]]


def memory_remember(
    vault: Vault,
    queue: ExtractionQueue,
    label: str,
    content: str,
    store: str | None,
    branch: str | None,
    confidence: int | None,
    overwrite: bool,
    session_id: str | None,
) -> ToolResult:
    result = vault.memory.remember(label, content, store, branch, confidence, overwrite)
    drained = queue.drain(session_id) if session_id else 0
    entry = result.entry
    lines = [f"[{'remembered' if result.created else 'overwrote'}] {entry.store} :: {entry.label}"]
    lines += [
        f"similar: {near.label} ({near.score:.2f}); check with find_duplicates"
        for near in result.similar
    ]
    if drained:
        lines.append(f"extraction queue cleared ({drained} tool call(s))")
    data = result.to_dict() | {"drained": drained}
    return "\n".join(lines), data


def memory_recall(
    vault: Vault, query: str, store: str | None, branch: str | None, limit: int
) -> ToolResult:
    found = vault.memory.recall(query, store, branch, limit)
    if not found:
        return "No entries found.", {"entries": []}
    lines = []
    for item in found:
        entry = item.entry
        lines.append(f"[{item.score:.2f}] {entry.store} :: {entry.label}")
        lines.extend(f"  {line}" for line in entry.content.splitlines()[:20])
    return "\n".join(lines), {"entries": [item.to_dict() for item in found]}


def memory_forget_entry(vault: Vault, label: str, store: str | None) -> ToolResult:
    entry = vault.memory.forget_entry(label, store)
    return (
        f"[forgotten] {entry.store} :: {entry.label} (kept as an earlier version)",
        {"forgotten": entry.to_dict()},
    )


def memory_archive(vault: Vault, label: str, store: str | None, restore: bool) -> ToolResult:
    entry = vault.memory.archive_entry(label, store, archived=not restore)
    verb = "restored" if restore else "archived"
    return f"[{verb}] {entry.store} :: {entry.label}", {verb: entry.to_dict()}


def find_duplicates(vault: Vault, store: str | None, threshold: float) -> ToolResult:
    report = vault.memory.find_duplicates(store, threshold)
    text = "\n".join(report.lines()) or f"No duplicate candidates in store {report.store}."
    return text, report.to_dict()


def dedup_mark_checked(
    vault: Vault, label_a: str, label_b: str, status: str, store: str | None
) -> ToolResult:
    first, second = vault.memory.dedup_mark_checked(label_a, label_b, status, store)
    target = vault.memory.resolve_store(store)
    return (
        f"[checked] {target} :: {first} <-> {second} -> {status}",
        {"store": target, "slug_a": first, "slug_b": second, "status": status},
    )


def hygiene_report(vault: Vault, store: str | None, worktree: str | None) -> ToolResult:
    report = vault.memory.hygiene(store, Path(worktree) if worktree else None)
    return "\n".join(report.lines()) or "Store is healthy.", report.to_dict()


def get_extraction_payload(vault: Vault, queue: ExtractionQueue, session_id: str) -> ToolResult:
    if not session_id.strip():
        raise InvalidQueryError("session_id is required")
    payload = queue.payload(session_id, vault.memory.resolve_store(), GLOBAL_STORE)
    if payload is None:
        return "null", {"payload": None}
    return json.dumps(payload, ensure_ascii=False), {"payload": payload}


def extraction_done(vault: Vault, queue: ExtractionQueue, session_id: str | None) -> ToolResult:
    if not session_id:
        return "[acknowledged]", {"drained": 0}
    drained = queue.drain(session_id)
    return f"[acknowledged] {drained} queued tool call(s) cleared", {"drained": drained}


def rule_add(
    vault: Vault,
    kind: str,
    statement: str,
    rationale: str | None,
    when: list[str] | None,
    store: str | None,
) -> ToolResult:
    rule = vault.rules.add_rule(kind, statement, rationale=rationale, when=when or (), store=store)
    return f"[added] {kind} {rule.id}: {rule.statement}", rule.to_dict()


def rule_link(
    vault: Vault,
    kind: str,
    item_id: str,
    matcher_id: str | None,
    when: str | None,
    weight: float,
    store: str | None,
) -> ToolResult:
    matcher = vault.rules.link_rule(
        kind, item_id, matcher_id=matcher_id, when=when, weight=weight, store=store
    )
    return f"[linked] {matcher} -> {item_id}", {"matcher_id": matcher, "id": item_id}


def rule_signal(
    vault: Vault, kind: str, item_id: str, signal: str, detail: str | None
) -> ToolResult:
    value = vault.rules.signal_rule(kind, item_id, signal, detail)
    return f"[{signal}] {kind} {item_id}: confidence {value:.3f}", {
        "id": item_id,
        "confidence": value,
    }


def rule_codify(vault: Vault, item_id: str, detail: str | None) -> ToolResult:
    vault.rules.codify_behavior(item_id, detail)
    return f"[codified] behavior {item_id}", {"id": item_id}


def rule_list(vault: Vault, kind: str, store: str | None) -> ToolResult:
    found = vault.rules.rules(kind, store)
    if not found:
        return f"No {kind}s.", {"rules": []}
    lines = [
        f"{rule.id} {rule.confidence:.2f} (+{rule.confirm_count:g}/-{rule.disconfirm_count:g}) "
        f"{rule.statement}"
        for rule in found
    ]
    return "\n".join(lines), {"rules": [rule.to_dict() for rule in found]}
