"""Any hook payload (JSON of any shape, or not JSON at all): every hook answers one line of
valid JSON and returns 0."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtrove.hooks.runner import main
from tests.fuzz.conftest import hostile_text, json_values
from tests.hooks.conftest import hook_env, surfacing_vault, template_vault  # noqa: F401

HOOKS = ["context-surfacing", "precompact-extract", "postcompact-inject", "curator-nudge"]
payloads = st.one_of(
    st.fixed_dictionaries(
        {"prompt": hostile_text, "session_id": hostile_text},
        optional={
            "transcript_path": hostile_text,
            "cwd": hostile_text,
            "hook_event_name": hostile_text,
        },
    ).map(lambda d: json.dumps(d).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=500),
)


@pytest.mark.parametrize("hook", HOOKS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=payloads)
def test_every_hook_answers_any_payload(
    hook: str,
    raw: bytes,
    surfacing_vault: Path,  # noqa: F811
    hook_env: dict[str, str],  # noqa: F811
) -> None:
    out = io.BytesIO()
    assert main([hook], env=hook_env, stdin=io.BytesIO(raw), stdout=out, watchdog=False) == 0
    text = out.getvalue().decode("ascii")
    assert text.endswith("\n") and text.count("\n") == 1
    answer: Any = json.loads(text)
    assert isinstance(answer, dict)
