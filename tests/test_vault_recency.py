"""Direct lookups keep the raw channel score unless the query asks for recent work."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memtrove import Vault
from tests.conftest import write


def _age(path: Path, days: float) -> None:
    moment = time.time() - days * 86400
    os.utime(path, (moment, moment))


def test_recency_intent_ranks_newer_notes_first(vault: Vault, notes: Path) -> None:
    old = write(notes, "old.md", "# Deploy checklist\n\ndeploy deploy deploy checklist steps\n")
    new = write(notes, "new.md", "# Status\n\nfinished the deploy today\n")
    _age(old, 400)
    _age(new, 1)
    vault.add_collection(notes, name="n")
    vault.update()

    plain = vault.search("deploy")
    assert plain[0].path == "old.md"
    assert plain.stages == ["bm25"]

    recent = vault.search("latest deploy")
    assert recent[0].path == "new.md"
    assert recent.stages == ["bm25", "composite"]


def test_recency_intent_applies_to_vector_and_hybrid_lookups(vault: Vault, notes: Path) -> None:
    old = write(notes, "old.md", "# Deploy checklist\n\ndeploy deploy deploy checklist steps\n")
    new = write(notes, "new.md", "# Status\n\nfinished the deploy rollout today\n")
    _age(old, 400)
    _age(new, 1)
    vault.add_collection(notes, name="n")
    vault.update()
    vault.embed()
    for method in (vault.vsearch, vault.hybrid):
        assert method("deploy checklist").stages[-1] != "composite"
        recent = method("latest deploy checklist")
        assert recent.stages[-1] == "composite"
        assert recent[0].path == "new.md"
