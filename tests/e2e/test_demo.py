"""`make demo` as a new user runs it: every search it shows finds its document first,
the vector search included (a paraphrase sharing one word with the decision it finds)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from demo import PARAPHRASE, QUERIES, QUESTION  # noqa: E402


def test_the_demo_finds_each_document_first(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "XDG_"))}
    env.update(
        MEMTROVE_VAULT=str(tmp_path / "vault.sqlite"),
        MEMTROVE_CONFIG_DIR=str(tmp_path / "config"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HOME=str(tmp_path),
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py"), str(ROOT / "examples" / "vault")],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    runs = re.split(r"^\$ memtrove ", done.stdout, flags=re.M)[1:]
    firsts = {}
    for run in runs:
        command, _, output = run.partition("\n")
        top = re.search(r"^ 1\. \S+\s+demo/(\S+)", output, re.M)
        firsts[command] = top.group(1) if top else None
    expected = {f"search {q} -n 3": path for q, path in QUERIES.items()}
    expected[f"vsearch {PARAPHRASE[0]} -n 3"] = PARAPHRASE[1]
    expected[f"query {QUESTION[0]} -n 3"] = QUESTION[1]
    assert {command: firsts.get(command) for command in expected} == expected
