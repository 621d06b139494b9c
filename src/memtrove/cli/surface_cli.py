"""``memtrove surface --context|--bootstrap [--stdin]``: the hooks' context for hosts
without Claude Code's hooks (opencode, OpenClaw, Hermes, a script), printed as text.

``--context`` runs ``context-surfacing`` on a prompt and prints its ``<vault-context>``;
``--bootstrap`` runs ``session-bootstrap`` for a session and prints its
``<vault-session>``. The host pastes the text into its own prompt.

The input comes from ``--stdin`` or the TEXT argument: either a JSON object (a hook
payload: ``prompt``, ``session_id``/``sessionID``/``conversation_id``, ``cwd``,
``transcript_path``, snake or camel case) or plain text, which is the prompt
(``--context``) or the session id (``--bootstrap``). Prompts under
:data:`MIN_PROMPT_CHARS` characters are skipped, as the reference product's ``surface``
does. Like a hook the command fails open: it exits 0, prints the context or nothing, and
reports problems on stderr and in ``hooks.log``.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from memtrove.cli.common import state

__all__ = ["MIN_PROMPT_CHARS", "hook_payload", "register", "surface_text"]

MIN_PROMPT_CHARS = 20
MAX_INPUT_BYTES = 1024 * 1024  # a prompt past this is cut: nobody pastes a megabyte
_READ_SECONDS = 2.0
_SESSION_FIELDS = ("session_id", "sessionId", "sessionID", "conversation_id", "conversationId")
_PROMPT_FIELDS = ("prompt", "message", "text", "input")
_MODES = {"context": ("context-surfacing", "UserPromptSubmit"),
          "bootstrap": ("session-bootstrap", "SessionStart")}  # fmt: skip


def register(app: typer.Typer) -> None:
    app.command("surface")(surface)


def _string(data: Mapping[str, Any], names: tuple[str, ...]) -> str:
    for name in names:
        value = data.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def hook_payload(mode: str, text: str) -> dict[str, str] | None:
    """The Claude Code payload ``surface`` hands the hook for ``text`` (JSON or plain);
    None when there is nothing to run (``--context`` with a prompt too short)."""
    event = _MODES[mode][1]
    data: Mapping[str, Any] = {}
    stripped = text.strip().lstrip("\ufeff")
    if stripped.startswith("{"):
        try:
            parsed = json.loads(stripped)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            data = parsed
    payload = {"hook_event_name": event}
    if data:
        payload["session_id"] = _string(data, _SESSION_FIELDS).strip()
        payload["prompt"] = _string(data, _PROMPT_FIELDS)
        payload["cwd"] = _string(data, ("cwd", "directory"))
        payload["transcript_path"] = _string(data, ("transcript_path", "transcriptPath"))
    elif mode == "context":
        payload["prompt"] = text
    else:
        lines = stripped.splitlines()
        payload["session_id"] = lines[0].strip()[:200] if lines else ""
    if mode == "context" and len(payload.get("prompt", "").strip()) < MIN_PROMPT_CHARS:
        return None
    payload["source"] = "startup" if mode == "bootstrap" else ""
    return {name: value for name, value in payload.items() if value}


def surface_text(
    mode: str,
    text: str,
    *,
    vault: str | Path | None = None,
    config_dir: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Run the hook of ``mode`` (``context`` or ``bootstrap``) on ``text``; its context."""
    from memtrove.hooks.runner import main as run_hook

    payload = hook_payload(mode, text)
    if payload is None:
        return ""
    answer = io.BytesIO()
    run_hook(
        [_MODES[mode][0]],
        vault=vault,
        config_dir=config_dir,
        env=env,
        stdin=io.BytesIO(json.dumps(payload).encode()),
        stdout=answer,
        watchdog=False,
    )
    try:
        output = json.loads(answer.getvalue() or b"{}")
        context = output.get("hookSpecificOutput", {}).get("additionalContext", "")
    except (ValueError, AttributeError):
        return ""
    return context if isinstance(context, str) else ""


def _read_stdin() -> str:
    from memtrove.hooks.events import HookInputError, read_payload

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return ""
    try:
        raw = read_payload(stream, _READ_SECONDS, limit=MAX_INPUT_BYTES)
    except HookInputError as error:
        print(f"memtrove: warning: {error}; nothing surfaced", file=sys.stderr)
        return ""
    from memtrove.text import scrub

    return scrub(raw.decode("utf-8", errors="replace"))


def surface(
    ctx: typer.Context,
    text: str | None = typer.Argument(
        None, help="The prompt (--context) or session id (--bootstrap), or a JSON payload."
    ),
    context: bool = typer.Option(False, "--context", help="Print <vault-context> for a prompt."),
    bootstrap: bool = typer.Option(
        False, "--bootstrap", help="Print <vault-session> for a new session."
    ),
    from_stdin: bool = typer.Option(False, "--stdin", help="Read the input from stdin."),
) -> None:
    """For hosts without hooks: print the context a hook would inject, as text. --context
    surfaces notes for a prompt; --bootstrap the last handoff, recent decisions and stale
    notes for a session. Always exits 0; prints nothing when there is nothing to add."""
    if context == bootstrap:
        raise typer.BadParameter("give exactly one of --context and --bootstrap")
    if from_stdin and text is not None:
        raise typer.BadParameter("give the input as TEXT or on --stdin, not both")
    mode = "context" if context else "bootstrap"
    given = _read_stdin() if from_stdin else (text or "")
    settings = state(ctx).settings
    try:
        found = surface_text(mode, given, vault=settings.vault_path, config_dir=settings.config_dir)
    except Exception as error:  # fail open, as a hook: the host's turn goes on
        message = " ".join(str(error).split()) or type(error).__name__
        print(f"memtrove: warning: surface failed: {message}", file=sys.stderr)
        found = ""
    if found:
        sys.stdout.write(found.rstrip("\n") + "\n")
    raise typer.Exit(0)
