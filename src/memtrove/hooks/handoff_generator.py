"""``handoff-generator`` (Stop, SessionEnd): the session's handoff for whoever comes next.

Once the transcript holds at least four messages, ``vault.capture.write_handoff``
(:meth:`memtrove.vault.capture.CaptureArea.write_handoff`) (re)writes
``_memtrove/agent/handoffs/<date>-<sid8>.md`` (asked, done, decided, files changed, open
questions, next steps: observer LLM summary or the regex fallback) and the session's
``session_log`` row (handoff_path, summary, files_changed, ended_at). The answer is the
plain JSON, written before the work starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from memtrove.hooks.events import HookEvent, HookResult
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.hooks.stop import TRANSCRIPT_MESSAGES, model_budget
from memtrove.hooks.transcript import STOP_TAIL_BYTES, read_transcript
from memtrove.vault import Vault

__all__ = ["HOOK_NAME", "run"]

HOOK_NAME = "handoff-generator"


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    from memtrove.capture.handoff import MIN_MESSAGES
    from memtrove.capture.turns import split_turns

    started = time.monotonic()
    result = HookResult()
    if not event.session_id or not event.transcript_path:
        return result

    def handoff() -> None:
        messages = read_transcript(
            event.transcript_path, TRANSCRIPT_MESSAGES, tail_over=STOP_TAIL_BYTES
        )
        if len(messages) < MIN_MESSAGES:
            return
        from memtrove.hooks.session_start import project_of

        report = open_vault().capture.write_handoff(
            event.session_id,
            split_turns(messages),
            time_budget=model_budget(HOOK_NAME, settings, started),
            project=project_of(event),
        )
        if report.llm_error:
            log.warning(f"summary failed, regex fallback used: {report.llm_error}")
        log.info(f"handoff {report.path} ({report.source}, {len(report.files_changed)} file(s))")

    result.after.append(handoff)
    return result
