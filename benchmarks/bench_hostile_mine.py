"""How long ``memtrove mine`` takes on hostile sources, end to end (a child process each).

1. The Slack export of ``../shared/bench/mine/slack`` (copied into a temporary folder) with a
   day file linked to a file outside it, a channel folder linked to a folder outside, a FIFO
   day file and a day file linked to ``/dev/zero``: it must mine the rest and list the four
   as skipped (the promise: well under 5 s, never a hang).
2. A ChatGPT export zip holding one message of ``--chars`` characters (120 million by
   default: a ~230 KB zip): the per-message cap keeps it to seconds.

Run from the repository root::

    .venv/bin/python benchmarks/bench_hostile_mine.py [--chars 120000000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLACK = ROOT.parent / "shared" / "bench" / "mine" / "slack" / "rusq-slackdump__source_export_dir"


def mine(folder: Path, source: Path) -> tuple[float, str]:
    env = {
        **os.environ,
        "MEMTROVE_VAULT": str(folder / "vault.sqlite"),
        "MEMTROVE_CONFIG_DIR": str(folder / "config"),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", "mine", str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    return time.perf_counter() - started, done.stdout


def hostile_slack(folder: Path) -> Path:
    export = folder / "export"
    shutil.copytree(SLACK, export)
    outside = folder / "outside"
    (outside / "general").mkdir(parents=True)
    day = [{"type": "message", "user": "U1", "ts": "1736600000.1", "text": "outside"}]
    for path in (outside / "2025-01-12.json", outside / "general" / "2025-01-12.json"):
        path.write_text(json.dumps(day))
    channel = export / "B75B4C7"
    (channel / "2025-02-01.json").symlink_to(outside / "2025-01-12.json")
    (export / "general").symlink_to(outside / "general", target_is_directory=True)
    os.mkfifo(channel / "2025-02-02.json")
    (channel / "2025-02-03.json").symlink_to("/dev/zero")
    return export


def huge_zip(folder: Path, chars: int) -> Path:
    pattern = "token=AbC123xyz "
    text = (pattern * (chars // len(pattern) + 1))[:chars]

    def node(ident: str, parent: str | None, role: str, body: str) -> dict[str, object]:
        content = {"content_type": "text", "parts": [body]}
        message = {"id": ident, "author": {"role": role}, "content": content}
        return {"id": ident, "parent": parent, "children": [], "message": message}

    mapping = {"a": node("a", None, "user", text), "b": node("b", "a", "assistant", "ok, read")}
    data = [{"id": "c1", "title": "huge", "current_node": "b", "mapping": mapping}]
    source = folder / "export.zip"
    with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("conversations.json", json.dumps(data))
    return source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=120_000_000)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if SLACK.is_dir():
            seconds, out = mine(folder / "slack", hostile_slack(folder / "slack"))
            skipped = next(line for line in out.splitlines() if "skipped (slack)" in line)
            results["hostile_slack_seconds"] = round(seconds, 2)
            results["hostile_slack_skipped"] = skipped.strip()
        source = huge_zip(folder, options.chars)
        seconds, out = mine(folder / "huge", source)
        results["huge_message_zip_bytes"] = source.stat().st_size
        results["huge_message_seconds"] = round(seconds, 2)
        results["huge_message_report"] = out.strip().splitlines()[-1].strip()
    if options.json:
        print(json.dumps(results, indent=2))
    else:
        for key, value in results.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
