"""``memtrove setup skills [--remove]``: install the skills memtrove ships into Claude Code's
skills folder (``~/.claude/skills/<name>/SKILL.md``).

The skills are files of the package (``memtrove/skills/<name>/SKILL.md``):
``memtrove-dedup-classifier`` (reconciling near-duplicate entries) and
``memtrove-fact-extractor`` (turning queued tool calls into entries). An installed skill
carries :data:`MARKER`, so memtrove knows its own files: it updates them, and removes only
them. A file of the same name without the marker is the user's: installing moves it aside
to ``SKILL.md.user-backup`` (and says so); removing ours puts it back.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import typer

from memtrove.cli.common import console, fail
from memtrove.files import write_atomic

__all__ = ["BACKUP_SUFFIX", "MARKER", "SKILLS", "install_skills", "register", "remove_skills"]

SKILLS = ("memtrove-dedup-classifier", "memtrove-fact-extractor")
MARKER = "<!-- memtrove: installed by `memtrove setup skills`"
BACKUP_SUFFIX = ".user-backup"
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class SkillChange:
    """What happened to one skill's file: ``action`` is added, updated, unchanged,
    replaced (the user's file moved to ``backup``), removed, restored (the user's file put
    back), kept (the user's, left alone) or absent."""

    name: str
    path: Path
    action: str
    backup: Path | None = None

    def line(self) -> str:
        text = f"{self.action} {self.name} ({self.path})"
        if self.action == "replaced" and self.backup is not None:
            return f"{text}; your own file of that name was moved to {self.backup}"
        if self.action == "restored":
            return f"{text}: your earlier file of that name is back"
        if self.action == "kept":
            return f"{text}: not installed by memtrove, left as it is"
        return text


def register(app: typer.Typer) -> None:
    from memtrove.cli.agents import setup_app

    setup_app.command("skills")(setup_skills)


def shipped(name: str) -> str:
    """The text of a skill as the package ships it."""
    return resources.files("memtrove").joinpath("skills", name, SKILL_FILE).read_text("utf-8")


def skills_folder(home: Path) -> Path:
    return home / ".claude" / "skills"


def _ours(path: Path) -> bool:
    try:
        return MARKER.encode() in path.read_bytes()
    except FileNotFoundError:
        return False


def free_name(path: Path) -> Path:
    """``path``, or ``path.1``, ``path.2``... the first name not taken."""
    candidate, number = path, 0
    while candidate.exists() or candidate.is_symlink():
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate


def install_skills(home: Path) -> list[SkillChange]:
    """Write every shipped skill under ``home``'s skills folder (see the module docstring)."""
    changes = []
    for name in SKILLS:
        text = shipped(name)
        target = skills_folder(home) / name / SKILL_FILE
        backup = None
        if target.is_symlink() or target.exists():
            if target.is_dir() and not target.is_symlink():
                raise OSError(f"{target} is a folder, not a file")
            if not _ours(target):
                backup = free_name(target.with_name(SKILL_FILE + BACKUP_SUFFIX))
                target.rename(backup)
                action = "replaced"
            elif target.read_bytes() == text.encode("utf-8"):
                changes.append(SkillChange(name, target, "unchanged"))
                continue
            else:
                action = "updated"
        else:
            action = "added"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, text, prefix=".skill-", mode=0o644)
        changes.append(SkillChange(name, target, action, backup))
    return changes


def remove_skills(home: Path) -> list[SkillChange]:
    """Remove memtrove's skill files (only those carrying the marker), put back a user's
    file that an install moved aside, and drop folders left empty."""
    changes = []
    for name in SKILLS:
        target = skills_folder(home) / name / SKILL_FILE
        if not (target.is_symlink() or target.exists()):
            changes.append(SkillChange(name, target, "absent"))
            continue
        if target.is_dir() or not _ours(target):
            changes.append(SkillChange(name, target, "kept"))
            continue
        target.unlink()
        backup = target.with_name(SKILL_FILE + BACKUP_SUFFIX)
        if backup.is_file() and not backup.is_symlink():
            backup.rename(target)
            changes.append(SkillChange(name, target, "restored"))
            continue
        with contextlib.suppress(OSError):  # other files live there: leave the folder
            target.parent.rmdir()
        changes.append(SkillChange(name, target, "removed"))
    return changes


def setup_skills(
    remove: bool = typer.Option(False, "--remove", help="Remove memtrove's skills instead."),
) -> None:
    """Install memtrove's skills (dedup classifier, fact extractor) into ~/.claude/skills.
    A file of the same name that memtrove did not write is moved aside, never overwritten."""
    try:
        changes = remove_skills(Path.home()) if remove else install_skills(Path.home())
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        raise fail(f"cannot change the skills folder{where}: {error.strerror or error}") from None
    for change in changes:
        console.print(change.line(), markup=False)
