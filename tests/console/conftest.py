"""The console in-process: the REST app (console included) over the example notes."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from tests.api.conftest import JSON, client, demo, docid, local_client  # noqa: F401  (fixtures)


def change_headers(console: TestClient) -> dict[str, str]:
    """What a console change sends: JSON, and the CSRF token a page of ``console`` carries."""
    page = console.get("/ui/sessions").text
    found = re.search(r'name="csrf-token" content="([^"]+)"', page)
    assert found
    return {**JSON, "X-CSRF-Token": found.group(1)}


def section_from(page: str, marker: str) -> str:
    """The page's HTML from ``marker`` to the end of the section holding it."""
    start = page.index(marker)
    return page[start : page.index("</section>", start)]
