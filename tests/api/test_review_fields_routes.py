"""The review fields where a document's frontmatter-derived fields are shown: ``GET
/documents/{docid}``, ``GET /documents?pattern=`` and ``memtrove get --json`` (a process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from memtrove import Vault
from tests.conftest import write

RUNBOOK = (
    "---\nreview_by: 2027-02-01\ndomain: auth\nworkstream: mobile sync\n---\n# Runbook\n\nRotate.\n"
)
FIELDS = {"review_by": "2027-02-01", "domain": "auth", "workstream": "mobile sync"}


def _indexed(demo: Vault, example_copy: Path) -> str:
    write(example_copy, "runbooks/rotation.md", RUNBOOK)
    demo.update()
    return demo.get("demo/runbooks/rotation.md").docid


def test_a_document_answer_carries_its_review_fields(
    client: TestClient, demo: Vault, example_copy: Path
) -> None:
    docid = _indexed(demo, example_copy)
    document = client.get(f"/documents/{docid}").json()
    assert {key: document[key] for key in FIELDS} == FIELDS
    listed = client.get("/documents", params={"pattern": "demo/runbooks/*.md"}).json()
    assert [{key: d[key] for key in FIELDS} for d in listed["documents"]] == [FIELDS]
    other = client.get("/documents", params={"pattern": "demo/decisions/0001*.md"}).json()
    assert {key: other["documents"][0][key] for key in FIELDS} == dict.fromkeys(FIELDS)


def test_get_json_carries_the_review_fields(
    demo: Vault, example_copy: Path, tmp_path: Path
) -> None:
    _indexed(demo, example_copy)
    env = {
        **os.environ,
        "MEMTROVE_VAULT": str(tmp_path / "api.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(tmp_path / "api-config"),
    }
    for lean in ("", "off"):  # the fast read path and the full CLI print the same
        done = subprocess.run(
            [sys.executable, "-m", "memtrove", "get", "demo/runbooks/rotation.md", "--json"],
            env={**env, "MEMTROVE_LEAN": lean},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        shown = json.loads(done.stdout)
        assert {key: shown[key] for key in FIELDS} == FIELDS
