"""``memtrove budget`` and ``memtrove log``: what the hooks injected, and the sessions they saw.

``budget`` reads the context-surfacing rows of ``context_usage`` (with their recall events):
the tokens each prompt was given against the profile's ``token_budget``, and how many of the
injected documents the reply used (judged by ``feedback-loop`` when the session stops).
``log`` reads ``session_log``: duration, handoff, summary and changed files.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import typer

from memtrove.cli.common import fail, open_vault, print_json, user_errors
from memtrove.cli.lean.output import printable
from memtrove.hooks.profiles import PROFILES, Profile
from memtrove.results import SessionRecord
from memtrove.results.lifecycle import PromptRecord
from memtrove.retrieval.arguments import MAX_LIMIT
from memtrove.text import parse_iso_datetime

__all__ = ["budget", "budget_report", "log", "register"]

_PROMPTS_PER_SESSION = MAX_LIMIT  # prompts read per session at most


def register(app: typer.Typer) -> None:
    app.command("budget")(budget)
    app.command("log")(log)


def budget(
    ctx: typer.Context,
    session: str | None = typer.Option(None, "--session", help="Only this session (its id)."),
    last: int = typer.Option(5, "--last", min=1, max=100, help="The N most recent sessions."),
    profile: str = typer.Option(
        "balanced",
        "--profile",
        envvar="MEMTROVE_PROFILE",
        help="The budget to compare with: speed, balanced or deep (env MEMTROVE_PROFILE).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Tokens injected per session and per prompt against the profile's token budget, and
    how many injections the replies referenced."""
    chosen = PROFILES.get(profile.strip().lower() or "balanced")
    if chosen is None:
        raise fail(f"unknown profile {profile!r}: use one of {', '.join(PROFILES)}", code=2)
    with open_vault(ctx, create=False) as vault, user_errors():
        if session is not None:
            records = [r for r in vault.sessions.session_log(MAX_LIMIT) if r.session_id == session]
            prompts = vault.sessions.session_prompts(session, _PROMPTS_PER_SESSION)
            if not records and not prompts:
                raise fail(f"no session {session[:80]!r} recorded (memtrove log lists them)")
            rows = [(records[0] if records else None, session, prompts)]
        else:
            rows = [
                (
                    r,
                    r.session_id,
                    vault.sessions.session_prompts(r.session_id, _PROMPTS_PER_SESSION),
                )
                for r in vault.sessions.session_log(last)
            ]
    report = budget_report(chosen, rows)
    if as_json:
        print_json(report)
        return
    if not report["sessions"]:
        typer.echo("no sessions recorded yet (the hooks record them: memtrove setup hooks)")
        return
    typer.echo(f"profile {chosen.name}: {chosen.token_budget} tokens per prompt")
    for item in report["sessions"]:
        typer.echo("\n".join(_session_lines(item, chosen.token_budget)))


def budget_report(
    profile: Profile, rows: Sequence[tuple[SessionRecord | None, str, Sequence[PromptRecord]]]
) -> dict[str, Any]:
    """The JSON shape of ``budget``: per session its totals and each prompt's tokens, share
    of the budget and referenced injections (``referenced`` None: not judged yet)."""
    sessions = []
    for record, session_id, prompts in rows:
        listed = [_prompt(prompt, profile.token_budget) for prompt in prompts]
        tokens = [prompt.estimated_tokens for prompt in prompts]
        injections = [entry for prompt in prompts for entry in prompt.injected]
        judged = [entry for entry in injections if entry.referenced is not None]
        sessions.append(
            {
                "session_id": session_id,
                "started_at": record.started_at if record else None,
                "last_seen_at": record.last_seen_at if record else None,
                "estimated_tokens": record.estimated_tokens if record else sum(tokens),
                "prompts": len(prompts),
                "prompt_tokens": sum(tokens),
                "average_tokens": round(sum(tokens) / len(tokens)) if tokens else 0,
                "max_tokens": max(tokens, default=0),
                "over_budget": sum(1 for t in tokens if t > profile.token_budget),
                "injections": len(injections),
                "judged": len(judged),
                "referenced": sum(1 for entry in judged if entry.referenced),
                "prompt_log": listed,
            }
        )
    return {"profile": profile.name, "token_budget": profile.token_budget, "sessions": sessions}


