"""The exceptions memtrove raises.

Every error a user can cause derives from :class:`MemtroveError`, carries a one-line
message fit to print as is, and an HTTP-style ``status`` for the REST interface::

    MemtroveError (500)
    ├── ConfigError (400)                  unreadable or invalid config.yaml / settings
    ├── CollectionError (400)
    │   ├── CollectionNotFoundError (404)  no collection of that name
    │   └── CollectionExistsError (409)    name already taken
    ├── DocumentNotFoundError (404)        docid or collection/path unknown
    │   └── EntryNotFoundError (404)       no memory entry of that label in the store
    ├── EntryExistsError (409)             the label names an entry; overwrite was not asked
    ├── AmbiguousReferenceError (409)      a docid or hash prefix naming several documents
    ├── InvalidQueryError (400)            a search request that cannot be run
    ├── ModelError (502)                   a model service failed
    │   ├── ModelUnavailableError (503)    unreachable, or cooling down after a transport error
    │   └── ModelResponseError (502)       answered, but not sanely (bad JSON, NaN, wrong size)
    ├── EmbeddingSpaceError (409)          vectors of another model or dimension are stored
    ├── LeaseHeldError (409)               another process runs the same job (e.g. embedding)
    ├── PortableFormatError (400)          an export file (or ClawMem vault) that cannot be read
    ├── VaultNotEmptyError (409)           an import into a vault that already holds data
    └── VaultError (500)
        ├── VaultOpenError (500)           the file cannot be opened as a vault
        ├── VaultNotFoundError (404)       no vault at that path (a read never creates one)
        ├── SchemaTooNewError (409)        written by a newer memtrove
        ├── ExtensionError (500)           sqlite-vec cannot be loaded
        └── VaultBusyError (503)           the vault stayed locked past every retry

Interfaces convert these to their own shape (exit code, tool error, JSON body) at the
edge; nothing below the interfaces catches and re-words them.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousReferenceError",
    "CollectionError",
    "CollectionExistsError",
    "CollectionNotFoundError",
    "ConfigError",
    "DocumentNotFoundError",
    "EmbeddingSpaceError",
    "EntryExistsError",
    "EntryNotFoundError",
    "ExtensionError",
    "InvalidQueryError",
    "LeaseHeldError",
    "MemtroveError",
    "ModelError",
    "ModelResponseError",
    "ModelUnavailableError",
    "PortableFormatError",
    "SchemaTooNewError",
    "VaultBusyError",
    "VaultError",
    "VaultNotEmptyError",
    "VaultNotFoundError",
    "VaultOpenError",
]


class MemtroveError(Exception):
    """Base class: a failure memtrove can explain in one line."""

    status: int = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(MemtroveError):
    status = 400


class CollectionError(MemtroveError):
    status = 400


class CollectionNotFoundError(CollectionError):
    status = 404


class CollectionExistsError(CollectionError):
    status = 409


class DocumentNotFoundError(MemtroveError):
    status = 404


class EntryNotFoundError(DocumentNotFoundError):
    status = 404


class EntryExistsError(MemtroveError):
    status = 409


class AmbiguousReferenceError(MemtroveError):
    status = 409


class InvalidQueryError(MemtroveError):
    status = 400


class ModelError(MemtroveError):
    status = 502


class ModelUnavailableError(ModelError):
    status = 503


class ModelResponseError(ModelError):
    status = 502


class EmbeddingSpaceError(MemtroveError):
    status = 409


class LeaseHeldError(MemtroveError):
    status = 409


class PortableFormatError(MemtroveError):
    status = 400


class VaultNotEmptyError(MemtroveError):
    status = 409


class VaultError(MemtroveError):
    status = 500


class VaultOpenError(VaultError):
    status = 500


class VaultNotFoundError(VaultError):
    status = 404


class SchemaTooNewError(VaultError):
    status = 409


class ExtensionError(VaultError):
    status = 500


class VaultBusyError(VaultError):
    status = 503
