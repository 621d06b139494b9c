"""``memtrove profile [rebuild]`` and ``memtrove focus set|show|clear``.

The profile is a document of the vault (``_memtrove/profile.md``, see
:mod:`memtrove.capture.profile`); a session's focus is a file beside the cache, never in
the vault (see :mod:`memtrove.hooks.focus`). The focus commands find the session in
``--session-id``, else ``CLAUDE_SESSION_ID``, else ``MEMTROVE_SESSION_ID``.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from memtrove.cli.common import console, fail, open_vault, print_json, user_errors
from memtrove.config import cache_dir
from memtrove.hooks.focus import (
    FocusError,
    clear_focus,
    focus_file,
    focus_root,
    read_focus,
    write_focus,
)

__all__ = ["focus_app", "profile_app", "register"]

SESSION_VARIABLES = ("CLAUDE_SESSION_ID", "MEMTROVE_SESSION_ID")

profile_app = typer.Typer(
    help="Show the user profile (static facts, current focus), or rebuild it.",
    invoke_without_command=True,
)
focus_app = typer.Typer(
    help="A session's focus topic: steers context-surfacing towards it.",
    no_args_is_help=True,
)

SessionOption = typer.Option(
    None,
    "--session-id",
    help="The session (default: CLAUDE_SESSION_ID, else MEMTROVE_SESSION_ID).",
)
JsonOption = typer.Option(False, "--json", help="Print JSON.")


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile")
    app.add_typer(focus_app, name="focus")


@profile_app.callback()
def profile(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Show the user profile (_memtrove/profile.md); `profile rebuild` rebuilds it."""
    if ctx.invoked_subcommand is not None:
        return
    from memtrove.vault.profile import profile_area

    with open_vault(ctx, create=False) as vault, user_errors():
        found = profile_area(vault).show()
    if as_json:
        print_json(found.to_dict())
    else:
        console.print(found.text(), markup=False, highlight=False)


@profile_app.command("rebuild")
def rebuild(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Rebuild the profile from decision and hub documents (static facts) and recent
    sessions and progress (current focus), then show it."""
    from memtrove.vault.profile import profile_area

    with open_vault(ctx) as vault, user_errors():
        found = profile_area(vault).rebuild()
    if as_json:
        print_json(found.to_dict())
    else:
        console.print(found.text(), markup=False, highlight=False)


def _session(given: str | None) -> str:
    for value in (given, *(os.environ.get(name) for name in SESSION_VARIABLES)):
        if value and value.strip():
            return value.strip()
    raise fail("no session: pass --session-id, or set CLAUDE_SESSION_ID or MEMTROVE_SESSION_ID")


def _root() -> Path:
    return focus_root(os.environ, cache_dir())


@focus_app.command("set")
def focus_set(
    topic: str = typer.Argument(..., help='The topic, e.g. "auth token refresh".'),
    session_id: str | None = SessionOption,
) -> None:
    """Set the session's focus topic: context-surfacing lifts documents matching every
    word of it (x1.4) over the rest (x0.75)."""
    session = _session(session_id)
    try:
        written = write_focus(_root(), session, topic)
    except FocusError as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail(f"cannot write the focus file: {error.strerror or error}") from None
    console.print(f"focus of session {session}: {written}", markup=False, highlight=False)


@focus_app.command("show")
def focus_show(session_id: str | None = SessionOption, as_json: bool = JsonOption) -> None:
    """Show the session's focus topic (its focus file, else MEMTROVE_SESSION_FOCUS)."""
    session = _session(session_id)
    try:
        path = focus_file(_root(), session)
    except FocusError as error:
        raise fail(str(error)) from None
    topic, source = read_focus(_root(), session), "file"
    if topic is None:
        fallback = " ".join(os.environ.get("MEMTROVE_SESSION_FOCUS", "").split())
        topic, source = (fallback, "MEMTROVE_SESSION_FOCUS") if fallback else (None, "none")
    if as_json:
        print_json({"session_id": session, "topic": topic, "source": source, "path": str(path)})
        return
    if topic is None:
        console.print(f"no focus for session {session}", markup=False, highlight=False)
    else:
        suffix = "" if source == "file" else f" (from {source})"
        console.print(f"{topic}{suffix}", markup=False, highlight=False)


@focus_app.command("clear")
def focus_clear(session_id: str | None = SessionOption) -> None:
    """Clear the session's focus topic."""
    session = _session(session_id)
    try:
        removed = clear_focus(_root(), session)
    except FocusError as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail(f"cannot remove the focus file: {error.strerror or error}") from None
    message = "cleared the focus of" if removed else "no focus was set for"
    console.print(f"{message} session {session}", markup=False, highlight=False)