def _prompt(prompt: PromptRecord, token_budget: int) -> dict[str, Any]:
    judged = [entry for entry in prompt.injected if entry.referenced is not None]
    return {
        "turn_index": prompt.turn_index,
        "timestamp": prompt.timestamp,
        "query_text": prompt.query_text,
        "estimated_tokens": prompt.estimated_tokens,
        "share_of_budget": round(prompt.estimated_tokens / token_budget, 3),
        "over_budget": prompt.estimated_tokens > token_budget,
        "injected": [entry.to_dict() for entry in prompt.injected],
        "judged": len(judged),
        "referenced": sum(1 for entry in judged if entry.referenced),
    }


def _session_lines(item: dict[str, Any], token_budget: int) -> list[str]:
    used = (
        f"{item['referenced']} of {item['judged']} judged injections referenced"
        if item["judged"]
        else f"{item['injections']} injections, none judged yet"
    )
    lines = [
        "",
        printable(
            f"session {item['session_id']}  {item['prompts']} prompts, "
            f"{item['estimated_tokens']} tokens injected (average {item['average_tokens']}, "
            f"most {item['max_tokens']}; {item['over_budget']} over budget); {used}"
        ),
    ]
    for prompt in item["prompt_log"]:
        share = f"{round(prompt['share_of_budget'] * 100)}%"
        mark = " OVER" if prompt["over_budget"] else ""
        got = (
            f"{prompt['referenced']}/{prompt['judged']} referenced"
            if prompt["judged"]
            else f"{len(prompt['injected'])} injected"
        )
        text = " ".join(prompt["query_text"].split())
        text = text if len(text) <= 60 else text[:59] + "…"
        lines.append(
            printable(
                f"  #{prompt['turn_index']} {prompt['timestamp']}  {prompt['estimated_tokens']:>5} "
                f"tokens {share:>5} of {token_budget}{mark}  {got}  {text}"
            )
        )
    return lines


def log(
    ctx: typer.Context,
    last: int = typer.Option(10, "--last", min=1, max=1000, help="The N most recent sessions."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Session history: when, how long, handoff, summary and changed files."""
    with open_vault(ctx, create=False) as vault, user_errors():
        sessions = vault.sessions.session_log(last)
    if as_json:
        print_json([{**s.to_dict(), "duration_seconds": _duration(s)} for s in sessions])
        return
    if not sessions:
        typer.echo("no sessions recorded yet (the hooks record them: memtrove setup hooks)")
        return
    for index, session in enumerate(sessions):
        if index:
            typer.echo("")
        typer.echo("\n".join(_log_lines(session)))


def _duration(session: SessionRecord) -> int | None:
    """Seconds from the session's start to its end (or its last prompt); None when a
    moment cannot be read."""
    start = parse_iso_datetime(session.started_at)
    end = parse_iso_datetime(session.ended_at or session.last_seen_at)
    if start is None or end is None:
        return None
    seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    return max(0, round(seconds))


def _shown_duration(seconds: int | None) -> str:
    if seconds is None:
        return "?"
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


def _log_lines(session: SessionRecord) -> list[str]:
    state = "ended" if session.ended_at else "open"
    lines = [
        f"{session.started_at}  {session.session_id}  {_shown_duration(_duration(session))} "
        f"({state}), {session.turns} prompts, {session.estimated_tokens} tokens injected"
    ]
    if session.handoff_path:
        lines.append(f"  handoff: {session.handoff_path}")
    if session.summary:
        lines.append(f"  summary: {' '.join(session.summary.split())}")
    if session.files_changed:
        shown = ", ".join(session.files_changed[:10])
        more = len(session.files_changed) - 10
        lines.append(f"  files: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    return [printable(line) for line in lines]
