"""``memtrove setup skills [--remove]``: memtrove's skills into ~/.claude/skills, never
clobbering a user's own file of the same name without saying so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from memtrove.cli import app
from memtrove.cli.skills_cli import MARKER, SKILLS, shipped


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.output, result.stderr)
    return result.output if code == 0 else result.stderr


def skill_file(home: Path, name: str) -> Path:
    return home / ".claude" / "skills" / name / "SKILL.md"


@pytest.mark.parametrize("name", SKILLS)
def test_shipped_skills_are_skill_files(name: str) -> None:
    text = shipped(name)
    _, front, body = text.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["name"] == name and len(meta["description"]) > 80
    assert MARKER in body
    # the tools they name are memtrove's
    for tool in ("memory_remember", "memory_recall"):
        assert tool in body
    assert "thatch" not in text.lower()


def test_install_is_idempotent_and_remove_cleans_up(isolated_environment: Path) -> None:
    home = isolated_environment
    first = run("setup", "skills")
    for name in SKILLS:
        assert f"added {name} ({skill_file(home, name)})" in first
        assert skill_file(home, name).read_text() == shipped(name)
    again = run("setup", "skills")
    assert again.count("unchanged ") == len(SKILLS)
    # an older copy of ours is updated in place
    skill_file(home, SKILLS[0]).write_text(f"---\nname: x\n---\n{MARKER} old -->\nold text\n")
    assert f"updated {SKILLS[0]}" in run("setup", "skills")
    assert skill_file(home, SKILLS[0]).read_text() == shipped(SKILLS[0])
    # removing leaves no trace, and a second removal says there is nothing
    (home / ".claude" / "skills" / "someone-elses").mkdir()
    removed = run("setup", "skills", "--remove")
    assert removed.count("removed ") == len(SKILLS)
    assert sorted(p.name for p in (home / ".claude" / "skills").iterdir()) == ["someone-elses"]
    assert run("setup", "skills", "--remove").count("absent ") == len(SKILLS)


def test_a_users_own_file_is_moved_aside_and_put_back(isolated_environment: Path) -> None:
    home = isolated_environment
    mine = skill_file(home, "memtrove-fact-extractor")
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"my own extractor \xff\n")
    (mine.parent / "notes.txt").write_text("keep me")
    said = run("setup", "skills")
    backup = mine.with_name("SKILL.md.user-backup")
    assert f"replaced memtrove-fact-extractor ({mine}); your own file" in said
    assert str(backup) in said
    assert backup.read_bytes() == b"my own extractor \xff\n" and MARKER in mine.read_text()
    # a second install keeps the backup as it is
    run("setup", "skills")
    assert backup.read_bytes() == b"my own extractor \xff\n"
    said = run("setup", "skills", "--remove")
    assert "restored memtrove-fact-extractor" in said
    assert mine.read_bytes() == b"my own extractor \xff\n" and not backup.exists()
    assert (mine.parent / "notes.txt").read_text() == "keep me"
    # their file is never removed
    assert "kept memtrove-fact-extractor" in run("setup", "skills", "--remove")
    assert mine.read_bytes() == b"my own extractor \xff\n"


def test_failures_are_one_line(isolated_environment: Path) -> None:
    home = isolated_environment
    skill_file(home, SKILLS[0]).mkdir(parents=True)  # a folder where the file goes
    error = run("setup", "skills", code=1)
    assert error.startswith("memtrove: error: cannot change the skills folder")
    assert error.count("\n") == 1
    if os.geteuid() != 0:  # root writes anywhere
        skill_file(home, SKILLS[0]).rmdir()
        skills = home / ".claude" / "skills"
        skills.chmod(0o500)
        try:
            error = run("setup", "skills", code=1)
            assert error.startswith("memtrove: error:") and error.count("\n") == 1
        finally:
            skills.chmod(0o700)


def test_home_is_honoured(
    isolated_environment: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setenv("HOME", str(other))
    run("setup", "skills")
    assert skill_file(other, SKILLS[1]).is_file()
    assert not (isolated_environment / ".claude").exists()
