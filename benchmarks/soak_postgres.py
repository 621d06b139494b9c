"""Several ``memtrove serve`` hosts on one PostgreSQL vault, under load, with hosts killed.

Three hosts (``--hosts``) serve one vault (a schema of its own on ``--url``), each hosting
the consolidation lanes (a short interval, so the lane leases change hands). Six clients
(``--clients``) call random hosts for ``--seconds`` (300): the context-surfacing hook, a new
memory entry, a new revision of the client's own entry, a new note indexed (``/reindex``)
and a new transcript mined (``/mine``). ``--kills`` times (2), evenly spaced, the host
holding the light lane's lease (else the next one) is killed with SIGKILL and started again.

A call whose host died under it has an unknown outcome; every other call's answer is
recorded. At the end, on the vault itself:

- every acknowledged entry, note and mined exchange is there exactly once, and no call
  with an unknown outcome left a duplicate (no lost or duplicated write);
- no answer was a lock error (busy, locked, deadlock, lock timeout);
- each killed host's lease was taken by another host (a tick recorded after the kill);
- the text index's totals equal a recount of its rows, and every active document has its
  text row.

Prints a summary (``--json``: the figures as JSON) and exits 1 when a check fails::

    .venv/bin/python benchmarks/soak_postgres.py [--seconds 300] [--url URL]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from base64 import b64encode
from pathlib import Path
from typing import Any

import httpx

from bench_postgres import drop
from corpus import BENCH_DIR, generate_corpus

SERVER = "postgresql://root@127.0.0.1:5432/test"
LOCK_WORDS = ("locked", "busy", "deadlock", "lock timeout", "could not obtain lock")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Host:
    """One ``memtrove serve`` process, restartable on its port."""

    def __init__(self, number: int, env: dict[str, str], root: Path) -> None:
        self.number, self.port = number, free_port()
        self.env = env | {"XDG_CACHE_HOME": str(root / f"cache-{number}")}
        self.log = root / f"host-{number}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "memtrove", "serve", "--port", str(self.port)],
                env=self.env,
                stdout=out,
                stderr=out,
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            if self.process.poll() is not None:
                raise SystemExit(f"host {self.number} exited at start: see {self.log}")
            time.sleep(0.2)
        raise SystemExit(f"host {self.number} did not answer within 120 s")

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


class Ledger:
    """What the clients were told: acknowledged writes, unknown outcomes, errors."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acked: dict[str, set[str]] = {"entry": set(), "note": set(), "exchange": set()}
        self.unknown: dict[str, set[str]] = {"entry": set(), "note": set(), "exchange": set()}
        self.revisions: dict[str, list[tuple[int, bool]]] = {}
        self.calls: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.lock_errors: list[str] = []
        self.unknown_calls = 0

    def record(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.calls.setdefault(kind, []).append(seconds)


class Client(threading.Thread):
    def __init__(self, number: int, hosts: list[Host], run: Run) -> None:
        super().__init__(daemon=True)
        self.number, self.hosts, self.run_ = number, hosts, run
        self.rng = random.Random(number)
        self.http = httpx.Client(timeout=60)
        self.counter = 0

    def run(self) -> None:
        kinds = ("hook", "entry", "revision", "note", "exchange")
        while time.monotonic() < self.run_.deadline:
            self.counter += 1
            kind = kinds[(self.counter + self.number) % len(kinds)]
            host = self.rng.choice(self.hosts)
            try:
                getattr(self, kind)(host)
            except Exception as error:  # a client never stops the soak
                with self.run_.ledger.lock:
                    self.run_.ledger.errors.append(f"{kind}: {type(error).__name__}: {error}")

    def call(self, host: Host, kind: str, path: str, body: dict[str, Any]) -> Any:
        """The answer's JSON; None when the host died under the call (outcome unknown)."""
        ledger = self.run_.ledger
        started = time.perf_counter()
        try:
            answer = self.http.post(f"{host.url}{path}", json=body)
        except httpx.ConnectError:  # never reached the host: nothing happened
            time.sleep(0.2)
            return False
        except httpx.TransportError:
            with ledger.lock:
                ledger.unknown_calls += 1
            time.sleep(0.2)  # the host is down; the next call picks again
            return None
        ledger.record(kind, time.perf_counter() - started)
        if answer.status_code >= 400:
            text = answer.text[:300]
            with ledger.lock:
                target = (
                    ledger.lock_errors
                    if any(word in text.lower() for word in LOCK_WORDS)
                    else ledger.errors
                )
                target.append(f"{kind} {answer.status_code}: {text}")
            return False
        return answer.json()

    def hook(self, host: Host) -> None:
        payload = {
            "session_id": f"soak-{self.number}-{self.counter // 20}",
            "hook_event_name": "UserPromptSubmit",
            "prompt": self.rng.choice(self.run_.prompts),
        }
        body = {"payload": b64encode(json.dumps(payload).encode()).decode(), "env": self.run_.env}
        self.call(host, "hook", "/warm/hook/context-surfacing", body)

    def entry(self, host: Host) -> None:
        label = f"soak-c{self.number}-e{self.counter}"
        body = {"label": label, "content": f"Soak entry {label}.", "store": "soak"}
        self.settle("entry", label, self.call(host, "entry", "/memory/remember", body))

    def revision(self, host: Host) -> None:
        label = f"soak-c{self.number}-counter"
        body = {
            "label": label,
            "content": f"Revision {self.counter} of {label}.",
            "store": "soak",
            "overwrite": True,
        }
        answer = self.call(host, "revision", "/memory/remember", body)
        if answer is not False:
            with self.run_.ledger.lock:
                self.run_.ledger.revisions.setdefault(label, []).append(
                    (self.counter, answer is not None)
                )

    def note(self, host: Host) -> None:
        name = f"soak-c{self.number}-n{self.counter}.md"
        text = f"# Soak note {name}\n\nWritten by client {self.number} as note {self.counter}.\n"
        (self.run_.notes / name).write_text(text, encoding="utf-8")
        self.settle("note", name, self.call(host, "note", "/reindex", {"collection": "notes"}))

    def exchange(self, host: Host) -> None:
        token = f"soakx{self.number}x{self.counter}"
        lines = []
        for turn in range(2):
            lines += [
                f"User: question {turn} about {token} please",
                "",
                f"Assistant: answer {turn} about {token} here",
                "",
            ]
        file = self.run_.transcripts / f"{token}.txt"
        file.write_text("\n".join(lines), encoding="utf-8")
        body = {"path": str(file), "collection": "conversations", "format": "text"}
        self.settle("exchange", token, self.call(host, "exchange", "/mine", body))

    def settle(self, kind: str, key: str, answer: Any) -> None:
        if answer is False:
            return
        with self.run_.ledger.lock:
            (self.run_.ledger.acked if answer is not None else self.run_.ledger.unknown)[kind].add(
                key
            )


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        tag = uuid.uuid4().hex[:8]
        self.root = BENCH_DIR / f"soak-{tag}"
        self.notes, self.transcripts = self.root / "notes", self.root / "transcripts"
        self.config = self.root / "config"
        for folder in (self.notes, self.transcripts, self.config):
            folder.mkdir(parents=True)
        self.schema = f"soak_{tag}"
        self.vault = f"{args.url}?schema={self.schema}"
        self.env = {"MEMTROVE_VAULT": self.vault, "MEMTROVE_CONFIG_DIR": str(self.config)}
        self.ledger = Ledger()
        self.deadline = 0.0
        self.prompts: list[str] = []
        self.kills: list[dict[str, Any]] = []


def lease_holder(vault: Any, name: str) -> tuple[str, str] | None:
    row = vault._connection.execute(
        "SELECT lease_token, acquired_at FROM worker_leases WHERE worker_name = ?", (name,)
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def holder_pid(vault: Any, name: str) -> int | None:
    row = vault._connection.execute(
        "SELECT holder_pid FROM worker_leases WHERE worker_name = ?", (name,)
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


def lease_holding_host(vault: Any, hosts: list[Host], wait: float = 15.0) -> int | None:
    """The pid of the host holding the light lane's lease (held only during a tick): polled
    for up to ``wait`` seconds; None when no tick was caught."""
    pids = {host.process.pid for host in hosts if host.process is not None}
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        pid = holder_pid(vault, "light-consolidation")
        if pid in pids:
            return pid
        time.sleep(0.01)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--kills", type=int, default=2)
    parser.add_argument("--url", default=SERVER)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="Keep the schema and files.")
    args = parser.parse_args()

    from memtrove import Vault

    run = Run(args)
    generate_corpus(run.notes, 200)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMTROVE_")}
    base_env |= run.env | {
        "MEMTROVE_ENABLE_CONSOLIDATION": "true",
        "MEMTROVE_CONSOLIDATION_INTERVAL": "2000",
        "MEMTROVE_LANE_LEASE_TTL": "10",
    }
    with Vault.open(run.vault, config_dir=run.config) as vault:
        vault.add_collection(run.notes, name="notes")
        vault.update()
        run.prompts = [
            str(row[0])
            for row in vault._connection.execute(
                "SELECT title FROM documents WHERE collection = 'notes' ORDER BY id LIMIT 60"
            )
        ]
    hosts = [Host(number, base_env, run.root) for number in range(args.hosts)]
    checks: dict[str, bool] = {}
    try:
        for host in hosts:
            host.start()
        log(f"{len(hosts)} hosts up; soaking {args.seconds:.0f} s with {args.clients} clients")
        started = time.monotonic()
        run.deadline = started + args.seconds
        clients = [Client(number, hosts, run) for number in range(args.clients)]
        for client in clients:
            client.start()
        with Vault.open(run.vault, config_dir=run.config) as watcher:
            for kill in range(args.kills):
                due = started + args.seconds * (kill + 1) / (args.kills + 1)
                time.sleep(max(0.0, due - time.monotonic()))
                pid = lease_holding_host(watcher, hosts)
                victim = next(
                    (h for h in hosts if h.process is not None and h.process.pid == pid),
                    hosts[kill % len(hosts)],
                )
                before = lease_holder(watcher, "light-consolidation")
                victim_pid = victim.process.pid if victim.process else None
                victim.kill()
                killed_at = watcher._connection.clock()
                log(
                    f"killed host {victim.number} (pid {victim_pid}; held the lease: {victim_pid == pid})"
                )
                time.sleep(3)
                victim.start()
                run.kills.append(
                    {
                        "host": victim.number,
                        "pid": victim_pid,
                        "held_lease": victim_pid == pid,
                        "lease_before": before,
                        "killed_at": killed_at.isoformat(),
                    }
                )
            for client in clients:
                client.join(args.seconds + 120)
            time.sleep(5)  # a last lane tick after the last kill
            checks |= verify(watcher, run)
    finally:
        for host in hosts:
            host.stop()
        if not args.keep:
            drop(run.vault)
            shutil.rmtree(run.root, ignore_errors=True)
    return report(run, checks, args)


def verify(vault: Any, run: Run) -> dict[str, bool]:
    connection, ledger = vault._connection, run.ledger
    checks: dict[str, bool] = {}

    entries: dict[str, int] = {}
    for slug, count in connection.execute(
        "SELECT label, COUNT(*) FROM memory_entries WHERE store = 'soak' GROUP BY label"
    ):
        entries[str(slug)] = int(count)
    checks["every acknowledged entry once"] = all(
        entries.get(label) == 1 for label in ledger.acked["entry"]
    )
    checks["no entry twice"] = all(count == 1 for count in entries.values())

    notes: dict[str, int] = {}
    for path, count in connection.execute(
        "SELECT path, COUNT(*) FROM documents WHERE collection = 'notes' AND active = 1 "
        "GROUP BY path"
    ):
        notes[str(path)] = int(count)
    checks["every acknowledged note once"] = all(
        notes.get(name) == 1 for name in ledger.acked["note"]
    )
    checks["no note twice"] = all(count == 1 for count in notes.values())

    exchanges: dict[str, int] = {}
    for (text,) in connection.execute(
        "SELECT c.doc FROM documents d JOIN content c ON c.hash = d.hash "
        "WHERE d.collection = 'conversations' AND d.active = 1"
    ):
        for line in str(text).splitlines():
            if line.startswith("conversation_id: "):
                token = line.split(": ", 1)[1].strip('"')
                exchanges[token] = exchanges.get(token, 0) + 1
    # Each transcript holds two exchanges.
    checks["every acknowledged transcript's exchanges once"] = all(
        exchanges.get(token) == 2 for token in ledger.acked["exchange"]
    )
    checks["no exchange twice"] = all(count <= 2 for count in exchanges.values())

    revisions_ok = True
    for label, sent in ledger.revisions.items():
        row = connection.execute(
            "SELECT c.doc FROM memory_entries e JOIN documents d ON d.id = e.doc_id "
            "JOIN content c ON c.hash = d.hash WHERE e.store = 'soak' AND e.label = ?",
            (label,),
        ).fetchone()
        acked = [number for number, known in sent if known]
        allowed = {number for number, known in sent if not known or number == max(acked or [0])}
        words = str(row[0]).split("Revision ", 1)[-1].split() if row else []
        found = int(words[0]) if words and words[0].isdigit() else None
        revisions_ok &= found in allowed
    checks["each entry's last acknowledged revision kept"] = revisions_ok

    checks["no lock error"] = not ledger.lock_errors
    checks["no other error"] = not ledger.errors

    for kill in run.kills:
        after = connection.execute(
            "SELECT COUNT(*) FROM maintenance_runs WHERE lane = 'light' AND started_at > ? "
            "AND pid IS DISTINCT FROM ?",
            (kill["killed_at"][:19], kill["pid"]),
        ).fetchone()[0]
        kill["ticks_after"] = int(after)
    checks["leases taken over after each kill"] = all(k["ticks_after"] > 0 for k in run.kills)

    connection.text.settle_totals()  # what the vault does after removals, then compare
    for idx, rows, tokens in connection.execute("SELECT idx, rows, tokens FROM text_totals"):
        count, sums = connection.execute(
            "SELECT COUNT(*), ARRAY(SELECT COALESCE(SUM(s.v), 0) FROM text_rows r, "
            "unnest(r.sizes) WITH ORDINALITY AS s (v, col) WHERE r.idx = ? GROUP BY s.col "
            "ORDER BY s.col) FROM text_rows WHERE idx = ?",
            (idx, idx),
        ).fetchone()
        held = int(rows) == int(count) and [int(t) for t in tokens][: len(sums)] == [
            int(v) for v in sums
        ]
        checks[f"text index {idx}: totals equal a recount"] = held
    missing = connection.execute(
        "SELECT COUNT(*) FROM documents d WHERE d.active = 1 AND d.archived_at IS NULL AND "
        "NOT EXISTS (SELECT 1 FROM text_rows r WHERE r.idx = 0 AND r.doc_id = d.id)"
    ).fetchone()[0]
    extra = connection.execute(
        "SELECT COUNT(*) FROM text_rows r WHERE r.idx = 0 AND NOT EXISTS (SELECT 1 FROM "
        "documents d WHERE d.id = r.doc_id AND d.active = 1)"
    ).fetchone()[0]
    checks["every active document has its text row, and no other"] = missing == extra == 0
    return checks


def report(run: Run, checks: dict[str, bool], args: argparse.Namespace) -> int:
    ledger = run.ledger
    figures = {
        "seconds": args.seconds,
        "hosts": args.hosts,
        "clients": args.clients,
        "calls": {kind: len(times) for kind, times in ledger.calls.items()},
        "p50_ms": {
            kind: round(statistics.median(times) * 1000, 1) for kind, times in ledger.calls.items()
        },
        "unknown_outcomes": ledger.unknown_calls,
        "acknowledged": {kind: len(keys) for kind, keys in ledger.acked.items()},
        "kills": run.kills,
        "lock_errors": ledger.lock_errors[:5],
        "errors": ledger.errors[:5],
        "checks": checks,
    }
    if args.json:
        print(json.dumps(figures, indent=2, default=str))
    else:
        for kind, count in figures["calls"].items():
            print(f"{kind:9} {count:6d} calls  p50 {figures['p50_ms'][kind]:7.1f} ms")
        print(f"unknown outcomes (host killed mid-call): {ledger.unknown_calls}")
        for name, held in checks.items():
            print(f"{'ok  ' if held else 'FAIL'} {name}")
        for line in (ledger.lock_errors + ledger.errors)[:5]:
            print(f"  {line}")
    return 0 if checks and all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
