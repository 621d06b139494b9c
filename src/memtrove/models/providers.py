"""Provider parameters of cloud embedding services, recognised by their URL.

Retrieval-tuned cloud embedders embed a passage and a query differently when told which is
which, and truncate over-long inputs themselves when asked. memtrove sends these fields when
``MEMTROVE_EMBED_URL`` names the provider's API host:

======== =================================================== ===============================
provider every request (documents)                            queries
======== =================================================== ===============================
Jina     ``task: retrieval.passage``, ``truncate: true``     ``task: retrieval.query``
Voyage   ``input_type: document``                            ``input_type: query``
Cohere   ``input_type: search_document``, ``truncate: END``  ``input_type: search_query``
======== =================================================== ===============================

OpenAI needs none (``MEMTROVE_EMBED_DIMENSIONS`` is sent as ``dimensions`` when set); any
other server (llama-server, Ollama, vLLM, TEI) gets none. A proxy in front of a provider
(another host) is named with ``MEMTROVE_EMBED_PROVIDER`` (``none`` sends nothing).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

__all__ = ["NO_PROVIDER", "PROVIDERS", "provider_bodies", "provider_of"]

NO_PROVIDER = "none"

# provider -> (host suffix, fields of every request, fields laid over them for queries)
PROVIDERS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "jina": (
        "jina.ai",
        {"task": "retrieval.passage", "truncate": True},
        {"task": "retrieval.query"},
    ),
    "voyage": ("voyageai.com", {"input_type": "document"}, {"input_type": "query"}),
    "cohere": (
        "cohere.com",
        {"input_type": "search_document", "truncate": "END"},
        {"input_type": "search_query"},
    ),
}
_ALIASES = {"cohere.ai": "cohere"}


def provider_of(url: str) -> str | None:
    """The provider whose API host ``url`` names (``jina``, ``voyage``, ``cohere``), else None."""
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    for name, (suffix, _, _) in PROVIDERS.items():
        if host == suffix or host.endswith(f".{suffix}"):
            return name
    for suffix, name in _ALIASES.items():
        if host == suffix or host.endswith(f".{suffix}"):
            return name
    return None


def provider_bodies(url: str, provider: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(fields for every request, fields for queries) of ``provider`` (a name of
    :data:`PROVIDERS`, or ``"none"``), else of the provider ``url`` names."""
    provider = provider or provider_of(url)
    if provider is None or provider == NO_PROVIDER:
        return {}, {}
    _, every, queries = PROVIDERS[provider]
    return dict(every), dict(queries)
