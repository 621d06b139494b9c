"""``decision-extractor`` (Stop): the finished turns become observations in the vault.

Reads the transcript's turns since the last capture and hands them to
``vault.capture.capture_observations``
(:meth:`memtrove.vault.capture.CaptureArea.capture_observations`: observer LLM when one is
configured, else the heuristic; documents under ``_memtrove/agent/observations/``,
``agent/decisions/`` and ``agent/antipatterns/``; triples, causal links, contradiction
penalties). Stop takes no context: the answer is the plain JSON, written before the work
starts. A contradicted decision is only lowered unless
``MEMTROVE_CONTRADICTION_INVALIDATE=true``; the log says which it "would invalidate".
"""

from __future__ import annotations

import time
from collections.abc import Callable

from memtrove.hooks.events import HookEvent, HookResult
from memtrove.hooks.hooklog import HookLog
from memtrove.hooks.settings import HookSettings
from memtrove.hooks.stop import TRANSCRIPT_MESSAGES, model_budget
from memtrove.hooks.transcript import read_turns
from memtrove.vault import Vault

__all__ = ["HOOK_NAME", "run"]

HOOK_NAME = "decision-extractor"


def run(
    event: HookEvent, settings: HookSettings, open_vault: Callable[[], Vault], log: HookLog
) -> HookResult:
    started = time.monotonic()
    result = HookResult()
    if not event.session_id or not event.transcript_path:
        return result

    def capture() -> None:
        turns = read_turns(event.transcript_path, TRANSCRIPT_MESSAGES)
        if not turns:
            return
        report = open_vault().capture.capture_observations(
            event.session_id,
            turns,
            invalidate=settings.contradiction_invalidate,
            time_budget=model_budget(HOOK_NAME, settings, started),
        )
        if report.llm_error:
            log.warning(f"observer failed, heuristic used: {report.llm_error}")
        for path in report.would_invalidate:
            log.info(f"would invalidate {path} (MEMTROVE_CONTRADICTION_INVALIDATE is off)")
        if report.turns:
            log.info(report.summary)

    result.after.append(capture)
    return result
