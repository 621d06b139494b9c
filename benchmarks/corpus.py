"""Shared helpers for the benchmarks: a synthetic markdown corpus, queries, and a baseline.

The corpus imitates the notes a software team (or its coding agents) keeps: decisions,
handoffs, research, progress reports and loose notes, about 2 KB each, some with YAML
frontmatter (title, type, date, tags), a ``# `` title, 2-4 ``## `` sections, bullet lists
and occasional fenced code blocks. Everything is deterministic: the same ``count`` and
``seed`` always give byte-identical files (and the same modification times).

Words come from a vocabulary built here from inline word lists and their combinations
(component names such as ``upload worker``, error classes such as
``ChunkOffsetMismatchError``, snake_case identifiers, file paths, metric names, tools),
plus generated numbers, durations and versions, and a long tail of 60,000 pronounceable
pseudo-words standing for the codenames, jargon and names real notes are full of. Each
category is drawn with a Zipf-like (Zipf-Mandelbrot) distribution over a fixed shuffled
ranking, so a few terms are everywhere and most are rare, which is what makes BM25's IDF
behave as it does on real notes.

Calibration: 10,000 chunks of 2.1 KB of real English technical prose (package READMEs,
documentation and changelogs) hold about 74,000 distinct words, and a word drawn by its
frequency (4+ letters) is in a median 4.7% of chunks. The 10,000-note corpus holds about
88,000 distinct words, and the words of its keyword queries are in a median 3.5% of notes
(the first version, without the tail, had 10,000 words and medians near 25%, five times
denser than real text, which made every query match most notes).

Quoted-phrase queries quote spans of the corpus's own notes when the corpus is given, as a
user quotes what they remember.

The module also holds the *baseline* used for comparison: the least an indexer could do,
one plain FTS5 table ``t(path, title, body)`` with ``tokenize='porter unicode61'`` plus a
``files(path, size, mtime_ns)`` table for change detection, and the query rewriting the
baseline search uses (lowercase, ``[^\\W_]+`` words, each quoted, joined with ``OR``).
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
import random
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import sqlean

from memtrove.db.connection import Connection

__all__ = [
    "BASELINE_BATCH",
    "BENCH_DIR",
    "MARKER",
    "REPO_ROOT",
    "BaselineFile",
    "baseline_expression",
    "baseline_rescan",
    "baseline_search",
    "build_baseline",
    "cached_source_vault",
    "corpus_dir",
    "generate_corpus",
    "generate_labelled_queries",
    "generate_queries",
    "iter_markdown",
    "open_baseline",
    "percentile",
    "vocabulary_size",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = REPO_ROOT / ".bench"
MARKER = ".corpus.json"
GENERATOR_VERSION = 2
# Pseudo-words in the vocabulary's long tail; with them a 10k-note corpus has about the
# distinct terms (~70k) and document frequencies (median ~5% for a word drawn by its
# frequency) measured on 10k 2-KB chunks of real English technical prose.
TAIL_WORDS = 60_000
BASELINE_BATCH = 200

# -- word lists ------------------------------------------------------------------------------

_NOUNS = """
request response token session cache queue worker job task thread process connection pool
socket handler endpoint route middleware schema migration table index column row query
transaction lock deadlock timeout retry backoff payload header cookie bucket object blob
chunk part upload download thumbnail image video photo album user account tenant permission
role policy secret key certificate credential config setting flag feature release build
pipeline artifact container pod node cluster replica shard partition topic consumer producer
offset event message stream batch snapshot backup restore log metric trace span alert
dashboard incident outage latency throughput error exception crash panic leak memory cpu
disk network bandwidth quota limit rate budget deadline sprint milestone roadmap ticket bug
regression fix patch hotfix rollback deploy deployment environment staging production
sandbox fixture test suite coverage benchmark profile flamegraph heap stack frame callback
promise future coroutine loop scheduler cron janitor sweeper reaper watchdog heartbeat
lease leader follower election quorum consensus checksum hash digest signature nonce salt
cipher encryption compression codec format encoding manifest registry namespace label
annotation selector ingress egress proxy gateway balancer firewall certificate domain dns
record cname webhook callback notification email digest template locale translation string
timezone timestamp clock drift skew window bucket histogram percentile counter gauge sample
cardinality dimension tag filter sort cursor page pagination limit offset scroll search
ranking score embedding vector similarity neighbour graph edge vertex path walk crawler
parser lexer token grammar ast compiler interpreter runtime binary wheel package dependency
lockfile version changelog tag branch commit merge conflict rebase review approval owner
oncall runbook playbook postmortem retro handoff decision tradeoff constraint assumption
risk mitigation estimate spike prototype experiment hypothesis finding recommendation
invoice payment ledger refund subscription plan trial customer device phone tablet browser
extension client server daemon sidecar agent prompt context memory note vault collection
document fragment snippet highlight preview exif metadata orientation resolution aspect
frame codec bitrate transcode preset playlist manifest segment storage volume mount inode
filesystem permission symlink directory folder file descriptor handle buffer pipe signal
""".split()

_VERBS = """
add remove rename refactor migrate switch replace cache retry throttle batch shard partition
index reindex deploy revert release pin bump upgrade downgrade patch fix debug profile
benchmark measure log trace monitor alert page escalate document review approve merge
rebase squash split extract inline deprecate delete archive compress encrypt decrypt sign
verify validate parse serialize deserialize encode decode stream buffer flush sync poll
schedule queue dispatch route proxy forward redirect authenticate authorize rotate revoke
expire renew refresh invalidate evict warm preload prefetch load unload mount provision
scale drain restart reboot kill spawn fork join lock unlock acquire handle catch raise
throw swallow ignore skip dedupe tag label filter sort paginate rank embed chunk hash
checksum resume abort cancel timeout drop ship plan stop commit rewrite write build keep
hold find send spend choose break take set cut put swap wrap map scan trim prefer run
collapse expand normalize truncate pad clamp round sample aggregate export import backfill
replay reconcile repair recover restore snapshot freeze thaw promote demote isolate
""".split()

_IRREGULAR: dict[str, str] = {
    "run": "ran",
    "split": "split",
    "rewrite": "rewrote",
    "write": "wrote",
    "build": "built",
    "catch": "caught",
    "throw": "threw",
    "keep": "kept",
    "hold": "held",
    "find": "found",
    "send": "sent",
    "spend": "spent",
    "choose": "chose",
    "break": "broke",
    "take": "took",
    "set": "set",
    "cut": "cut",
    "put": "put",
}
_DOUBLING = frozenset(
    "drop ship plan stop commit swap wrap map scan trim prefer cut set put run pin log tag embed "
    "debug".split()
)

_ADJECTIVES = """
slow fast flaky stale broken partial idempotent atomic eventual strong weak transient
permanent intermittent noisy quiet large small tiny huge cold warm hot lazy eager
synchronous asynchronous concurrent parallel sequential nested flat sparse dense
incremental full legacy new old deprecated experimental stable unstable private public
internal external upstream downstream optional required default custom global local
remote offline online encrypted compressed signed unsigned malformed corrupt missing
duplicate orphaned dangling expired revoked pending queued blocked stuck leaked unbounded
bounded expensive cheap risky safe naive careful explicit implicit resumable chunked
multipart presigned mutable immutable readonly writable shared exclusive optimistic
pessimistic
""".split()

_TECH = """
postgres postgresql sqlite mysql redis memcached kafka rabbitmq nats sqs sns s3 minio garage
gcs kubernetes k8s helm terraform ansible docker podman nginx envoy traefik caddy haproxy
grpc protobuf graphql openapi json yaml toml msgpack avro parquet arrow duckdb clickhouse
elasticsearch opensearch meilisearch typesense tantivy lucene faiss hnswlib pgvector qdrant
milvus fastapi django flask starlette celery dramatiq asyncio uvloop trio httpx aiohttp
sqlalchemy alembic pydantic mypy ruff pytest hypothesis tox nox poetry uv pip setuptools
react nextjs vite webpack esbuild typescript swift kotlin rust golang python nodejs deno bun
libvips pillow imagemagick ffmpeg heic webp avif jpeg oauth oidc jwt saml ldap keycloak
sentry prometheus grafana loki tempo jaeger opentelemetry datadog pagerduty github gitlab
jenkins buildkite argocd cloudflare fastly cloudfront lambda fargate ec2 ecs eks gke linux
macos ios android testflight zstd gzip brotli lz4 tls http2 http3 quic websocket sse
systemd fts5 bm25 sqlean wal mmap fsync inotify fsevents
""".split()

_COMPONENT_PREFIXES = """
upload download auth billing search sync thumbnail media photo album notification email
push webhook api gateway ingest export import report analytics metrics audit session token
user account tenant admin scheduler cron janitor indexer crawler parser renderer transcoder
encoder storage blob cache queue event stream ledger payment invoice flag config secrets
backup restore migration geo ranking recommendation embedding vector share comment feed
""".split()

_COMPONENT_SUFFIXES = """
worker service api client daemon job queue pipeline gateway proxy cache store controller
manager scheduler handler consumer producer adapter bridge sidecar cli sdk module plugin
""".split()

_ERROR_SUBJECTS = """
Connection Pool Upload Token Session Schema Migration Quota RateLimit Checksum Signature
Auth Permission Storage Queue Cache Index Query Parse Decode Encode Config Network Socket
Dns Tls Certificate Disk Memory Thread Lock Transaction Serialization Validation Payload
Header Chunk Offset Partition Replica Shard Lease Cursor Manifest Embedding
""".split()

_ERROR_PROBLEMS = """
Reset Refused Timeout Closed Expired Invalid Missing Corrupt Exhausted Exceeded Mismatch
Conflict Overflow Unavailable Denied Failed
""".split()

_ERRNO = """
ECONNRESET ECONNREFUSED ETIMEDOUT ENOSPC EPIPE EMFILE EACCES ENOENT OOMKilled SIGKILL
SIGSEGV SIGTERM CrashLoopBackOff ImagePullBackOff
""".split()

_PEOPLE = """
Ana Tomás Priya Kenji Fatima Lukas Chloé Mateo Aisha Wei Sofia Jonas Amara Diego Hana Noah
Leila Omar Ingrid Ravi Yuki Marta Kofi Elena
""".split()

_DIRS = "src lib app services cmd internal pkg tests scripts migrations deploy web mobile".split()
_EXTS = "py ts go rs sql yaml toml sh md tsx kt swift".split()
_UNITS = "seconds total bytes ratio errors count".split()
_AREAS = "auth uploads media search billing infra mobile web data platform ml ops".split()

_CJK_SENTENCES = (
    "上传工作进程在高负载下超时，需要重试。",
    "数据库迁移已完成，索引重建花了二十分钟。",
    "缩略图服务的内存泄漏已经修复。",
    "认证令牌刷新的竞争条件导致用户被登出。",
    "搜索结果的排序需要考虑文档的新鲜度。",
    "写真のバックアップは夜間に実行される。",
    "アップロードの再開機能を追加した。",
    "データベースの移行でロックが発生した。",
    "検索インデックスの再構築が必要です。",
    "トークンの有効期限を二十四時間に変更した。",
    "업로드 작업자가 시간 초과로 실패했습니다.",
    "인증 토큰 갱신 로직을 수정했습니다.",
    "검색 색인을 다시 만들어야 합니다.",
    "사진 백업은 매일 밤 실행됩니다.",
)
_CJK_QUERIES = (
    "上传超时",
    "数据库迁移",
    "内存泄漏",
    "令牌刷新",
    "写真のバックアップ",
    "アップロード",
    "検索インデックス",
    "トークンの有効期限",
    "업로드 작업자",
    "인증 토큰",
    "검색 색인",
    "缩略图",
    "上传 timeout 重试",
    "排序 新鲜度",
    "ロック",
)


# -- vocabulary ------------------------------------------------------------------------------


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _past(verb: str) -> str:
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb in _DOUBLING:
        return verb + verb[-1] + "ed"
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def _gerund(verb: str) -> str:
    if verb in _DOUBLING:
        return verb + verb[-1] + "ing"
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    return verb + "ing"


def _third(verb: str) -> str:
    if verb.endswith(("s", "x", "ch", "sh", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


class _Zipf:
    """Draws from a fixed ranking with Zipf-Mandelbrot weights ``1 / (rank + q) ** s``."""

    def __init__(self, items: Sequence[str], s: float = 1.05, q: float = 2.7) -> None:
        self.items = list(items)
        self._cumulative = list(
            itertools.accumulate(1.0 / (rank + q) ** s for rank in range(1, len(items) + 1))
        )
        self._total = self._cumulative[-1]

    def __call__(self, rng: random.Random) -> str:
        point = rng.random() * self._total
        return self.items[bisect.bisect_right(self._cumulative, point)]


@dataclass(frozen=True)
class _Vocabulary:
    nouns: list[str]
    verbs: list[str]
    adjectives: list[str]
    tech: list[str]
    components: list[str]
    errors: list[str]
    identifiers: list[str]
    files: list[str]
    metrics: list[str]

    def size(self) -> int:
        words = {
            *self.nouns,
            *(_plural(n) for n in self.nouns),
            *self.verbs,
            *(_past(v) for v in self.verbs),
            *(_gerund(v) for v in self.verbs),
            *(_third(v) for v in self.verbs),
            *self.adjectives,
            *self.tech,
            *self.components,
            *self.errors,
            *self.identifiers,
            *self.files,
            *self.metrics,
        }
        return len(words)


_ONSETS = (
    "b br c ch cl d dr f fl g gl gr h j k kl l m n p pl pr qu r s sc sh sl sp st t th tr v w z"
).split()
_VOWELS = "a e i o u ai ea ee io ou oa ia".split()
_CODAS = ("", "", "", "n", "r", "l", "s", "t", "x", "m", "nd", "rt", "ck", "sh")


def _syllable(rng: random.Random) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


@cache
def _vocabulary() -> _Vocabulary:
    """The vocabulary, each list in its (shuffled, fixed) Zipf rank order."""
    rng = random.Random(20240607)

    def ranked(items: Sequence[str]) -> list[str]:
        unique = list(dict.fromkeys(items))
        rng.shuffle(unique)
        return unique

    components = [f"{p} {s}" for p in _COMPONENT_PREFIXES for s in _COMPONENT_SUFFIXES]
    errors = [
        f"{subject}{problem}{'Error' if (i + j) % 3 else 'Exception'}"
        for i, subject in enumerate(_ERROR_SUBJECTS)
        for j, problem in enumerate(_ERROR_PROBLEMS)
    ]
    errors += [f"{e}Error" for e in ("Integrity", "Operational", "Programming", "Timeout")]
    identifiers: set[str] = set()
    while len(identifiers) < 2500:
        verb = rng.choice(_VERBS)
        first = rng.choice(_NOUNS)
        second = rng.choice(_NOUNS)
        identifiers.add(f"{verb}_{first}" if rng.random() < 0.4 else f"{verb}_{first}_{second}")
    files: set[str] = set()
    while len(files) < 900:
        folder = rng.choice(_DIRS)
        area = rng.choice(_COMPONENT_PREFIXES)
        files.add(f"{folder}/{area}/{rng.choice(_NOUNS)}.{rng.choice(_EXTS)}")
    metrics: set[str] = set()
    while len(metrics) < 400:
        metrics.add(f"{rng.choice(_COMPONENT_PREFIXES)}_{rng.choice(_NOUNS)}_{rng.choice(_UNITS)}")
    # The long tail real notes have (codenames, jargon, customer and library names, typos):
    # pronounceable pseudo-words ranked after the real words, so those stay the head terms.
    tail: set[str] = set()
    while len(tail) < TAIL_WORDS:
        syllables = rng.choice((2, 2, 3))
        tail.add("".join(_syllable(rng) for _ in range(syllables)))
    tail_words = sorted(tail)
    rng.shuffle(tail_words)
    split = len(tail_words) * 3 // 4
    return _Vocabulary(
        nouns=ranked(_NOUNS) + tail_words[:split],
        verbs=ranked(_VERBS),
        adjectives=ranked(_ADJECTIVES),
        tech=ranked(_TECH) + tail_words[split:],
        components=ranked(components),
        errors=ranked(errors),
        identifiers=ranked(sorted(identifiers)),
        files=ranked(sorted(files)),
        metrics=ranked(sorted(metrics)),
    )


class _Writer:
    """Fills ``{slot}`` templates with Zipf-distributed words and generated numbers."""

    _SLOT = re.compile(r"\{(\w+)\}")

    def __init__(self, rng: random.Random) -> None:
        vocabulary = _vocabulary()
        self.rng = rng
        self._noun = _Zipf(vocabulary.nouns, s=0.9, q=20)
        self._verb = _Zipf(vocabulary.verbs)
        self._adjective = _Zipf(vocabulary.adjectives)
        self._tech = _Zipf(vocabulary.tech, s=0.9, q=20)
        self._component = _Zipf(vocabulary.components, s=1.1)
        self._error = _Zipf(vocabulary.errors)
        self._identifier = _Zipf(vocabulary.identifiers, s=0.9)
        self._file = _Zipf(vocabulary.files, s=0.9)
        self._metric = _Zipf(vocabulary.metrics, s=0.9)
        self._person = _Zipf(_PEOPLE, s=0.8)
        self._slots: dict[str, Callable[[], str]] = {
            "n": lambda: self._noun(rng),
            "ns": lambda: _plural(self._noun(rng)),
            "v": lambda: self._verb(rng),
            "ved": lambda: _past(self._verb(rng)),
            "ving": lambda: _gerund(self._verb(rng)),
            "vs": lambda: _third(self._verb(rng)),
            "adj": lambda: self._adjective(rng),
            "tech": lambda: self._tech(rng),
            "comp": self.component,
            "err": self.error,
            "ident": lambda: f"`{self._identifier(rng)}`",
            "rawident": lambda: self._identifier(rng),
            "file": lambda: f"`{self._file(rng)}`",
            "metric": lambda: f"`{self._metric(rng)}`",
            "person": lambda: self._person(rng),
            "count": self.count,
            "dur": self.duration,
            "size": self.size,
            "pct": self.percent,
            "ver": self.version,
            "date": self.day,
            "area": lambda: rng.choice(_AREAS),
        }

    def component(self) -> str:
        name = self._component(self.rng)
        return f"`{name.replace(' ', '-')}`" if self.rng.random() < 0.3 else name

    def error(self) -> str:
        if self.rng.random() < 0.12:
            return self.rng.choice(_ERRNO)
        if self.rng.random() < 0.1:
            return f"HTTP {self.rng.choice((400, 401, 403, 404, 409, 413, 429, 500, 502, 503))}"
        return self._error(self.rng)

    def count(self) -> str:
        value = int(10 ** self.rng.uniform(0.5, 5.5))
        return f"{value:,}" if value >= 10_000 else str(value)

    def duration(self) -> str:
        unit = self.rng.choice(("ms", "ms", "s", "min", "h"))
        return f"{int(10 ** self.rng.uniform(0, 3))} {unit}"

    def size(self) -> str:
        return f"{self.rng.choice((1, 2, 4, 5, 8, 16, 32, 64, 128, 256, 512))} {self.rng.choice(('KiB', 'MiB', 'GiB', 'MB'))}"

    def percent(self) -> str:
        return f"{self.rng.uniform(0, 100):.1f}%"

    def version(self) -> str:
        return f"v{self.rng.randint(0, 4)}.{self.rng.randint(0, 20)}.{self.rng.randint(0, 12)}"

    def day(self) -> str:
        start = datetime(2023, 1, 1, tzinfo=UTC)
        return (start + timedelta(days=self.rng.randint(0, 1300))).strftime("%Y-%m-%d")

    def word(self, slot: str) -> str:
        return self._slots[slot]()

    def component_slug(self) -> str:
        return self._component(self.rng).replace(" ", "-")

    def fill(self, template: str, *, capitalize: bool = True) -> str:
        text = self._SLOT.sub(lambda match: self._slots[match.group(1)](), template)
        return text[:1].upper() + text[1:] if capitalize else text

    def pick(self, templates: Sequence[str]) -> str:
        return self.fill(self.rng.choice(templates))


# -- note templates --------------------------------------------------------------------------

_SENTENCES = (
    "We {ved} the {comp} to {tech} because the {n} kept {ving} under load.",
    "The {comp} now {vs} {ns} in batches of {count}, which cut p99 latency from {dur} to {dur}.",
    "{person} saw {err} in the {comp} logs right after the {tech} upgrade to {ver}.",
    "Root cause: the {n} was not {ved} before the {n} {ved}, so {ns} piled up in {tech}.",
    "Tradeoff: {adj} {ns} versus a {adj} {n}; we {ved} the first and accept the {n} cost.",
    "This only affects {ns} larger than {size}; smaller ones go through {ident}.",
    "See {file} and the {comp} runbook for the {adj} {n} procedure.",
    "Until the {n} is {ved}, {ving} the {n} is a no-op on {tech}.",
    "{tech} handles {ns} well, but its {n} {n} gets {adj} once {ns} exceed {count}.",
    "The {err} came from {ident} retrying without backoff against {tech}.",
    "We considered {ving} the {n} in {tech}, but the {n} overhead was too {adj}.",
    "Numbers: {count} {ns} per second on {tech}, {pct} of them {ved} on the first try.",
    "Decision: keep the {adj} {n} and {v} the {comp} behind a feature flag.",
    "Nobody owns the {comp} {n} yet; {person} will {v} it next sprint.",
    "Measured on {date}: {metric} stayed under {dur} while {ving} {count} {ns}.",
    "The {adj} {n} path in {file} still {vs} the {n} twice, which is why {err} shows up.",
    "After {ving} {ns} in the {comp}, memory dropped by {pct} and the {err} alerts stopped.",
    "We chose {tech} over {tech} because {ns} must stay {adj} across {n} restarts.",
    "The {comp} {vs} each {n} and then {vs} the {n}, so a {adj} {n} blocks the whole queue.",
    "Turns out the {n} was {adj}: {ident} {ved} the {n} before the {n} was {ved}.",
    "Rollout plan: {v} the {comp} in staging, watch {metric} for {dur}, then {v} production.",
    "If {tech} returns {err}, the {comp} should {v} the {n} and {v} with jittered backoff.",
    "Open question from {person}: do we {v} {ns} per {n} or per {n}?",
    "Lesson learned: never {v} {ns} inside the {n} loop; {ving} them up front is {adj}.",
    "The {adj} {n} was introduced in {ver} and {ved} in {ver}.",
    "Load test with {count} concurrent {ns}: {pct} errors, mostly {err}.",
    "Instead of {ving} the {n}, the {comp} now {vs} a {adj} {n} keyed by {n} id.",
    "Because {tech} limits {ns} to {size}, we {v} large {ns} into {size} parts.",
    "{person} paired with {person} on the {comp} and found that {ident} never {vs} the {n}.",
    "The dashboard for {metric} shows a step change on {date}, right when {ver} went out.",
    "Most of the time goes into {ving} {ns}; {tech} itself answers in under {dur}.",
    "We reverted the {comp} change after {count} {ns} failed with {err} in production.",
    "A {adj} {n} is cheaper than a {adj} {n} here, since {ns} are rarely {ved} twice.",
    "The {comp} and the {comp} both {v} the same {n}, so they need one shared {n}.",
    "Customers on {tech} reported {adj} {ns} after {date}; support tagged them {area}.",
    "Reproduced locally with {tech} {ver}: {v} {count} {ns}, then {v} the {n}.",
    "Nothing in {file} {vs} the {n} id, so two {ns} can collide on the same {n}.",
    "For now the {comp} {vs} {ns} synchronously; an async {n} can come later.",
    "Docs for {tech} say the {n} {n} is {adj}, but in practice it {vs} on every {n}.",
    "The fix is small: {v} the {n} in {ident} and {v} the {adj} {n} cache.",
)

_BULLETS = (
    "{ved} {ident} to {v} {ns} before {ving} them.",
    "{comp}: {err} when the {n} is {adj} ({count} occurrences since {date}).",
    "TODO: {v} the {n} {n} in {file}.",
    "Metric {metric} dropped to {pct} after the {tech} change.",
    "{person} to {v} the {comp} {ns} by {date}.",
    "Open: should the {comp} {v} {ns}, or leave that to {tech}?",
    "{ved} the {adj} {n} handling in {file}.",
    "{tech} {ver}: {adj} {ns}, {v} before upgrading.",
    "p95 {dur}, p99 {dur}, error rate {pct}.",
    "{err} in {ident} is now {ved} and {ved}.",
    "Risk: {adj} {ns} in the {comp} could {v} the {n} {n}.",
    "Follow-up: {v} {ns} older than {dur} with a nightly {n}.",
    "Pinned {tech} to {ver} until the {n} {n} is {ved}.",
    "{comp} {vs} {count} {ns} per {n} ({size} each).",
    "Ask {person} about the {adj} {n} in {tech}.",
    "Blocked on {comp}: {err} during {ving}.",
    "Added a regression test for {ident} ({file}).",
    "Docs: the {n} section of the {comp} README is {adj}.",
    "{tech} {n} size set to {size}; {v} if {metric} climbs.",
    "Deleted the {adj} {n} flag from the {comp}.",
    "Moved {ns} from {tech} to {tech} ({count} rows, {dur}).",
    "{ving} {ns} in {tech} is {adj}; {ving} them in the {comp} is not.",
)

_KINDS: dict[str, tuple[float, str, tuple[str, ...]]] = {
    # folder: (share of notes, frontmatter type, section headings in order)
    "decisions": (0.15, "decision", ("Context", "Decision", "Consequences", "Alternatives")),
    "handoffs": (0.20, "handoff", ("Done", "In progress", "Next", "Open questions", "Files")),
    "research": (0.15, "research", ("Question", "Findings", "Benchmarks", "Recommendation")),
    "progress": (0.20, "progress", ("Shipped", "Metrics", "Risks", "Next week")),
    "notes": (0.30, "note", ("Summary", "Details", "Notes", "Follow-ups", "Links")),
}

_TITLES: dict[str, tuple[str, ...]] = {
    "decisions": (
        "ADR-{num}: {v} the {comp} to {tech}",
        "ADR-{num}: {adj} {ns} for the {comp}",
        "ADR-{num}: use {tech} instead of {tech} for {ns}",
    ),
    "handoffs": (
        "Handoff: {comp} {n} {ved}, follow-ups remain",
        "Handoff {date}: {ving} the {comp}",
        "Handoff: {err} in the {comp}",
    ),
    "research": (
        "Research: {tech} vs {tech} for {ns}",
        "Research: {adj} {ns} in the {comp}",
        "Spike: can {tech} {v} {ns} at {count} per second?",
    ),
    "progress": (
        "Week {week} status: {comp}",
        "Progress {date}: {comp} and {comp}",
        "Status update: {adj} {ns}",
    ),
    "notes": (
        "{adj} {n} in the {comp}",
        "Meeting notes: {comp} sync",
        "How the {comp} {vs} {ns}",
        "Notes on {tech} {ns}",
        "{err} postmortem",
    ),
}

_CODE = (
    (
        "python",
        "def {rawident}({n}: {Type}) -> None:\n"
        "    for item in {n}_{n}s:\n"
        "        if item.{n} > {int}:\n"
        '            raise {err}("{n} is {adj}")\n'
        "        item.{v}()\n",
    ),
    (
        "sql",
        "SELECT {n}_id, count(*) AS {ns}\n"
        "FROM {n}_{ns}\n"
        "WHERE {n} = ? AND created_at > now() - interval '{int} minutes'\n"
        "GROUP BY 1 ORDER BY 2 DESC LIMIT {int};\n",
    ),
    (
        "yaml",
        "{compslug}:\n  {n}_timeout: {int}ms\n  max_{ns}: {int}\n  {n}: {tech}\n"
        "  retry:\n    attempts: {small}\n    backoff: exponential\n",
    ),
    (
        "bash",
        "kubectl -n {area} rollout restart deploy/{compslug}\n"
        "kubectl -n {area} logs deploy/{compslug} --since={int}m | grep {err}\n",
    ),
    (
        "json",
        '{{"level": "error", "component": "{compslug}", "error": "{err}", '
        '"{n}_id": {int}, "elapsed_ms": {int}}}\n',
    ),
    (
        "",
        "Traceback (most recent call last):\n"
        '  File "{filepath}", line {int}, in {rawident}\n'
        "    {n} = self.{n}.{v}({n})\n"
        "{err}: {n} {adj} after {int} attempts\n",
    ),
)


def _code_block(writer: _Writer) -> str:
    rng = writer.rng
    language, template = rng.choice(_CODE)
    vocabulary = _vocabulary()
    extra: dict[str, Callable[[], str]] = {
        "Type": lambda: writer.word("n").capitalize(),
        "int": lambda: str(rng.randint(1, 5000)),
        "small": lambda: str(rng.randint(2, 9)),
        "compslug": writer.component_slug,
        "filepath": lambda: rng.choice(vocabulary.files),
    }
    body = (
        re.sub(
            r"\{(\w+)\}",
            lambda m: extra[m.group(1)]() if m.group(1) in extra else writer.word(m.group(1)),
            template.replace("{{", "\x00").replace("}}", "\x01"),
        )
        .replace("\x00", "{")
        .replace("\x01", "}")
    )
    return f"```{language}\n{body}```"


def _paragraph(writer: _Writer, sentences: int) -> str:
    return " ".join(writer.pick(_SENTENCES) for _ in range(sentences))


def _bullets(writer: _Writer, items: int) -> str:
    return "\n".join("- " + writer.pick(_BULLETS) for _ in range(items))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48].strip("-") or "note"


def _note(writer: _Writer, kind: str, index: int, day: datetime) -> str:
    rng = writer.rng
    _, content_type, headings = _KINDS[kind]
    template = rng.choice(_TITLES[kind])
    template = template.replace("{num}", f"{index % 10000:04d}")
    template = template.replace("{week}", str(day.isocalendar().week))
    title = writer.fill(template)
    title = title[:1].upper() + title[1:]
    parts: list[str] = []
    if rng.random() < 0.55:
        tags = sorted({rng.choice(_AREAS), writer.word("tech"), writer.word("n")})
        parts.append(
            "---\n"
            f"title: {json.dumps(title.replace('`', ''), ensure_ascii=False)}\n"
            f"type: {content_type}\n"
            f"date: {day.strftime('%Y-%m-%d')}\n"
            f"tags: [{', '.join(tags)}]\n"
            "---\n"
        )
    parts.append(f"# {title}\n")
    if rng.random() < 0.5:
        parts.append(_paragraph(writer, rng.randint(1, 2)) + "\n")
    count = rng.randint(2, min(4, len(headings)))
    chosen = [headings[0], *sorted(rng.sample(headings[1:], count - 1), key=headings.index)]
    target = rng.gauss(2000, 280)
    blocks: list[list[str]] = []
    code_at = rng.randrange(count) if rng.random() < 0.22 else -1
    for position in range(count):
        section: list[str] = []
        if rng.random() < 0.6:
            section.append(_paragraph(writer, rng.randint(1, 3)))
        if rng.random() < 0.7 or not section:
            section.append(_bullets(writer, rng.randint(2, 5)))
        if position == code_at:
            section.append(_code_block(writer))
        blocks.append(section)
    if rng.random() < 0.02:
        blocks[-1].append("备注 / メモ / 메모: " + " ".join(rng.sample(_CJK_SENTENCES, 2)))

    def length() -> int:
        return sum(len(part) for part in parts) + sum(
            len(block) + 2 for section in blocks for block in section
        )

    while length() < target:
        section = rng.choice(blocks)
        section.append(
            _paragraph(writer, rng.randint(1, 2))
            if rng.random() < 0.5
            else _bullets(writer, rng.randint(2, 3))
        )
    for heading, section in zip(chosen, blocks, strict=True):
        parts.append(f"\n## {heading}\n\n" + "\n\n".join(section) + "\n")
    return "".join(parts)


# -- corpus ----------------------------------------------------------------------------------


def corpus_dir(count: int) -> Path:
    """Where the benchmarks keep the corpus of ``count`` notes (git-ignored)."""
    return BENCH_DIR / f"corpus-{count}"


def generate_corpus(folder: Path, count: int, seed: int = 7) -> None:
    """Write ``count`` notes under ``folder``; a no-op if it already holds exactly that corpus.

    A marker file (written last) records count, seed and generator version. A folder that
    exists without a marker and is not empty is refused rather than overwritten.
    """
    marker = folder / MARKER
    wanted = {"count": count, "seed": seed, "version": GENERATOR_VERSION}
    if marker.is_file():
        try:
            if json.loads(marker.read_text(encoding="utf-8")) == wanted:
                return
        except ValueError:
            pass
        shutil.rmtree(folder)
    elif folder.exists() and any(folder.iterdir()):
        raise ValueError(f"{folder} exists, is not empty and was not made by generate_corpus")
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    writer = _Writer(rng)
    kinds = list(_KINDS)
    shares = [_KINDS[kind][0] for kind in kinds]
    start = datetime(2023, 1, 1, tzinfo=UTC)
    for index in range(count):
        kind = rng.choices(kinds, weights=shares)[0]
        day = start + timedelta(days=rng.randint(0, 1300), seconds=rng.randint(0, 86_399))
        text = _note(writer, kind, index, day)
        first_line = next(line for line in text.splitlines() if line.startswith("# "))
        name = f"{day.strftime('%Y-%m-%d')}-{_slug(first_line[2:])}-{index:05d}.md"
        if kind == "notes":
            subfolder = folder / kind / rng.choice(_AREAS)
        elif kind == "progress":
            subfolder = folder / kind / day.strftime("%Y")
        else:
            subfolder = folder / kind
        subfolder.mkdir(parents=True, exist_ok=True)
        path = subfolder / name
        path.write_text(text, encoding="utf-8")
        stamp = day.timestamp() + rng.randint(0, 7 * 86_400)
        os.utime(path, (stamp, stamp))
    marker.write_text(json.dumps(wanted), encoding="utf-8")


# -- queries ---------------------------------------------------------------------------------

_QUESTIONS = (
    "why did we switch the {comp} to {tech}?",
    "how do we handle {ns} when the {comp} {vs} {ns}?",
    "what was decided about {adj} {ns}",
    "where is the {n} timeout for the {comp} configured?",
    "who owns the {comp} {n}?",
    "when did {err} start showing up in the {comp}",
    "what is the p99 latency of the {comp} after the {tech} change?",
    "is it safe to {v} {ns} while the {comp} is {ving}?",
    "did we ever fix the {adj} {n} in {tech}?",
    "which {ns} does the {comp} {v} before {ving}?",
    "why is the {comp} so slow to {v} {ns}",
    "how should I {v} the {n} {n} without breaking the {comp}?",
)

_OPERATOR_TEMPLATES = (
    "{n} -{n}",
    "{tech} -{tech}",
    "{pre}*",
    "{pre}* {n}",
    "({tech} OR {tech}) {n}",
    "({n} AND {n}) -{adj}",
    "title:{n}",
    "{rawcomp}: {err}",
    "{n} AND NOT {n}",
    "NEAR({n} {n})",
    "{n}^2 {tech}",
    "{n}:{n} {ver}",
    "-{n}",
    '"{n}" -{tech} {pre}*',
)

_LONG_OPENERS = (
    "I'm picking up the work on the {comp} from the last session and need context before I "
    "touch anything.",
    "You are helping me debug a production incident in the {comp}.",
    "Summarise everything we know about the {comp} and its {ns} before I write the handoff.",
)


def _prefix(writer: _Writer) -> str:
    word = writer.word("n")
    length = writer.rng.choice((2, 3, 3, 4, 5))
    return word[: max(2, min(length, len(word)))]


def _quoted_spans(corpus: Path, count: int, rng: random.Random) -> list[str]:
    """Quoted 2-3 word spans taken from the corpus's own sentences, as users quote them."""
    files = sorted(corpus.rglob("*.md"))
    spans: list[str] = []
    while files and len(spans) < count:
        text = rng.choice(files).read_text(encoding="utf-8")
        lines = [line for line in text.splitlines() if len(line.split()) >= 6]
        if not lines:
            continue
        words = re.findall(r"[A-Za-z][A-Za-z'-]+", rng.choice(lines))
        length = rng.choice((2, 2, 3))
        if len(words) > length:
            start = rng.randrange(len(words) - length)
            spans.append('"' + " ".join(words[start : start + length]) + '"')
    return spans


