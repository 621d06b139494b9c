"""The REST answers' JSON: stored text marked as data (see :mod:`memtrove.results.marking`).

Every JSON object a route answers that holds stored text (a title, path, snippet, body,
content, text or summary, at any depth; ``/search`` and ``/retrieve`` always) carries
``"untrusted": true`` at the top level, and each
item whose title, path, snippet, body or content the injection guard flags carries
``"flagged": "instruction-like text"``. Error answers (``{"error": ...}``) and the warm
path's answers (the CLI's and the hooks' own, not a client's) are left as they are.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from memtrove.results.marking import mark

__all__ = ["DataResponse"]


class DataResponse(JSONResponse):
    """A JSON answer whose object is marked as vault data."""

    def render(self, content: Any) -> bytes:
        if isinstance(content, dict) and "error" not in content:
            content = mark(content, always=False)
        return super().render(content)
