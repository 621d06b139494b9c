"""The values memtrove returns (JSON-ready through ``to_dict``)."""

from typing import TYPE_CHECKING, Any

from memtrove.results.core import (
    Collection,
    Document,
    DocumentSummary,
    SearchResult,
    SearchResults,
    SessionRecord,
    StaleAfterDays,
    TargetMatch,
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
    from memtrove.results.reports import (
        Check,
        CollectionStatus,
        DoctorReport,
        FileIssue,
        IndexStats,
        LifecycleStatus,
        MultiGet,
        RerankHealth,
        RerankPair,
        SecretsReport,
        SkipReason,
        Timeline,
        UpdateReport,
        VaultStatus,
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
    """The memory store's and the reports' types load on first use (the memory store's are
    dataclasses, ~1 ms each to define; hooks and searches import this package)."""
    if name in _MEMORY:
        from memtrove.results import memory

        return getattr(memory, name)
    if name in _REPORTS:
        from memtrove.results import reports

        return getattr(reports, name)
    raise AttributeError(f"module 'memtrove.results' has no attribute {name!r}")


_REPORTS = frozenset(
    {
        "Check",
        "CollectionStatus",
        "DoctorReport",
        "FileIssue",
        "IndexStats",
        "LifecycleStatus",
        "MultiGet",
        "RerankHealth",
        "RerankPair",
        "SecretsReport",
        "SkipReason",
        "Timeline",
        "UpdateReport",
        "VaultStatus",
    }
)
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
