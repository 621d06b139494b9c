"""The guard over real prose: Go design documents and Kubernetes enhancement proposals
(../shared/bench/prose, read at test time; skipped without it) and the example vault.
Folding look-alikes, refusing mixed-script words and reading names as words must not
filter documents people wrote: their curly quotes, dashes, math, Greek letters, Chinese
comments and names stay unflagged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtrove.index.markdown import document_title, parse_markdown
from memtrove.security.guard import find_injection, sanitize
from tests.conftest import EXAMPLES

PROSE = Path(
    os.environ.get(
        "MEMTROVE_PROSE", Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose"
    )
)
# The one phrase in the corpus the override pattern matches as written ("... cannot
# override these rules"): a finding on plain ASCII words, not one of look-alikes.
KNOWN = {("k8s-keps", "sig-network/2091-admin-network-policy/README.md"): "override"}


def _documents(root: Path, every: int) -> list[tuple[str, str, str]]:
    files = sorted(root.rglob("*.md"))
    return [(root.name, f.relative_to(root).as_posix(), f.read_text("utf-8", "replace"))
            for f in files[::every]]  # fmt: skip


def _findings(collection: str, path: str, text: str) -> list[str]:
    found = []
    title = document_title(parse_markdown(text), path)
    if sanitize(title) is None:
        found.append(f"title {title!r}: {find_injection(title, limit=None, names=True)}")
    if sanitize(f"{collection}/{path}") is None:
        found.append(f"path: {find_injection(f'{collection}/{path}', limit=None, names=True)}")
    body = find_injection(text)
    if body is not None and KNOWN.get((collection, path)) != body:
        found.append(f"body: {body}")
    for paragraph in text.split("\n\n"):
        snippet = paragraph.strip()[:300]
        if snippet and sanitize(snippet) is None and KNOWN.get((collection, path)) is None:
            found.append(f"snippet {snippet[:80]!r}")
    return found


@pytest.mark.parametrize(("corpus", "every"), [("go-proposals", 1), ("k8s-keps", 3)])
def test_real_design_documents_are_not_filtered(corpus: str, every: int) -> None:
    root = PROSE / corpus
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    documents = _documents(root, every)
    assert len(documents) > 100
    assert sum(not text.isascii() for _, _, text in documents) > 50  # the non-ASCII path runs
    filtered = {path: f for _, path, text in documents if (f := _findings(corpus, path, text))}
    assert filtered == {}


def test_the_example_vault_is_not_filtered() -> None:
    documents = _documents(EXAMPLES, 1)
    filtered = {path: f for _, path, text in documents if (f := _findings("demo", path, text))}
    assert filtered == {}
