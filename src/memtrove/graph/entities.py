"""Named entities in documents: extraction (an LLM, or a heuristic without one), the quality
filters, and :func:`extract_entities`, which resolves and records them for one document.

The LLM answers ``(name, type)`` pairs from a fixed vocabulary (:data:`ENTITY_TYPES`). Every
candidate, from the LLM or the heuristic, passes the same filters: not the document's own
title (Levenshtein similarity > 0.85), at most 60 characters, not a template placeholder
or heading label, and a ``location`` only when it looks like one (an IP address, a VM
identifier, a short place name). A failed LLM call or an unreadable answer falls back to
the heuristic (fail-open): the document's entities are then written in one transaction
from whichever extractor answered, never half of them.

The heuristic, measured on hand-labelled proposals (``benchmarks/bench_entities.py``),
finds code identifiers in backticks, known tools and services, ``@handles``, authors on
``Author:`` lines, and capitalised multiword names.

:func:`document_entities` reads back what was recorded for a document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memtrove.errors import ModelError
from memtrove.graph.extracted import ExtractedEntity

if TYPE_CHECKING:
    from memtrove.db.connection import Connection
    from memtrove.graph.entity_resolution import Entity, Resolver
    from memtrove.models.protocols import LLM

__all__ = [
    "ENTITY_TYPES",
    "MAX_ENTITIES_PER_DOCUMENT",
    "MAX_NAME_CHARS",
    "EntityExtraction",
    "ExtractedEntity",
    "document_entities",
    "extract_entities",
    "filter_entities",
    "heuristic_entities",
    "heuristic_extraction",
    "llm_entities",
    "parse_entity_answer",
]

ENTITY_TYPES = ("person", "project", "service", "tool", "concept", "org", "location")
MAX_NAME_CHARS = 60
TITLE_SIMILARITY = 0.85  # a candidate this close to the document's title is the title
MAX_ENTITIES_PER_DOCUMENT = 30
LLM_BODY_CHARS = 4000  # what the LLM reads of a body
PROMPT_VERSION = "v1"

_BLOCKLIST = frozenset(
    """
    todo tbd tbc n/a na none null undefined example examples untitled placeholder lorem ipsum
    summary abstract background introduction overview conclusion conclusions notes note
    references reference proposal rationale implementation compatibility discussion author
    authors status decision context consequences goals non-goals motivation design details
    appendix faq questions open questions open issues alternatives alternatives considered
    related work prior art future work acknowledgements table of contents description usage
    installation changelog release notes title name type entity your name project name
    """.split()
) | frozenset(
    {
        "open questions",
        "open issues",
        "alternatives considered",
        "related work",
        "prior art",
        "future work",
        "table of contents",
        "release notes",
        "your name",
        "project name",
        "last updated",
    }
)
_PLACEHOLDER = re.compile(r"^(?:\{\{.*\}\}|<[^>]*>|\[[^\]]*\]|\$\{.*\}|%\w+%|x+|\.+|-+|_+)$")
_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$")
_IPV6 = re.compile(r"^[0-9a-fA-F:]{3,39}$")
_VM_IDENTIFIER = re.compile(r"^[A-Za-z][\w.-]*[-_]\d+[\w.-]*$|^[a-z]{2,}-[a-z]+-\d+[a-z]?$")
_ALPHANUMERIC = re.compile(r"[^\W_]")
_CONTROL = re.compile(r"[\x00-\x1f]")
_PLACE_NAME = re.compile(r"^[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}$")


@dataclass(frozen=True)
class EntityExtraction:
    """What :func:`extract_entities` recorded for one document."""

    doc_id: int
    source: str  # "llm" | "heuristic"
    entities: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, type)
    rejected: int = 0
    error: str | None = None  # why the LLM's answer was not used

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "source": self.source,
            "entities": [
                {"entity_id": identifier, "name": name, "type": kind}
                for identifier, name, kind in self.entities
            ],
            "rejected": self.rejected,
            "error": self.error,
        }


# -- the heuristic ----------------------------------------------------------------------------

# Tools and services named in prose, as written (case-insensitive) -> (canonical name, type).
KNOWN_NAMES: dict[str, tuple[str, str]] = {
    **{
        name.lower(): (name, "tool")
        for name in (
            "PostgreSQL MySQL SQLite MariaDB Redis Memcached Kafka RabbitMQ Kubernetes Docker"
            " Podman Helm Terraform Ansible Nginx Apache Elasticsearch OpenSearch MongoDB"
            " Cassandra DynamoDB Grafana Prometheus Jenkins Git Mercurial Subversion Bazel"
            " Make CMake LLVM GCC Clang Valgrind Linux FreeBSD OpenBSD NetBSD macOS Windows"
            " Android iOS Plan9 WebAssembly Wasm Python JavaScript TypeScript Rust Java Kotlin"
            " Swift Ruby Perl PHP Haskell Node.js Deno React Vue Angular gRPC GraphQL Protobuf"
            " JSON YAML XML TOML HTTP HTTPS HTTP/2 TLS SSH DNS TCP UDP OAuth JWT SQL CUDA"
            " Unicode UTF-8 POSIX DWARF ELF gofmt gopls godoc cgo Vim Emacs VS Code Xcode"
            " Chrome Firefox Safari Zig Erlang Elixir Scala Dart Lua OCaml Fortran COBOL C++"
        )
        .replace("VS Code", "VS_Code")
        .split()
    },
    "vs code": ("VS Code", "tool"),
    "vscode": ("VS Code", "tool"),
    "postgres": ("PostgreSQL", "tool"),
    "k8s": ("Kubernetes", "tool"),
    **{
        name.lower(): (name, "service")
        for name in (
            "GitHub GitLab Bitbucket Gerrit AWS S3 EC2 Lambda GCP BigQuery Azure Cloudflare"
            " Heroku Vercel Netlify Stripe Twilio Slack Discord Jira Confluence Sentry Datadog"
            " PagerDuty OpenAI Anthropic Travis CircleCI Codecov"
        ).split()
    },
    **{
        name.lower(): (name, "org")
        for name in ("Google Microsoft Apple Amazon Meta Mozilla Intel AMD ARM Oracle IBM".split())
    },
    "go": ("Go", "project"),
    "golang": ("Go", "project"),
}
_BACKTICKS = re.compile(r"`([^`\n]{2,60})`")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w]*(?:(?:[./:]|::)[A-Za-z_]\w*)*(?:\(\))?$")
_COMMAND = re.compile(r"^[a-z][\w.-]*(?: -{0,2}[a-z][\w.=-]*){1,3}$")  # `go get`, `git log -p`
_HANDLE = re.compile(r"(?<![\w.@])@([A-Za-z0-9][A-Za-z0-9_-]{1,38})\b")
_AUTHOR_LINE = re.compile(  # [^\S\n]: leading space of its own line, not blank lines before it
    r"^[^\S\n]*[*_]*(?:authors?|author\(s\)|by)[*_]*\s*:\s*(.+)$", re.I | re.M
)
_PERSON = re.compile(r"^[A-Z][a-zà-ÿ'’-]+(?: [A-Z]\.?)?(?: [A-Z][a-zà-ÿ'’-]+){1,2}$")
_CAPITALISED_RUN = re.compile(  # the lookahead first lets the scan skip to capitals
    r"((?=[A-Z])(?<![\w.])(?:[A-Z][a-z0-9]+|[A-Z]{2,}[a-z]*)(?:[ -](?:of |the |for )?"
    r"(?:[A-Z][a-z0-9]+|[A-Z]{2,}[a-z]*)){1,3})(?![\w])"
)
# Acronyms and constants: DNS, IPv6, SIGPROF, GOROOT_BOOTSTRAP, $GOPATH.
_ACRONYM = re.compile(r"\$?([A-Z][A-Z0-9_]{1,30}(?:v\d+)?)")
_GENERIC_ACRONYMS = frozenset(
    "I A OK TODO TBD FAQ API APIS URL URLS URI ID IDS UI UX OS IO PR CL RFC NB PS AKA ETC"
    " EG IE VS AM PM UTC TL DR NOTE WIP FIXME XXX".split()
)
_PATH = re.compile(r"[a-z][a-z0-9_-]*(?:/[a-z][a-z0-9_-]*)+")
_NOT_PATHS = frozenset({"and/or", "either/or", "read/write", "input/output", "on/off", "yes/no"})
_FILE_NAME = re.compile(
    r"[a-z][\w-]*\.(?:bash|sh|py|go|mod|sum|env|yaml|yml|toml|json|ini|cfg|conf)"
)
_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_DECLARATION = re.compile(
    r"(?=[ftcdsi])\b(?:func|type|class|def|struct|interface|trait|fn)\s+(?:\([^)]*\)\s*)?([A-Z]\w{2,})"
)
_VERSION = re.compile(r"\d+(?:\.\d+){0,2}")
# Prose is read as tokens: whatever lies between spaces and punctuation that never occurs
# inside a name (one fast pass; each token is then tested whole).
_TOKEN = re.compile(r"[^\s,;:!?()\[\]{}<>\"'`*|=“”‘]+")
_TOKEN_CHARACTER = re.compile(r"[^\s,;:!?()\[\]{}<>\"'`*|=“”‘]")
# A version after a known name: one space, any separators, then the version as a token.
_VERSION_FOLLOWING = r" [\s,;:!?()\[\]{}<>\"'`*|=“”‘]*(\d+(?:\.\d+){0,2})(?:’s)?\.*(?![^\s,;:!?()\[\]{}<>\"'`*|=“”‘])"
_VERSION_AFTER: dict[str, re.Pattern[str]] = {}
_MEMO_LIMIT = 200_000  # distinct tokens remembered (a few MB), then forgotten at once
_TOKEN_MEMO: dict[str, tuple[ExtractedEntity, bool]] = {}
_PLAIN_TOKENS: set[str] = set()
_HEADING = re.compile(r"^[ \t]*#.*$", re.M)  # headings are labels, not names
_COMMON_WORD_NAMES = frozenset(
    "go make swift dart lambda meta apple amazon arm rust ruby java react vue deno helm slack"
    " chrome safari git sentry travis".split()
)
_LEADING_WORDS = frozenset(
    "the a an this that these those in on at for of and or but if when while with we our"
    " it its as to by from is are be each some any all no not so then thus also however"
    " proposal see note sometimes because having existing since although once after before"
    " unlike like using use both either only even new old many most other such every first"
    " next finally currently today here there now instead otherwise what which who why how"
    " where my your their his her they you he she".split()
)
_CODE_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
# Bounded runs: a body is up to 5 MB, and an unbounded run re-scanned from each place it could
# start ("](" repeated without a ")", a long word without "@") took hours.
_LINK_TARGET = re.compile(r"\]\([^)\]]{0,2000}\)|https?://\S+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+")  # from a word's start: linear


def heuristic_entities(title: str, body: str) -> list[ExtractedEntity]:
    """Entities a document names, found without a model (unfiltered; see
    :func:`filter_entities`)."""
    text = _CODE_FENCE.sub(" ", body) if "```" in body or "~~~" in body else body
    text = _LINK_TARGET.sub(" ", text)
    has_at = "@" in text
    if has_at:
        text = _EMAIL.sub(" ", text)
    found: list[ExtractedEntity] = []
    if ":" in text:
        for line in _AUTHOR_LINE.findall(text):
            for part in re.split(
                r",|;| and |&", re.sub(r"\([^()]{0,500}\)|<[^<>]{0,500}>", " ", line)
            ):
                name = " ".join(part.split()).strip("*_ .\\")
                if _PERSON.match(name):
                    found.append(ExtractedEntity(name, "person"))
    for handle in _HANDLE.findall(text) if has_at else ():
        found.append(ExtractedEntity("@" + handle, "person"))
    for declared in _DECLARATION.findall(body):
        found.append(ExtractedEntity(declared, "concept"))
    prose = text
    if "`" in text:
        for code in _BACKTICKS.findall(text):
            code = code.strip().strip('"*,&').replace('"', "").replace("*", "")
            if _IDENTIFIER.match(code) and (len(code) > 3 or code[0].isupper()):
                found.append(ExtractedEntity(code, "concept"))
            elif _COMMAND.match(code):
                words = [word for word in code.split() if not word.startswith("-")]
                words = [word for word in words if "=" not in word]
                if len(words) >= 2 and words[0] not in _LEADING_WORDS:
                    found.append(ExtractedEntity(" ".join(words[:3]), "tool"))
        prose = _BACKTICKS.sub(" ", text)
    if "vs code" in prose.lower():
        found.append(ExtractedEntity("VS Code", "tool"))
    found += _token_entities(prose)
    for match in _CAPITALISED_RUN.finditer(_HEADING.sub("", prose) if "#" in prose else prose):
        words = match.group(1).split()
        while words and words[0].lower() in _LEADING_WORDS:
            words = words[1:]
        if len(words) < 2 or all(word.lower() in KNOWN_NAMES for word in words):
            continue
        found.append(ExtractedEntity(" ".join(words), "concept"))
    return _unique(found)


def _token_entities(prose: str) -> list[ExtractedEntity]:
    """Known names (and their versions: ``Go 1.5``), acronyms and constants, paths, snake
    case and file names among the prose's tokens, in order of first appearance. Each
    distinct token is judged once per process (:data:`_TOKEN_MEMO`); most are plain words,
    set aside in :data:`_PLAIN_TOKENS` and skipped by one set difference."""
    tokens = _TOKEN.findall(prose)
    wanted = set(tokens) - _PLAIN_TOKENS
    if not wanted:
        return []
    if len(_TOKEN_MEMO) > _MEMO_LIMIT or len(_PLAIN_TOKENS) > _MEMO_LIMIT:
        _TOKEN_MEMO.clear()
        _PLAIN_TOKENS.clear()
    found: list[ExtractedEntity] = []
    # in order of first appearance (dict keys keep it; sorting by tokens.index was quadratic:
    # 13 s for a note of 20,000 numbered headings)
    for raw in (token for token in dict.fromkeys(tokens) if token in wanted):
        judged = _TOKEN_MEMO.get(raw)
        if judged is None:
            entity, known = _judge_token(raw)
            if entity is None:
                _PLAIN_TOKENS.add(raw)
                continue
            judged = _TOKEN_MEMO[raw] = (entity, known)
        entity, known = judged
        found.append(entity)
        if known:  # a version right after the name, one space apart
            for following in _versions_after(prose, raw):
                found.append(ExtractedEntity(f"{entity.name} {following}", entity.entity_type))
    return found


def _judge_token(raw: str) -> tuple[ExtractedEntity | None, bool]:
    """The entity one prose token names (None for a plain word), and whether it is a known
    tool or service name (which a version may follow)."""
    token = raw.rstrip(".").removesuffix("'s").removesuffix("’s")
    if not token:
        return None, False
    lowered = token.lower()
    known = KNOWN_NAMES.get(lowered)
    if known is not None:
        if lowered in _COMMON_WORD_NAMES and not token[0].isupper():
            return None, False  # the verb, the word
        return ExtractedEntity(*known), True
    if token[0].isupper() or token[0] == "$":
        acronym = _ACRONYM.fullmatch(token)
        if acronym and acronym.group(1).upper().rstrip("S") not in _GENERIC_ACRONYMS:
            return ExtractedEntity(acronym.group(1), "concept"), False
    elif token[0].islower():
        if "/" in token:
            if _PATH.fullmatch(token) and token not in _NOT_PATHS:
                return ExtractedEntity(token, "concept"), False
        elif "_" in token:
            if _SNAKE_CASE.fullmatch(token):
                return ExtractedEntity(token, "concept"), False
        elif "." in token and _FILE_NAME.fullmatch(token):
            return ExtractedEntity(token, "tool"), False
    return None, False


def _versions_after(prose: str, raw: str) -> list[str]:
    """The versions that follow token ``raw`` after one space (``Go 1.5``, ``Go (1.5)``)."""
    pattern = _VERSION_AFTER.get(raw)
    if pattern is None:
        if len(_VERSION_AFTER) > 1000:
            _VERSION_AFTER.clear()
        pattern = _VERSION_AFTER[raw] = re.compile(re.escape(raw) + _VERSION_FOLLOWING)
    return [
        match.group(1)
        for match in pattern.finditer(prose)
        if match.start() == 0 or _TOKEN_CHARACTER.match(prose, match.start() - 1) is None
    ]


def _unique(entities: Sequence[ExtractedEntity]) -> list[ExtractedEntity]:
    seen: set[str] = set()
    unique: list[ExtractedEntity] = []
    for entity in entities:
        key = entity.name.lower()
        if key not in seen:
            seen.add(key)
            unique.append(entity)
    return unique


# -- the LLM ----------------------------------------------------------------------------------


def build_prompt(title: str, body: str) -> str:
    types = ", ".join(ENTITY_TYPES)
    return (
        "Extract the named entities of this document as a JSON array of objects "
        '{"name": ..., "type": ...}; type is one of: ' + types + ". Only proper names "
        "(people, projects, services, tools, concepts, organisations, locations); never the "
        "document's title, headings or placeholders. Answer with the JSON array only.\n\n"
        f"Title: {title[:200]}\n\n{body[:LLM_BODY_CHARS]}"
    )


def parse_entity_answer(answer: str) -> list[ExtractedEntity] | None:
    """The ``(name, type)`` pairs of an LLM answer (a JSON array, possibly in a markdown
    fence or wrapped in an object), or None when it holds no readable array."""
    text = answer.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return None
    try:
        items = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        return None
    if not isinstance(items, list):
        return None
    entities: list[ExtractedEntity] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        name, kind = item.get("name"), item.get("type")
        if not isinstance(name, str) or not isinstance(kind, str):
            continue
        kind = kind.strip().lower()
        entities.append(ExtractedEntity(" ".join(name.split()), kind))
    return entities


def llm_entities(llm: LLM, title: str, body: str) -> list[ExtractedEntity]:
    """The LLM's entities for a document (unfiltered); raises ModelError when the model
    fails or answers with something that is not a JSON array of entities."""
    from memtrove.errors import ModelResponseError

    answer = llm.complete(build_prompt(title, body), max_tokens=600, temperature=0.0)
    entities = parse_entity_answer(answer)
    if entities is None:
        raise ModelResponseError("the LLM's entity answer held no JSON array")
    return entities


# -- filters ----------------------------------------------------------------------------------


def _is_location(name: str) -> bool:
    if _IPV4.match(name) or (":" in name and _IPV6.match(name)) or _VM_IDENTIFIER.match(name):
        return True
    return len(name) <= 30 and bool(_PLACE_NAME.match(name))


def filter_entities(
    entities: Sequence[ExtractedEntity], title: str
) -> tuple[list[ExtractedEntity], int]:
    """The entities that pass the quality filters, and how many were rejected."""
    from rapidfuzz.distance import Levenshtein

    own_title = " ".join(title.split()).lower()
    kept: list[ExtractedEntity] = []
    rejected = 0
    seen: set[str] = set()
    for entity in entities:
        name = " ".join(entity.name.split()).strip("`'\"“”‘’ ")
        lowered = name.lower()
        acceptable = (
            bool(name)
            and len(name) <= MAX_NAME_CHARS
            and entity.entity_type in ENTITY_TYPES
            and lowered not in _BLOCKLIST
            and not _PLACEHOLDER.match(name)
            and _ALPHANUMERIC.search(name) is not None
            and not (
                own_title
                and Levenshtein.normalized_similarity(lowered, own_title) > TITLE_SIMILARITY
            )
            and (entity.entity_type != "location" or _is_location(name))
            and _CONTROL.search(name) is None
        )
        if acceptable and lowered in seen:
            continue  # the same name again: not a rejection
        if acceptable and len(kept) < MAX_ENTITIES_PER_DOCUMENT:
            seen.add(lowered)
            kept.append(ExtractedEntity(name, entity.entity_type))
        else:
            rejected += 1
    return kept, rejected


def heuristic_extraction(title: str, body: str) -> tuple[list[ExtractedEntity], int]:
    """The entities the heuristic finds that pass the filters, and how many did not."""
    return filter_entities(heuristic_entities(title, body), title)


# -- the entry point --------------------------------------------------------------------------


def extract_entities(
    connection: Connection,
    doc_id: int,
    title: str,
    body: str,
    llm: LLM | None = None,
    *,
    vault: str = "default",
    link: bool = True,
    resolver: Resolver | None = None,
    heuristic: tuple[list[ExtractedEntity], int] | None = None,
) -> EntityExtraction:
    """Extract, filter, resolve and record the entities of document ``doc_id``, replacing
    what an earlier run recorded for it (mentions, co-occurrences), then link it by
    ``entity`` edges to documents sharing a specific entity.

    With ``llm`` the model extracts; when it fails or answers unreadably the heuristic does
    (``error`` says why). Nothing is written until extraction is complete. ``link=False``
    records the mentions only (a bulk run links afterwards, when document frequencies are
    known, so an entity named everywhere links nothing); a bulk run also passes its
    ``resolver`` (see :func:`memtrove.graph.entity_resolution.record_mentions`), and may
    pass what :func:`heuristic_extraction` gave for the document, found ahead elsewhere.
    """
    from memtrove.graph.entity_resolution import link_shared_entities, record_mentions

    source, error = "heuristic", None
    candidates: list[ExtractedEntity] | None = None
    if llm is not None:
        try:
            candidates = llm_entities(llm, title, body)
            source = "llm"
        except ModelError as failure:
            error = str(failure)
    if candidates is not None:
        kept, rejected = filter_entities(candidates, title)
    else:
        kept, rejected = heuristic if heuristic is not None else heuristic_extraction(title, body)
    resolved = record_mentions(connection, doc_id, kept, vault=vault, resolver=resolver)
    if link:  # a bulk run links once every document's mentions are in (see enrich_entities)
        link_shared_entities(connection, doc_id, [identifier for identifier, _, _ in resolved])
    return EntityExtraction(doc_id, source, resolved, rejected, error)


def document_entities(connection: Connection, doc_id: int, limit: int = 100) -> list[Entity]:
    """The entities recorded as named in document ``doc_id`` (``entity_mentions``), by
    name."""
    from memtrove.graph.entity_resolution import Entity

    rows = connection.execute(
        "SELECT n.entity_id, n.entity_type, n.name, n.mention_count FROM entity_mentions m "
        "JOIN entity_nodes n ON n.entity_id = m.entity_id WHERE m.doc_id = ? "
        "ORDER BY LOWER(n.name), n.entity_id LIMIT ?",
        (doc_id, limit),
    ).fetchall()
    return [Entity(str(row[0]), str(row[1]), str(row[2]), int(row[3])) for row in rows]