def generate_labelled_queries(
    count: int = 200, seed: int = 11, corpus: Path | None = None
) -> list[tuple[str, str]]:
    """``count`` (query class, query text) pairs, classes interleaved; deterministic.

    With ``corpus``, phrase queries quote spans of its notes (so they can match); without,
    they are made from the vocabulary and mostly match nothing in a large vocabulary.
    """
    rng = random.Random(seed)
    writer = _Writer(rng)
    plan = {
        "word": 0.15,
        "keywords": 0.20,
        "question": 0.20,
        "phrase": 0.10,
        "operators": 0.125,
        "code": 0.075,
        "cjk": 0.075,
        "long": 0.075,
    }
    sizes = {name: int(count * share) for name, share in plan.items()}
    sizes["keywords"] += count - sum(sizes.values())
    out: list[tuple[str, str]] = []

    def term() -> str:
        slot = rng.choices(
            ("n", "ns", "v", "ving", "adj", "tech", "comp", "err"), (6, 2, 2, 1, 2, 4, 3, 1)
        )[0]
        return writer.word(slot).replace("`", "").replace("-", " ")

    for _ in range(sizes["word"]):
        out.append(("word", term().split()[0]))
    for _ in range(sizes["keywords"]):
        out.append(("keywords", " ".join(term() for _ in range(rng.randint(2, 3)))))
    for _ in range(sizes["question"]):
        out.append(("question", writer.pick(_QUESTIONS).replace("`", "")))
    quoted = _quoted_spans(corpus, sizes["phrase"], random.Random(seed)) if corpus else []
    out.extend(("phrase", span) for span in quoted)
    for _ in range(sizes["phrase"] - len(quoted)):
        phrase = rng.choice(
            (
                f'"{writer.component().strip("`")}"',
                f'"{writer.word("adj")} {writer.word("n")}"',
                f'"{writer.word("ving")} the {writer.word("n")}" {writer.word("tech")}',
                f'"{writer.word("n")} {writer.word("n")}"',
            )
        )
        out.append(("phrase", phrase))
    for _ in range(sizes["operators"]):
        template = rng.choice(_OPERATOR_TEMPLATES)
        template = template.replace("{pre}", _prefix(writer))
        template = template.replace("{rawcomp}", writer.component().strip("`"))
        out.append(("operators", writer.fill(template, capitalize=False)))
    for _ in range(sizes["code"]):
        out.append(
            (
                "code",
                rng.choice(
                    (
                        writer.word("err"),
                        writer.word("rawident"),
                        writer.word("file").strip("`"),
                        writer.word("metric").strip("`"),
                        f"{writer.word('err')} {writer.word('ver')}",
                    )
                ),
            )
        )
    for index in range(sizes["cjk"]):
        out.append(("cjk", _CJK_QUERIES[index % len(_CJK_QUERIES)]))
    for _ in range(sizes["long"]):
        pieces = [writer.pick(_LONG_OPENERS)]
        while sum(len(piece) + 1 for piece in pieces) < rng.randint(520, 1400):
            pieces.append(
                writer.pick(_SENTENCES) if rng.random() < 0.7 else writer.pick(_QUESTIONS)
            )
        out.append(("long", " ".join(pieces).replace("`", "")))
    rng.shuffle(out)
    return out


