"""The dataclasses memtrove returns (JSON-ready through ``to_dict``)."""

from typing import TYPE_CHECKING, Any

from memtrove.results.core import (
    Check,
    Collection,
    CollectionStatus,
    DoctorReport,
    Document,
    DocumentSummary,
    FileIssue,
    IndexStats,
    LifecycleStatus,
    MultiGet,
    RerankHealth,
    RerankPair,
    SearchResult,
    SearchResults,
    SecretsReport,
    SessionRecord,
    SkipReason,
    StaleAfterDays,
    TargetMatch,
    Timeline,
    UpdateReport,
    VaultStatus,
)

if TYPE_CHECKING:
    from memtrove.results.memory import (
        DuplicatePair,
        DuplicateReport,
        EntryVersion,
        HygieneReport,
        MemoryEntry,
        RecalledEntry,
        RememberResult,
        Rule,
        RuleMatch,
        RuleMatcher,
        SimilarEntry,
    )

__all__ = [
    "Check",
    "Collection",
    "CollectionStatus",
    "DoctorReport",
    "Document",
    "DocumentSummary",
    "DuplicatePair",
    "DuplicateReport",
    "EntryVersion",
    "FileIssue",
    "HygieneReport",
    "IndexStats",
    "LifecycleStatus",
    "MemoryEntry",
    "MultiGet",
    "RecalledEntry",
    "RememberResult",
    "RerankHealth",
    "RerankPair",
    "Rule",
    "RuleMatch",
    "RuleMatcher",
    "SearchResult",
    "SearchResults",
    "SecretsReport",
    "SessionRecord",
    "SimilarEntry",
    "SkipReason",
    "StaleAfterDays",
    "TargetMatch",
    "Timeline",
    "UpdateReport",
    "VaultStatus",
]


def __getattr__(name: str) -> Any:
    """The memory store's types load on first use (defining dataclasses costs ~1 ms each,
    and hooks import this package)."""
    if name in _MEMORY:
        from memtrove.results import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'memtrove.results' has no attribute {name!r}")


_MEMORY = frozenset(
    {
        "DuplicatePair",
        "DuplicateReport",
        "EntryVersion",
        "HygieneReport",
        "MemoryEntry",
        "RecalledEntry",
        "RememberResult",
        "Rule",
        "RuleMatch",
        "RuleMatcher",
        "SimilarEntry",
    }
)
