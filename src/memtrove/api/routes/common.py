"""What the routes share: the vault dependency, docid and pattern checks, documented errors."""

from __future__ import annotations

import re
from typing import Annotated, Any, cast

from fastapi import Depends, Path, Request

from memtrove.api.schemas import ErrorBody
from memtrove.errors import InvalidQueryError
from memtrove.vault import Vault

__all__ = ["ERRORS", "DocidPath", "VaultDependency", "check_pattern", "reference"]

_DOCID = re.compile(r"[0-9a-fA-F]{6,64}")
# A drive letter (C:), a home folder (~) or a leading slash: absolute paths, never a vault ref.
_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:|~|[/\\])")
_SEGMENT_SEPARATORS = re.compile(r"[/\\]")


async def vault_of(request: Request) -> Vault:
    """The Vault the app was created with (async: no thread pool hop just to fetch it)."""
    return cast(Vault, request.app.state.vault)


VaultDependency = Annotated[Vault, Depends(vault_of)]
DocidPath = Annotated[
    str,
    Path(
        description=(
            "The document's docid (6 or more hexadecimal characters, unique in the vault), "
            "or a prefix of exactly one document's docid or content hash (6-64 hex); a "
            "prefix that names several documents is a 409 listing them."
        ),
        examples=["e1745d"],
    ),
]

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Bad input (a docid, pattern or date)."},
    404: {"model": ErrorBody, "description": "No such document, collection or route."},
    422: {"model": ErrorBody, "description": "The request does not validate."},
}


def reference(docid: str) -> str:
    """The Vault reference for a docid from a URL; anything but 6-64 hex is a 400.

    Docids are 6 hex, or longer for a document whose first 6 another one holds (see
    :mod:`memtrove.index.documents`); which document a prefix names is the Vault's to say.
    """
    if not _DOCID.fullmatch(docid):
        raise InvalidQueryError(f"a docid is 6-64 hexadecimal characters, got {docid[:80]!r}")
    return "#" + docid.lower()


def check_pattern(pattern: str) -> str:
    """A ``multi_get`` pattern with no way out of the vault: ``..`` and absolute paths are a 400.

    The pattern is a glob over ``collection/path`` or a comma-separated list of references;
    each item is checked (after a ``memtrove://`` prefix).
    """
    if not pattern.strip():
        raise InvalidQueryError("pattern must not be empty")
    if "\x00" in pattern:
        raise InvalidQueryError("pattern must not contain NUL characters")
    for item in pattern.split(","):
        text = item.strip().removeprefix("memtrove://")
        if _ABSOLUTE.match(text):
            raise InvalidQueryError(f"absolute paths are refused: {item.strip()[:80]!r}")
        if ".." in _SEGMENT_SEPARATORS.split(text):
            raise InvalidQueryError(f"'..' is refused in a pattern: {item.strip()[:80]!r}")
    return pattern.strip()
