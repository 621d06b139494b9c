"""What the Vault's areas share: the names of the callables the Vault gives them, and the
choice of the configured LLM that several of them make.

Each area is still constructed with exactly what it uses, named in its own constructor;
these aliases only name the recurring types of those parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from memtrove.models.protocols import LLM
    from memtrove.models.registry import Models
    from memtrove.results import Document

__all__ = ["Clock", "Lookup", "Redact", "chosen_llm"]

Clock: TypeAlias = Callable[[], datetime]  # the vault's clock, read at each call
Redact: TypeAlias = Callable[[str], str]  # the redaction of stored text
Lookup: TypeAlias = Callable[[str], "Document"]  # a document by ref, as :meth:`Vault.get`


def chosen_llm(models: Models, use_llm: bool) -> LLM | None:
    """The configured LLM when there is one and ``use_llm``; None means the heuristic path."""
    return models.llm if use_llm and models.has_llm else None
