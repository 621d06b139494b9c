"""memtrove: a local-first memory engine for AI coding agents.

The public API is the :class:`Vault` facade, the result types it returns and the errors it
raises; everything else is internal and may change.
"""

from memtrove.errors import (
    AmbiguousReferenceError,
    CollectionError,
    CollectionExistsError,
    CollectionNotFoundError,
    ConfigError,
    DocumentNotFoundError,
    ExtensionError,
    InvalidQueryError,
    MemtroveError,
    SchemaTooNewError,
    VaultBusyError,
    VaultError,
    VaultOpenError,
)
from memtrove.results import (
    Collection,
    CollectionStatus,
    Document,
    DocumentSummary,
    FileIssue,
    SearchResult,
    UpdateReport,
    VaultStatus,
)
from memtrove.vault import Vault

__version__ = "0.1.0"

__all__ = [
    "AmbiguousReferenceError",
    "Collection",
    "CollectionError",
    "CollectionExistsError",
    "CollectionNotFoundError",
    "CollectionStatus",
    "ConfigError",
    "Document",
    "DocumentNotFoundError",
    "DocumentSummary",
    "ExtensionError",
    "FileIssue",
    "InvalidQueryError",
    "MemtroveError",
    "SchemaTooNewError",
    "SearchResult",
    "UpdateReport",
    "Vault",
    "VaultBusyError",
    "VaultError",
    "VaultOpenError",
    "VaultStatus",
    "__version__",
]
