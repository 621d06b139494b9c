"""memtrove: a local-first memory engine for AI coding agents.

The public API is the :class:`Vault` facade, the result types it returns, the model settings
it takes and the errors it raises; everything else is internal and may change.
"""

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
    RerankHealth,
    SearchResult,
    SearchResults,
    UpdateReport,
    VaultStatus,
)
from memtrove.vault import Vault

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
    "InvalidQueryError",
    "LeaseHeldError",
    "MemtroveError",
    "ModelError",
    "ModelResponseError",
    "ModelSettings",
    "ModelUnavailableError",
    "RerankHealth",
    "SchemaTooNewError",
    "SearchResult",
    "SearchResults",
    "UpdateReport",
    "Vault",
    "VaultBusyError",
    "VaultError",
    "VaultOpenError",
    "VaultStatus",
    "__version__",
]