def generate_queries(count: int = 200, seed: int = 11) -> list[str]:
    """``count`` varied search queries (see :func:`generate_labelled_queries`)."""
    return [text for _, text in generate_labelled_queries(count, seed)]


# -- plain-FTS5 baseline ---------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineFile:
    path: str  # relative, forward slashes
    absolute: str
    size: int
    mtime_ns: int


def iter_markdown(root: Path) -> Iterator[BaselineFile]:
    """Every ``*.md`` file under ``root`` (no symlinks, no dot folders), with its stat."""
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        directory, relative = stack.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                child = f"{relative}/{entry.name}" if relative else entry.name
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith("."):
                        stack.append((entry.path, child))
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    yield BaselineFile(child, entry.path, stat.st_size, stat.st_mtime_ns)


def open_baseline(db_path: Path) -> Connection:
    """A connection to a baseline database (sqlean, autocommit, WAL, synchronous=NORMAL)."""
    connection: Connection = sqlean.connect(str(db_path), isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    return connection


def _baseline_title(text: str, path: str) -> str:
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def build_baseline(root: Path, db_path: Path) -> int:
    """Index every note under ``root`` into a fresh baseline database; returns the count."""
    connection = open_baseline(db_path)
    try:
        connection.execute(
            "CREATE VIRTUAL TABLE t USING fts5(path, title, body, tokenize='porter unicode61')"
        )
        connection.execute(
            "CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER)"
        )
        files = list(iter_markdown(root))
        for start in range(0, len(files), BASELINE_BATCH):
            connection.execute("BEGIN")
            for file in files[start : start + BASELINE_BATCH]:
                with open(file.absolute, encoding="utf-8") as handle:
                    text = handle.read()
                connection.execute(
                    "INSERT INTO t (path, title, body) VALUES (?, ?, ?)",
                    (file.path, _baseline_title(text, file.path), text),
                )
                connection.execute(
                    "INSERT INTO files (path, size, mtime_ns) VALUES (?, ?, ?)",
                    (file.path, file.size, file.mtime_ns),
                )
            connection.execute("COMMIT")
        return len(files)
    finally:
        connection.close()


def baseline_rescan(root: Path, db_path: Path) -> int:
    """Stat every note and compare with the recorded (size, mtime); returns how many differ."""
    connection = open_baseline(db_path)
    try:
        known = {
            str(path): (int(size), int(mtime))
            for path, size, mtime in connection.execute("SELECT path, size, mtime_ns FROM files")
        }
    finally:
        connection.close()
    changed = 0
    seen = 0
    for file in iter_markdown(root):
        seen += 1
        if known.get(file.path) != (file.size, file.mtime_ns):
            changed += 1
    return changed + (len(known) - seen if seen < len(known) else 0)


_BASELINE_WORD = re.compile(r"[^\W_]+")


def baseline_expression(query: str) -> str | None:
    """The baseline's MATCH expression: every word quoted, OR-ed; None when no words."""
    tokens = list(dict.fromkeys(_BASELINE_WORD.findall(query.lower())))
    if not tokens:
        return None
    return " OR ".join('"' + token + '"' for token in tokens)


def baseline_search(connection: Connection, query: str, limit: int = 10) -> list[tuple[str, str]]:
    """The baseline search: top ``limit`` by BM25, then (path, title) of each hit."""
    expression = baseline_expression(query)
    if expression is None:
        return []
    hits = connection.execute(
        "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?",
        (expression, limit),
    ).fetchall()
    if not hits:
        return []
    ids = [int(row[0]) for row in hits]
    rows = {
        int(row[0]): (str(row[1]), str(row[2]))
        for row in connection.execute(
            f"SELECT rowid, path, title FROM t WHERE rowid IN ({','.join('?' * len(ids))})", ids
        )
    }
    return [rows[doc_id] for doc_id in ids if doc_id in rows]


# -- statistics ------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """Linear-interpolated percentile (``fraction`` in [0, 1]) of ``values``."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def vocabulary_size() -> int:
    """Distinct surface forms in the generated vocabulary (before numbers and templates)."""
    return _vocabulary().size()


def cached_source_vault(
    name: str, size: int, key: str, what: str, fill: Callable[[Any], None]
) -> Path:
    """``.bench/<name>-<size>/source.sqlite``: the generated corpus of ``size`` notes
    indexed into a fresh vault, then ``fill(vault)``; built once per ``key`` (what
    ``fill`` depends on) and reused. ``what`` says in the log what the build does."""
    import sys

    from memtrove import Vault

    home = BENCH_DIR / f"{name}-{size}"
    source = home / "source.sqlite"
    marker = home / f"built-{key}"
    if source.exists() and marker.exists():
        return source
    home.mkdir(parents=True, exist_ok=True)
    for stale in home.glob("source.sqlite*"):
        stale.unlink()
    folder = corpus_dir(size)
    generate_corpus(folder, size)
    print(f"{what} into {source} (once) ...", file=sys.stderr, flush=True)
    with Vault.open(source, config_dir=home / "config") as vault:
        vault.add_collection(folder, name="bench")
        vault.update()
        fill(vault)
    marker.write_text("ok\n")
    return source
