"""The console in-process: the REST app (console included) over the example notes."""

from __future__ import annotations

from tests.api.conftest import client, demo, docid, local_client  # noqa: F401  (fixtures)
