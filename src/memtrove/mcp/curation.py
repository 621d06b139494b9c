"""The curation tools: pin, snooze and forget the document a query names (no SDK in here).

They act only on a confident match (``vault.curation.find_target``: an exact reference, or
a top score of at least 0.7, or a lead of 0.2 over the next candidate). Otherwise nothing
changes and the candidates are listed, so a vague query never touches the wrong document.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memtrove.errors import DocumentNotFoundError
from memtrove.mcp.format import document_header, result_lines
from memtrove.results import Document, SearchResult

if TYPE_CHECKING:
    from memtrove.results import TargetMatch
    from memtrove.vault import Vault

__all__ = ["memory_forget", "memory_pin", "memory_snooze"]

ToolResult = tuple[str, dict[str, Any]]


def memory_pin(vault: Vault, query: str, unpin: bool = False) -> ToolResult:
    """Pin (or unpin) the document ``query`` names, so it always ranks up."""
    verb = "unpin" if unpin else "pin"
    return _curate(vault, query, verb, lambda reference: vault.curation.pin(reference, unpin=unpin))


def memory_snooze(vault: Vault, query: str, until: str | None = None) -> ToolResult:
    """Hide the document ``query`` names from context surfacing until ``until`` (or unsnooze)."""
    verb = "snooze" if until else "unsnooze"
    return _curate(
        vault, query, verb, lambda reference: vault.curation.snooze(reference, until or None)
    )


def memory_forget(vault: Vault, query: str, confirm: bool = True) -> ToolResult:
    """Deactivate the document ``query`` names (its text stays); ``confirm=False`` previews."""
    if confirm:
        return _curate(vault, query, "forget", vault.curation.forget)
    match = _match(vault, query)
    data: dict[str, Any] = {"action": "forget", "changed": False, "document": None}
    data |= match.to_dict()
    if not match.confident or match.target is None:
        return _unsure(query, "forget", match), data
    return f"Would forget {result_lines([match.target])[0]} (confirm=true to do it)", data


_PAST = {
    "pin": "pinned",
    "unpin": "unpinned",
    "snooze": "snoozed",
    "unsnooze": "unsnoozed",
    "forget": "forgotten",
}


def _match(vault: Vault, query: str) -> TargetMatch:
    match = vault.curation.find_target(query)
    if match.target is None:
        raise DocumentNotFoundError(f"no document matches {query!r}")
    return match


def _reference(result: SearchResult) -> str:
    return f"{result.collection}/{result.path}"


def _curate(vault: Vault, query: str, verb: str, act: Callable[[str], Document]) -> ToolResult:
    """Act on the document ``query`` names when the match is confident; else list candidates."""
    match = _match(vault, query)
    data: dict[str, Any] = {"action": verb, "changed": False, "document": None}
    data |= match.to_dict()
    if not match.confident or match.target is None:
        return _unsure(query, verb, match), data
    document = act(_reference(match.target))
    data["changed"] = True
    data["document"] = {k: v for k, v in document.to_dict().items() if k != "body"}
    done = _PAST[verb].capitalize()
    if verb == "snooze":
        done += f" until {document.snoozed_until}"
    text = f"{done}: {document_header(document)}"
    if verb == "forget":
        text += " (its text stays in the vault)"
    return text, data


def _unsure(query: str, verb: str, match: TargetMatch) -> str:
    lines = [
        f"Not sure which document {query!r} means (best matches by {match.method}); "
        f"nothing was {_PAST[verb]}. Candidates:",
        *result_lines(match.candidates),
        f"Call memory_{verb.removeprefix('un')} again with the #docid or collection/path.",
    ]
    return "\n".join(lines)
