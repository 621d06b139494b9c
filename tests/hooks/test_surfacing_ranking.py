"""context-surfacing's calibrated ranking: collapsed copies, unsurfaced collections, the
per-session dedupe and "where were we?" (in-process, real vaults)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memtrove.vault import Vault
from tests.conftest import write
from tests.hooks.conftest import context_of, payload, run_hook

NOTE = "# Thumbnail cache sizing\n\nThe thumbnail cache keeps 512 MB of decoded renditions.\n"


def surface(env: dict[str, str], prompt: str, session: str = "s-1", **extra: Any) -> str:
    raw = payload("user_prompt_submit.json", prompt=prompt, session_id=session, **extra)
    return context_of(run_hook("context-surfacing", raw, env))


def _vault(env: dict[str, str]) -> Vault:
    return Vault.open(env["MEMTROVE_VAULT"], config_dir=env["MEMTROVE_CONFIG_DIR"])


def test_identical_copies_are_injected_once_with_their_other_paths(
    hook_env: dict[str, str], tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    write(docs, "en/cache.md", NOTE)
    write(docs, "fr/cache.md", NOTE)
    write(docs, "other.md", "# Upload limits\n\nUploads stop at 200 MB per file.\n")
    with _vault(hook_env) as vault:
        vault.add_collection(docs, name="docs")
        vault.update()
    context = surface(hook_env, "How big is the thumbnail cache of decoded renditions?")
    assert context.count("Thumbnail cache sizing") == 1
    assert "(also at: docs/fr/cache.md)" in context or "(also at: docs/en/cache.md)" in context


def test_a_collection_set_not_to_surface_is_searchable_but_never_injected(
    hook_env: dict[str, str], tmp_path: Path
) -> None:
    quiet, loud = tmp_path / "quiet", tmp_path / "loud"
    write(quiet, "cache.md", NOTE)
    write(loud, "cache-ops.md", "# Thumbnail cache operations\n\nFlush the thumbnail cache "
          "of decoded renditions with `cachectl flush`.\n")  # fmt: skip
    with _vault(hook_env) as vault:
        vault.add_collection(quiet, name="quiet", surface=False)
        vault.add_collection(loud, name="loud")
        vault.update()
        assert "quiet" in {r.collection for r in vault.search("thumbnail cache renditions")}
    context = surface(hook_env, "How big is the thumbnail cache of decoded renditions?")
    assert "loud/cache-ops.md" in context and "quiet/" not in context


def test_the_prompt_dedupe_is_per_session(hook_env: dict[str, str], tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "cache.md", NOTE)
    with _vault(hook_env) as vault:
        vault.add_collection(docs, name="docs")
        vault.update()
    prompt = "How big is the thumbnail cache of decoded renditions?"
    assert "docs/cache.md" in surface(hook_env, prompt, session="one")
    assert surface(hook_env, prompt, session="one") == ""  # the same session: deduped
    assert "docs/cache.md" in surface(hook_env, prompt, session="two")  # another session


def test_where_were_we_surfaces_the_newest_handoff_first(
    hook_env: dict[str, str], tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    for day, topic in (("2026-01-05", "billing export"), ("2026-03-02", "upload retries")):
        write(docs, f"handoffs/{day}.md", f"---\ntype: handoff\ndate: {day}\n---\n# Handoff "
              f"{day}\n\nWorked on the {topic}; next: finish the tests for it.\n")  # fmt: skip
    write(docs, "decisions/queue.md", "---\ntype: decision\ndate: 2026-03-01\n---\n# Job "
          "queue\n\nWe chose a Postgres-backed job queue for thumbnails.\n")  # fmt: skip
    with _vault(hook_env) as vault:
        vault.add_collection(docs, name="docs")
        vault.update()
    context = surface(hook_env, "where were we?", session="resume")
    paths = [line for line in context.splitlines() if line.startswith("docs/")]
    assert paths and paths[0] == "docs/handoffs/2026-03-02.md", paths
