"""`memtrove update --pull`: each collection's `update:` command, run in its folder first."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner, Result

from memtrove import Vault
from memtrove.cli import app
from tests.conftest import where, write

PYTHON = shlex.quote(sys.executable)


def set_update(vault: Vault, name: str, command: object) -> None:
    data = yaml.safe_load(vault.config_file.read_text(encoding="utf-8"))
    data["collections"][name]["update"] = command
    vault.config_file.write_text(yaml.safe_dump(data), encoding="utf-8")


def memtrove(vault: Vault, *args: str) -> Result:
    env = {"MEMTROVE_CONFIG_DIR": str(vault.config_file.parent)}
    return CliRunner().invoke(app, ["--vault", str(where(vault)), *args], env=env)


def collection(vault: Vault, tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    write(folder, "old.md", f"# Old {name}\n\nalready there")
    vault.add_collection(folder, name=name)
    return folder


def update_log(home: Path) -> str:
    return (home / ".cache" / "memtrove" / "update.log").read_text(encoding="utf-8")


def test_pull_runs_the_command_in_the_folder_then_indexes_what_it_brought(
    vault: Vault, tmp_path: Path, isolated_environment: Path
) -> None:
    folder = collection(vault, tmp_path, "docs")
    script = "open('new.md', 'w').write('# Pulled note\\n\\nfresh text'); print('Fast-forward')"
    set_update(vault, "docs", f"{PYTHON} -c {shlex.quote(script)}")

    result = memtrove(vault, "update", "--pull", "--json")
    assert result.exit_code == 0, (result.output, result.stderr)
    report: dict[str, Any] = json.loads(result.stdout)
    assert [(p["collection"], p["ok"], p["exit_code"]) for p in report["pull"]] == [
        ("docs", True, 0)
    ]
    assert report["pull"][0]["output"] == "Fast-forward"
    assert (folder / "new.md").exists()
    assert vault.get("docs/new.md").title == "Pulled note"
    assert "docs:" in update_log(isolated_environment) and "Fast-forward" in update_log(
        isolated_environment
    )

    human = memtrove(vault, "update", "--pull")
    assert human.exit_code == 0 and "pulled docs: Fast-forward" in human.output


def test_a_failed_command_is_one_line_and_the_other_collections_are_still_indexed(
    vault: Vault, tmp_path: Path, isolated_environment: Path
) -> None:
    collection(vault, tmp_path, "broken")
    good = collection(vault, tmp_path, "good")
    set_update(vault, "broken", [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"])
    set_update(vault, "good", [sys.executable, "-c", "open('more.md','w').write('# More')"])

    result = memtrove(vault, "update", "--pull")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memtrove: error: collection broken: ")
    assert "exited with status 3: boom" in lines[0]
    assert "Traceback" not in result.output + result.stderr
    assert (good / "more.md").exists()
    assert vault.get("good/more.md").title == "More"
    assert vault.get("broken/old.md").title == "Old broken"
    assert "broken: " in update_log(isolated_environment)
    assert "failed: exited with status 3" in update_log(isolated_environment)


def test_the_command_is_an_argument_list_never_a_shell_line(vault: Vault, tmp_path: Path) -> None:
    folder = collection(vault, tmp_path, "docs")
    show = "import sys; print(sys.argv[1:])"
    set_update(vault, "docs", f"{PYTHON} -c {shlex.quote(show)} $(touch made) ; touch made2")

    result = memtrove(vault, "update", "--pull", "--json")
    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)["pull"][0]["output"]
    assert printed == "['$(touch', 'made)', ';', 'touch', 'made2']"
    assert not (folder / "made").exists() and not (folder / "made2").exists()


def test_missing_program_timeout_and_bad_config_each_fail_in_one_line(
    vault: Vault, tmp_path: Path
) -> None:
    collection(vault, tmp_path, "docs")
    set_update(vault, "docs", "no-such-program-memtrove --flag")
    missing = memtrove(vault, "update", "--pull")
    assert missing.exit_code == 1
    assert missing.stderr.strip() == (
        "memtrove: error: collection docs: update command failed: command "
        "'no-such-program-memtrove' not found (see "
        f"{Path.home() / '.cache' / 'memtrove' / 'update.log'})"
    )

    set_update(vault, "docs", [sys.executable, "-c", "import time; time.sleep(120)"])
    slow = memtrove(vault, "update", "--pull", "--pull-timeout", "1", "--json")
    assert slow.exit_code == 1
    assert "update command failed: timed out after 1 s" in slow.stderr
    assert json.loads(slow.stdout)["pull"][0]["exit_code"] is None

    set_update(vault, "docs", "git pull 'unbalanced")
    bad = memtrove(vault, "update", "--pull")
    assert bad.exit_code == 1
    assert bad.stderr.count("\n") == 1 and "'update' cannot be split into arguments" in bad.stderr

    set_update(vault, "docs", ["git", "pull\x1b[2J"])
    control = memtrove(vault, "update", "--pull")
    assert control.exit_code == 1 and "'update' holds a control character" in control.stderr


def test_without_pull_the_command_never_runs(vault: Vault, tmp_path: Path) -> None:
    folder = collection(vault, tmp_path, "docs")
    set_update(vault, "docs", [sys.executable, "-c", "open('ran.md','w').write('# Ran')"])
    result = memtrove(vault, "update", "--json")
    assert result.exit_code == 0 and "pull" not in json.loads(result.stdout)
    assert not (folder / "ran.md").exists()
