"""``memtrove watch`` as a process: idle CPU over a 10,000-note vault, how soon a new file is
searchable (and embedded), and a burst of 1,000 writes.

The vault is a copy of ``bench_lifecycle.py``'s indexed and embedded 10,000-note source
(built first if missing) plus an empty scratch collection the benchmark writes into. A real
``memtrove watch`` (default settings: 2 s debounce, 2 s embed interval) runs on it:

1. idle CPU: the watcher's utime + stime from ``/proc/<pid>/stat`` over ``--idle`` seconds
   (default 30) with nothing changing, as a share of one core;
2. pickup: ``--files`` times (default 5), a new note is written and the time until ``search``
   finds it, then until ``vsearch`` does, is measured; medians;
3. burst: 1,000 notes written at once; how many index runs the watcher reports and the time
   until all are searchable. Baseline, in this process: ``update`` of the same 1,000 new
   notes in a copy of the vault (what the one index run has to do).

Linux only (``/proc``). The machine may be shared: figures are medians. Run from the
repository root::

    .venv/bin/python benchmarks/bench_watch.py [--idle 30] [--files 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench_lifecycle import source_vault
from corpus import BENCH_DIR
from memtrove import Vault
from memtrove.db.connection import copy_database, open_connection


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def wait_for(condition: Callable[[], bool], seconds: float) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if condition():
            return time.monotonic() - started
        time.sleep(0.02)
    return None


def note(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--files", type=int, default=5)
    options = parser.parse_args()
    BENCH_DIR.mkdir(exist_ok=True)
    source = source_vault(10_000, 2_000)
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as folder:
        root = Path(folder)
        vault_file, config, scratch = root / "vault.sqlite", root / "config", root / "scratch"
        connection = open_connection(source)
        copy_database(connection, vault_file)
        connection.close()
        config.mkdir()
        (config / "config.yaml").write_text((source.parent / "config" / "config.yaml").read_text())
        scratch.mkdir()
        with Vault.open(vault_file, config_dir=config) as vault:
            vault.add_collection(scratch, name="scratch")
            vault.update(["scratch"])
        env = {**os.environ, "MEMTROVE_VAULT": str(vault_file), "MEMTROVE_CONFIG_DIR": str(config)}
        lines: list[str] = []
        process = subprocess.Popen(
            [sys.executable, "-m", "memtrove", "watch"],
            env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        )  # fmt: skip

        def read() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                lines.append(line.rstrip())

        threading.Thread(target=read, daemon=True).start()

        def indexed() -> list[str]:
            return [line for line in lines if "watch: indexed " in line]

        try:
            assert wait_for(lambda: bool(indexed()), 120), lines
            time.sleep(3)
            log(f"watching ({indexed()[0]}); idle for {options.idle:.0f} s ...")
            hertz = os.sysconf("SC_CLK_TCK")
            before, started = cpu_ticks(process.pid), time.monotonic()
            time.sleep(options.idle)
            ticks, elapsed = cpu_ticks(process.pid) - before, time.monotonic() - started
            idle_cpu = 100.0 * ticks / hertz / elapsed
            searchable: list[float] = []
            embedded: list[float] = []
            with Vault.open(vault_file, config_dir=config) as reader:
                for index in range(options.files):
                    word = f"zorblat{index}quux"
                    note(scratch, f"pickup-{index}.md", f"# Pickup {index}\n\nThe {word} note.\n")
                    start = time.monotonic()
                    found = wait_for(lambda w=word: bool(reader.search(w)), 30)
                    path = f"pickup-{index}.md"
                    vector = wait_for(
                        lambda w=word, p=path: any(
                            r.path == p for r in reader.vsearch(f"The {w} note", limit=3)
                        ),
                        30,
                    )
                    searchable.append(found if found is not None else float("nan"))
                    embedded.append(
                        time.monotonic() - start if vector is not None else float("nan")
                    )
                    time.sleep(3)
                runs_before = len(indexed())
                start = time.monotonic()
                for index in range(1000):
                    note(
                        scratch, f"burst/{index:04}.md", f"# Burst {index}\n\nblorptang {index}.\n"
                    )
                written = time.monotonic() - start
                burst = wait_for(lambda: len(reader.search("blorptang", limit=1000)) == 1000, 120)
                time.sleep(3)
                burst_runs = len(indexed()) - runs_before
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)
        # Baseline: the same 1,000 new notes indexed by ``update`` in a copy, in this process.
        copy_file = root / "copy.sqlite"
        with Vault.open(vault_file, config_dir=config) as vault:
            copy_database(vault._connection, copy_file)
        with Vault.open(copy_file, config_dir=config) as vault:
            vault._connection.execute(
                "DELETE FROM documents_fts WHERE rowid IN (SELECT id FROM documents "
                "WHERE collection = 'scratch' AND path LIKE 'burst/%')"
            )
            vault._connection.execute(
                "DELETE FROM documents WHERE collection = 'scratch' AND path LIKE 'burst/%'"
            )
            started = time.monotonic()
            vault.update(["scratch"])
            baseline = time.monotonic() - started
    run_line = [line for line in lines if "+1000" in line]
    print(f"idle CPU over {elapsed:.0f} s: {idle_cpu:.2f} % of one core ({ticks} ticks)")
    print(f"new file searchable: median {statistics.median(searchable):.2f} s "
          f"(max {max(searchable):.2f}), embedded: median {statistics.median(embedded):.2f} s "
          f"(max {max(embedded):.2f}); debounce 2 s")  # fmt: skip
    print(f"burst of 1,000 writes ({written:.2f} s to write): {burst_runs} index run(s), all "
          f"searchable after {burst:.2f} s")  # fmt: skip
    print(f"  the run: {run_line[0].split('indexed ', 1)[1] if run_line else '?'}; baseline "
          f"update of the same notes in this process: {baseline:.2f} s")  # fmt: skip
    print(f"stopped: {lines[-1] if lines else '?'}")


if __name__ == "__main__":
    main()
