"""context-surfacing is not crowded out by memtrove's own notes: 50 handoffs of sessions
that talked of nothing but the question do not keep the user's matching notes out."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtrove.capture.turns import Turn
from memtrove.vault import Vault
from tests.conftest import write
from tests.hooks.conftest import context_of, payload, run_hook


@pytest.mark.parametrize(
    "prompt",
    [
        "How long is the grace window for renewals?",
        "grace window grace window",
        "what did we decide about the renewal grace window",
    ],
)
def test_handoffs_do_not_crowd_out_the_notes(
    hook_env: dict[str, str], tmp_path: Path, prompt: str
) -> None:
    notes = tmp_path / "notes"
    for index in range(4):
        write(
            notes,
            f"billing/renewal-{index}.md",
            f"# Renewal rule {index}\n\nRenewals get a grace window of {index + 2} days before "
            "the account is suspended; the grace window starts at the failed charge.\n",
        )
    with Vault.open(hook_env["MEMTROVE_VAULT"], config_dir=hook_env["MEMTROVE_CONFIG_DIR"]) as v:
        v.add_collection(notes, name="notes")
        v.update()
        for index in range(50):
            turns = [
                Turn(
                    f"grace window renewal grace window {index}?",
                    (f"The renewal grace window grace window, again ({index}).",),
                    (),
                )
            ]
            v.capture.write_handoff(f"session-{index:02d}", turns, use_llm=False)
        assert {r.collection for r in v.hybrid(prompt, 10, vectors=False)} == {"_memtrove"}
    raw = payload("user_prompt_submit.json", prompt=prompt, session_id="s-new")
    context = context_of(run_hook("context-surfacing", raw, hook_env))
    assert "Renewal rule" in context, context
    assert "_memtrove/" not in context


@pytest.mark.parametrize("crowd", ["experiments", "notes/old/experiments", "archive"])
def test_what_is_never_injected_does_not_crowd_out_the_notes(
    hook_env: dict[str, str], tmp_path: Path, crowd: str
) -> None:
    notes, other = tmp_path / "notes", tmp_path / "other"
    write(
        notes,
        "billing/renewal.md",
        "# Renewal rule\n\nRenewals get a grace window of 3 days before suspension.\n",
    )
    for index in range(40):
        text = f"# Trial {index}\n\nGrace window grace window renewal grace window {index}.\n"
        write(other if crowd == "archive" else notes, f"{crowd}/trial-{index}.md", text)
    with Vault.open(hook_env["MEMTROVE_VAULT"], config_dir=hook_env["MEMTROVE_CONFIG_DIR"]) as v:
        v.add_collection(notes, name="notes")
        if crowd == "archive":
            v.add_collection(other, name="archive", surface=False)
        v.update()
        top = v.hybrid("grace window renewal", 12, vectors=False)
        assert "Renewal rule" not in [r.title for r in top]  # crowded out of the depth
    raw = payload("user_prompt_submit.json", prompt="grace window renewal?", session_id="s-x")
    context = context_of(run_hook("context-surfacing", raw, hook_env))
    assert "Renewal rule" in context, context
    assert "Trial" not in context
