"""memtrove: a local-first memory engine for AI coding agents.

The public API is the :class:`Vault` facade, the result types it returns, the model settings
it takes and the errors it raises; everything else is internal and may change.
"""

from __future__ import annotations

from memtrove.errors import (
    AmbiguousReferenceError,
    CollectionError,
    CollectionExistsError,
    CollectionNotFoundError,
    ConfigError,
    DocumentNotFoundError,
    EmbeddingSpaceError,
    ExtensionError,
    InvalidQueryError,
    LeaseHeldError,
    MemtroveError,
    ModelError,
    ModelResponseError,
    ModelUnavailableError,
    SchemaTooNewError,
    VaultBusyError,
    VaultError,
    VaultOpenError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memtrove.index.embedding import EmbedReport
    from memtrove.models.registry import ModelSettings
    from memtrove.results import (
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
        SearchResult,
        SearchResults,
        SessionRecord,
        TargetMatch,
        Timeline,
        UpdateReport,
        VaultStatus,
    )
    from memtrove.vault import Vault

# The Vault pulls in numpy and the retrieval stack (about 0.25 s) and even the result types
# take ~30 ms to define; hooks and the MCP front import this package for its errors and
# version, so everything else loads on first use.
_LAZY = {
    "Vault": "memtrove.vault",
    "EmbedReport": "memtrove.index.embedding",
    "ModelSettings": "memtrove.models.registry",
    "Check": "memtrove.results",
    "Collection": "memtrove.results",
    "CollectionStatus": "memtrove.results",
    "DoctorReport": "memtrove.results",
    "Document": "memtrove.results",
    "DocumentSummary": "memtrove.results",
    "FileIssue": "memtrove.results",
    "IndexStats": "memtrove.results",
    "LifecycleStatus": "memtrove.results",
    "MultiGet": "memtrove.results",
    "RerankHealth": "memtrove.results",
    "SearchResult": "memtrove.results",
    "SearchResults": "memtrove.results",
    "SessionRecord": "memtrove.results",
    "TargetMatch": "memtrove.results",
    "Timeline": "memtrove.results",
    "UpdateReport": "memtrove.results",
    "VaultStatus": "memtrove.results",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memtrove' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "AmbiguousReferenceError",
    "Check",
    "Collection",
    "CollectionError",
    "CollectionExistsError",
    "CollectionNotFoundError",
    "CollectionStatus",
    "ConfigError",
    "DoctorReport",
    "Document",
    "DocumentNotFoundError",
    "DocumentSummary",
    "EmbedReport",
    "EmbeddingSpaceError",
    "ExtensionError",
    "FileIssue",
    "IndexStats",
    "InvalidQueryError",
    "LeaseHeldError",
    "LifecycleStatus",
    "MemtroveError",
    "ModelError",
    "ModelResponseError",
    "ModelSettings",
    "ModelUnavailableError",
    "MultiGet",
    "RerankHealth",
    "SchemaTooNewError",
    "SearchResult",
    "SearchResults",
    "SessionRecord",
    "TargetMatch",
    "Timeline",
    "UpdateReport",
    "Vault",
    "VaultBusyError",
    "VaultError",
    "VaultOpenError",
    "VaultStatus",
    "__version__",
]
