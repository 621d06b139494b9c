"""What the three Stop hooks share: the turns of the finished session, and their time.

Claude Code runs ``decision-extractor``, ``handoff-generator`` and ``feedback-loop`` side by
side after every response, each with a 30 s ``timeout``. Each reads the transcript's last
200 messages (a large file from its end) and answers the plain JSON at once; the work runs
after the answer, so the agent is never held up, and the runner's watchdog still ends the
process a margin under the timeout. A model is given the time left minus
:data:`WRITE_RESERVE_SECONDS`, kept for writing.
"""

from __future__ import annotations

import time

from memtrove.hooks.catalog import HOOKS
from memtrove.hooks.settings import HookSettings

__all__ = ["TRANSCRIPT_MESSAGES", "WRITE_RESERVE_SECONDS", "model_budget"]

TRANSCRIPT_MESSAGES = 200
WRITE_RESERVE_SECONDS = 6.0
MIN_MODEL_SECONDS = 1.0


def model_budget(name: str, settings: HookSettings, started: float) -> float:
    """Seconds a model may take in hook ``name`` begun at ``started`` (monotonic)."""
    limit = HOOKS[name].time_limit(settings.timeout_seconds)
    left = limit - (time.monotonic() - started) - WRITE_RESERVE_SECONDS
    return max(MIN_MODEL_SECONDS, left)
