"""``feedback-loop`` (Stop): which injected documents the reply used, turn by turn.

The transcript's turns go to ``vault.capture.apply_feedback``
(:meth:`memtrove.vault.capture.CaptureArea.apply_feedback`), which judges the session's
unchecked recall events against the reply of their own turn (title, path, docid,
distinctive phrases) and records the outcome: ``was_referenced`` on recall events and
context usage, access counts, confidence, negatives, utility signals, co-activations and
``usage`` edges (see :mod:`memtrove.lifecycle.feedback`). The answer is the plain JSON,
written before the work starts.
"""

from __future__ import annotations

from collections.abc import Callable

from memtrove.hooks.events import HookEvent, HookResult
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.hooks.stop import TRANSCRIPT_MESSAGES
from memtrove.hooks.transcript import read_turns
from memtrove.vault import Vault

__all__ = ["HOOK_NAME", "run"]

HOOK_NAME = "feedback-loop"


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    result = HookResult()
    if not event.session_id or not event.transcript_path:
        return result

    def feedback() -> None:
        turns = read_turns(event.transcript_path, TRANSCRIPT_MESSAGES)
        if not turns:
            return
        report = open_vault().capture.apply_feedback(event.session_id, turns)
        if report.checked:
            log.info(report.summary)

    result.after.append(feedback)
    return result
