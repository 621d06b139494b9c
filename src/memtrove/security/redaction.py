"""One redaction engine for every write path: secrets become ``[REDACTED:kind]``.

The design says secrets are never stored or injected, so everything that writes text into
the vault or its side files goes through :meth:`Redactor.redact` first: indexed bodies (and
so their fragments, snippets and search index), ``remember`` and the memory entries, rules,
hook prompts (``context_usage``, ``hook_dedupe``, lookback), hook logs, the extraction queue,
the pre-compaction state file and mined conversations. What the hooks inject passes it once
more, for vaults written before redaction and collections stored verbatim.

Every text is matched in its canonical spelling (:mod:`memtrove.security.normalise`:
escapes decoded, invisible characters dropped, NFKC), and each finding takes out the whole
original spelling of the secret, so ``pass\u200bword=...``, a fullwidth ``ＰＡＳＳＷＯＲＤ``
or a key split by a zero-width space are redacted like their plain spelling.

What is found (the shapes are in :mod:`memtrove.security.patterns` and
:mod:`memtrove.security.scanners`):

- tokens whose format says what they are (``sk-...``, ``sk-ant-...``, ``ghp_...``,
  ``AKIA...``, ``xoxb-...``, ``hf_...``, ``whsec_...``, ``AIza...``, ``ya29.``, JWTs, Slack
  and Discord webhook URLs, Azure SAS signatures, and three dozen more); private keys in any
  container (PEM, OpenSSH, PGP, also cut before their END line or inside a JSON string;
  PuTTY's private lines; a GCP ``private_key_id``); crypt and htpasswd hashes;
- credentials by their place: URL user info with any characters (the last ``@`` before the
  host ends it; a token as the user name; Sentry DSNs), the password flags of ``curl``,
  ``docker login``, ``mysql``, ``sshpass``, ``ssh-keygen``, ``htpasswd``, ``openssl`` and
  ``kubectl create secret``, the value of an ``Authorization:`` header whatever its scheme,
  ``X-Api-Key:``/``Cookie:`` headers, a ``.netrc`` password, a Docker ``"auth"`` field, the
  values of a Kubernetes Secret, Twilio SIDs and auth tokens;
- values assigned to a secret-looking name whatever its prefix (``DB_PASSWORD=...``,
  ``PGPASSWORD=``, ``"client_secret": "..."``, ``apiKey: ...``, ``--token ...``,
  ``APP_KEY=base64:...``, ``GITHUB_PAT=``), and a high-entropy string just after a
  secret-ish word in prose ("the deploy token is 9fK2...").

A value is only redacted when it could be a secret: ``token: str`` (a type), ``password =
os.environ["X"]`` (a lookup), ``${TOKEN}`` (a placeholder), ``max_tokens: 512`` (a number),
``tokenizer = "porter"`` (not a secret name) and "the password reset flow" (prose) are left
alone, so notes about code stay searchable. Names that are as often not secret
(``sort_key``, ``topologyKey``, ``sig-auth``, ``PASS:`` in test output) need a value that
looks generated, unless they are environment names (``STRIPE_KEY=``).

Why not a detector library: detect-secrets 1.5.0 (the reference one) was measured on 5,000
lines of the Kubernetes and Go design documents at 353 microseconds per line with 32,226
findings (its entropy plugins flag ordinary words), and at 91 microseconds per line with
its 25 other plugins alone; this engine reads the same lines at about 2.5 microseconds each
with no finding, and covers shapes those plugins do not (command-line flags, URL user info
with any characters, Kubernetes Secrets, hidden spellings). See
``benchmarks/bench_redaction.py`` for what it adds to indexing and to a hook.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ahocorasick_rs import AhoCorasick, Implementation, MatchKind

from memtrove.security.normalise import normalise
from memtrove.security.patterns import (
    FORMATS,
    NAME_TRIGGERS,
    PLACES,
    SCANNED,
    SECRET_NAME,
    WEAK_NAME,
    LazyPattern,
    Shape,
)
from memtrove.security.values import MARK, plausible, random_looking, strong

__all__ = ["DEFAULT", "Finding", "Redactor", "placeholder", "redact", "redact_text"]

_MARK = MARK
_DFA_AFTER = 262_144  # characters read before the automaton is rebuilt as a DFA
# NAME <sep> value, looked for right after a secret name (and its closing quote/bracket).
_ASSIGNMENT = LazyPattern(
    r"""(["'`]?\]?)([^\S\n]*)(:=|=>|=|:)([^\S\n]*)"""
    r"""(?:(["'`])((?:(?!\5)[^\n\\]|\\.){1,500})\5|([^\s"'`,;&)}\]<>\\]{1,1024}))"""
)
_FLAG_VALUE = LazyPattern(
    r"""[^\S\n]+(?:(["'])([^"'\n]{1,500})\1|([^\s"',;&)}\]<>-][^\s"',;&)}\]<>]{0,1023}))"""
)
_PROSE_VALUE = LazyPattern(
    r"[^\S\n]+(?:is|was|=|:)[^\S\n]+[\"'`]?([^\s\"'`,;)]{1,1024})", re.IGNORECASE
)
# Values are read up to VALUE_SCAN characters (each secret word is looked at, and a line of
# "password=" repeated made each look read to the end of the line: quadratic); a value that
# fills it is redacted to the end of its run of non-space characters (_RUN).
VALUE_SCAN = 1024
_RUN = LazyPattern(r"\S*")
_NEARBY_TOKEN = LazyPattern(r"[A-Za-z0-9+/=_.~-]{16,}")
_NEARBY_SPAN = 48
_NAME_TAIL = LazyPattern(r"[a-z0-9_-]{0,128}")
_SURROGATE = LazyPattern(r"[\ud800-\udfff]")
_CLUE = LazyPattern(r"[0-9!@#$%^&*+=?~|]")  # every secret in prose has one of these


class Finding(NamedTuple):
    """One secret in a text: its kind and where it is (``start``/``end`` in characters)."""

    kind: str
    start: int
    end: int


def placeholder(kind: str) -> str:
    return f"{_MARK}:{kind}]"


def _name_boundary(text: str, start: int, end: int) -> bool:
    """The secret word starts a name part: ``db_password``, ``dbPassword``, ``APITOKEN``; not
    ``bypass`` or ``compass``."""
    if start == 0:
        return True
    before = text[start - 1]
    if not before.isalpha():
        return True
    word = text[start:end]
    if before.islower():
        # pgpassword, csrftoken: these words end a name whatever is glued before them
        return word[0].isupper() or word.startswith(_GLUED)
    return word.isupper()


_GLUED = ("password", "passwd", "secret", "token")


def _weak_boundary(text: str, start: int) -> bool:
    """A generic suffix (``_KEY``, ``-pat``, ``stripeKey``) ends a longer name: ``monkey``
    and ``hotkey`` are words, and a bare ``key:`` is everywhere in YAML."""
    if start == 0:
        return False
    before = text[start - 1]
    return before in "_-." or (before.islower() and text[start].isupper())


class Redactor:
    """Finds and replaces secrets; see the module doc. ``extra`` adds patterns of one's own:
    ``(kind, regex)`` pairs (group 1 is the secret when there is one, else the match); they
    have no trigger, so each runs over every text.

    One pass of an Aho-Corasick automaton (every shape's triggers and the secret-name words,
    lowercased) over the lowercased text says which shapes can match at all and where the
    secret words are; only those shapes' expressions run. A literal-prefixed expression then
    jumps between candidate places in C, so a note costs a few nanoseconds per character.
    """

    def __init__(self, extra: Iterable[tuple[str, str]] = ()) -> None:
        self.extra: tuple[tuple[str, str], ...] = tuple((kind, regex) for kind, regex in extra)
        shapes: list[Shape] = [*FORMATS, *PLACES]
        self._always: list[Shape] = []
        for kind, regex in self.extra:
            compiled = re.compile(regex)
            self._always.append(Shape(kind, regex, (), 1 if compiled.groups else 0, boundary=False))
        self._shapes = tuple(shapes)
        self._scanners = tuple(name for name, _ in SCANNED)
        # Leftmost-longest matching (not every overlap: several times faster) reports the
        # longest trigger where several start ("authorization" over "auth", "sk-ant-" over
        # "sk-"), so a common word triggers only what starts with it.
        wanted: dict[str, set[int]] = {word: set() for word in NAME_TRIGGERS}
        for number, shape in enumerate(shapes):
            for trigger in shape.triggers:
                wanted.setdefault(trigger.lower(), set()).add(number)
        for number, (_name, triggers) in enumerate(SCANNED, start=len(shapes)):
            for trigger in triggers:
                wanted.setdefault(trigger, set()).add(number)
        self._words = sorted(wanted)
        self._shapes_of = [tuple(sorted(wanted[word])) for word in self._words]
        self._is_name = [any(word.startswith(n) for n in NAME_TRIGGERS) for word in self._words]
        self._scanned = [max(wanted[word], default=-1) >= len(shapes) for word in self._words]
        self._scanned_words = frozenset(
            number for number, scanned in enumerate(self._scanned) if scanned
        )
        # The library's own choice first (an NFA, built in half the time: a hook process
        # redacts a few kilobytes); a DFA, three times faster per character, once the
        # engine has read enough for its build to pay (indexing, mining, `redact`).
        self._automaton = AhoCorasick(self._words, matchkind=MatchKind.LeftmostLongest)
        self._until_dfa = _DFA_AFTER

    def findings(self, text: str) -> list[Finding]:
        """Every secret in ``text``, in order, overlaps merged. The text is matched in its
        canonical spelling (:mod:`memtrove.security.normalise`); each finding is the span of
        the original that holds it, invisible characters and escapes included."""
        if not text:
            return []
        canonical = normalise(text)
        if canonical is None:
            return self._findings(text)
        found = []
        for finding in self._findings(canonical.text):
            start, end = canonical.span(finding.start, finding.end)
            found.append(Finding(finding.kind, start, end))
        return _merge(found)

    def _findings(self, text: str) -> list[Finding]:
        if self._until_dfa > 0:
            self._until_dfa -= len(text)
            if self._until_dfa <= 0:
                self._automaton = AhoCorasick(
                    self._words,
                    matchkind=MatchKind.LeftmostLongest,
                    implementation=Implementation.DFA,
                )
        lowered = _lower(text)
        spans: list[Finding] = []
        try:
            hits = self._automaton.find_matches_as_indexes(lowered)
        except UnicodeEncodeError:  # lone surrogates: the automaton reads UTF-8
            hits = self._automaton.find_matches_as_indexes(_SURROGATE.sub("\ufffd", lowered))
        if not hits and not self._always:
            return []
        words = {hit[0] for hit in hits}
        triggered = {shape for word in words for shape in self._shapes_of[word]}
        is_name = self._is_name
        name_hits = [end for word, _start, end in hits if is_name[word]]
        count = len(self._shapes)
        for number in sorted(triggered):
            if number < count:
                self._scan(self._shapes[number], text, lowered, spans)
        if not self._scanned_words.isdisjoint(words):
            starts: dict[int, list[int]] = {}
            scanned, shapes_of = self._scanned, self._shapes_of
            for word, start, _end in hits:
                if scanned[word]:
                    for number in shapes_of[word]:
                        starts.setdefault(number, []).append(start)
            from memtrove.security.scanners import SCANNERS

            for number, name in enumerate(self._scanners, start=count):
                if number in starts:
                    scanner = SCANNERS[name]
                    spans.extend(Finding(*span) for span in scanner(text, lowered, starts[number]))
        for shape in self._always:
            self._scan(shape, text, lowered, spans)
        if name_hits:
            spans.extend(_named(text, lowered, name_hits))
        return _merge(spans)

    @staticmethod
    def _scan(shape: Shape, text: str, lowered: str, spans: list[Finding]) -> None:
        for match in shape.pattern.finditer(lowered if shape.lowered else text):
            start, end = match.span(shape.group)
            if start == end or (shape.boundary and _inside_word(text, match.start())):
                continue
            value = text[start:end]
            if value.startswith(_MARK) or (shape.judged and not plausible(value, loose=False)):
                continue
            spans.append(Finding(shape.kind, start, end))

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED:kind]``."""
        found = self.findings(text)
        if not found:
            return text
        parts: list[str] = []
        position = 0
        for finding in found:
            parts.append(text[position : finding.start])
            parts.append(placeholder(finding.kind))
            position = finding.end
        parts.append(text[position:])
        return "".join(parts)

    def redact_value(self, value: Any) -> Any:
        """``value`` with every secret replaced: strings, and dicts and lists of them; a
        string under a secret-looking key (``"password"``, ``"Authorization"``) goes whole."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            result: dict[Any, Any] = {}
            for key, item in value.items():
                kind = secret_key_kind(key) if isinstance(key, str) else None
                if kind and isinstance(item, str) and plausible(item, loose=True):
                    result[key] = placeholder(kind)
                else:
                    result[key] = self.redact_value(item)
            return result
        if isinstance(value, (list, tuple)):
            return [self.redact_value(item) for item in value]
        return value


def _lower(text: str) -> str:
    """``text`` lowercased, position for position (``str.lower`` lengthens a few letters, such
    as the dotted capital I; those stay as they are)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    end = len(text) if end < 0 else end
    for quote in "\"'":
        closing = text.find(quote, position, end)
        if closing >= 0:
            end = closing
    return end


def _inside_word(text: str, start: int) -> bool:
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def _named(text: str, lowered: str, hits: Iterable[int]) -> list[Finding]:
    """Values of secret names and high-entropy strings just after secret words; ``hits``
    are where a secret word ends in ``lowered``. Most hits are prose ("the token is
    refreshed"), so the cheap checks come first."""
    found: list[Finding] = []
    seen: set[int] = set()
    covered = 0  # the end of the last secret found: a secret word inside it adds nothing
    tail_match = _NAME_TAIL.compiled.match  # looked up once: this loop runs per secret word
    assignment_match = _ASSIGNMENT.compiled.match
    clue_search = _CLUE.compiled.search
    name_search = SECRET_NAME.compiled.search
    weak_search = WEAK_NAME.compiled.search
    for hit in hits:
        tail = tail_match(lowered, hit)
        end = tail.end() if tail is not None else hit
        if end in seen or end < covered:
            continue
        seen.add(end)
        if found:
            covered = max(covered, found[-1].end)
        assignment = assignment_match(text, end)
        if assignment is None and clue_search(text, end, end + _NEARBY_SPAN) is None:
            continue  # nothing after the word could be a secret
        word = name_search(lowered, max(0, end - 48), end)
        if word is not None and _name_boundary(text, word.start(), word.end()):
            name_start = _name_start(lowered, word.start())
            # "auth" (sig-auth, oauth) and a bare "pass" (PASS: TestX) name a secret
            # only when the value looks like one; so do the generic suffixes below.
            weak = word.group() == "auth" or (word.group() == "pass" and name_start == word.start())
        else:
            if lowered[end - 1] not in "ty0123456789":
                continue  # cannot end in key or pat
            word = weak_search(lowered, max(0, end - 16), end)
            if word is None or not _weak_boundary(text, word.start()):
                continue
            name_start = _name_start(lowered, word.start())
            weak = True
        if text.startswith(_MARK + ":", name_start - len(_MARK) - 1):
            continue  # the kind inside a placeholder of ours
        kind = _kind_of(word.group())
        if assignment is not None:
            # APP_KEY=..., NPM_AUTH: ... (an environment name with a prefix)
            env_name = name_start < word.start() and text[name_start:end].isupper()
            finding = _assigned(text, kind, assignment, weak=weak and not env_name)
            if finding is not None:
                found.append(finding)
            elif assignment.group(7) is not None:
                # an unquoted value judged not a secret: the secret words inside it were
                # judged with it (a line of "a_key=" repeated reads each value once)
                covered = max(covered, assignment.end(7))
            continue
        if lowered.startswith("-", name_start) and (
            name_start == 0 or text[name_start - 1].isspace()
        ):
            flag = _FLAG_VALUE.match(text, end)
            if flag is not None:
                group = 2 if flag.group(2) is not None else 3
                value = flag.group(group)
                if strong(value) if weak else plausible(value, loose=group == 2):
                    found.append(_whole_run(text, kind, *flag.span(group)))
                continue
        prose = _PROSE_VALUE.match(text, end)
        if prose is not None:
            value = prose.group(1)
            if strong(value) if weak else plausible(value, loose=False):
                found.append(_whole_run(text, kind, *prose.span(1)))
                continue
        if weak or " " in word.group():
            continue  # "API key" in a sentence: only a value given to it (":", "=", "is")
        for nearby in _NEARBY_TOKEN.finditer(text, end, min(len(text), end + _NEARBY_SPAN)):
            if random_looking(nearby.group()):
                found.append(Finding(kind, *nearby.span()))
                break
    return found


def _whole_run(text: str, kind: str, start: int, end: int) -> Finding:
    """A value read up to :data:`VALUE_SCAN` characters goes to the end of its run."""
    run = _RUN.match(text, end) if end - start >= VALUE_SCAN else None
    return Finding(kind, start, run.end() if run is not None else end)


def _assigned(
    text: str, kind: str, assignment: re.Match[str], *, weak: bool = False
) -> Finding | None:
    """The value of ``NAME <sep> value`` when it could be a secret (``weak``: when it
    looks like one, whatever the syntax)."""
    quote = assignment.group(5)
    group = 6 if quote else 7
    value = assignment.group(group)
    if not quote and value.startswith("//"):
        return None  # scheme://...: a URL, judged by its user info
    spaced = bool(assignment.group(2) or assignment.group(4))
    # what follows on the line, as far as it tells (a comment, or nothing but spaces)
    rest = text[assignment.end() : assignment.end() + 256].split("\n", 1)[0]
    last_on_line = not rest.strip() or rest.lstrip().startswith(("#", "//"))
    loose = quote in ("'", '"') or not spaced or last_on_line
    if not (strong(value) if weak else plausible(value, loose=loose)):
        return None
    value_start, value_end = assignment.span(group)
    if kind == "auth_header" and not quote:  # Cookie: a=1; b=2 goes whole
        return Finding(kind, value_start, _line_end(text, value_end))
    return _whole_run(text, kind, value_start, value_end)  # a quoted value stops at 500


def _name_start(lowered: str, position: int) -> int:
    """Where the name holding the secret word at ``position`` starts (at most 256 back)."""
    least = max(0, position - 256)
    while position > least and (lowered[position - 1].isalnum() or lowered[position - 1] in "_-."):
        position -= 1
    return position


_HEADER_KEYS = {
    "authorization": "auth_header",
    "proxy-authorization": "auth_header",
    "cookie": "auth_header",
    "set-cookie": "auth_header",
    "x-api-key": "auth_header",
}


def secret_key_kind(key: str) -> str | None:
    """The kind a dict key names when its value is a secret (``"DB_PASSWORD"``,
    ``"apiKey"``, ``"Authorization"``), else None."""
    canonical = normalise(key)
    key = key if canonical is None else canonical.text
    lowered = key.lower()
    if lowered in _HEADER_KEYS:
        return _HEADER_KEYS[lowered]
    match = SECRET_NAME.search(lowered)
    if match is not None and _name_boundary(key, match.start(), match.end()):
        return _kind_of(match.group())
    # a generic suffix counts in an environment name only: {"APP_KEY": ...}, not "sort_key"
    weak = WEAK_NAME.search(lowered)
    if weak is not None and _weak_boundary(key, weak.start()) and key.isupper():
        return _kind_of(weak.group())
    return None


def _kind_of(name: str) -> str:
    """The kind a secret name is reported as: ``password``, ``token``, ``api_key``, ..."""
    squashed = name.lower().replace("-", "").replace("_", "").replace(" ", "")
    squashed = squashed.rstrip("0123456789")
    if squashed.startswith(("pass", "pwd")):
        return "password"
    if squashed.startswith("credential"):
        return "credential"
    return _KINDS.get(squashed, squashed)


_KINDS = {
    "cookie": "auth_header",
    "pat": "token",
    "apikey": "api_key",
    "accesskey": "access_key",
    "accountkey": "account_key",
    "privatekey": "private_key",
    "signingkey": "signing_key",
    "encryptionkey": "encryption_key",
    "masterkey": "master_key",
    "secretkey": "secret_key",
    "secretaccesskey": "secret_access_key",
    "sessionkey": "session_key",
}


def _merge(spans: list[Finding]) -> list[Finding]:
    if len(spans) < 2:
        return spans
    spans.sort(key=lambda f: (f.start, -f.end))
    merged = [spans[0]]
    for finding in spans[1:]:
        last = merged[-1]
        if finding.start < last.end:
            if finding.end > last.end:
                merged[-1] = Finding(last.kind, last.start, finding.end)
            continue
        merged.append(finding)
    return merged


DEFAULT = Redactor()


def redact_text(text: str) -> str:
    """``text`` through the default engine (no extra patterns)."""
    return DEFAULT.redact(text)


def redact(value: Any) -> Any:
    """``value`` (text, dicts and lists of it) through the default engine."""
    return DEFAULT.redact_value(value)


def compile_extra(patterns: Sequence[object] | Mapping[str, object]) -> list[tuple[str, str]]:
    """Settings' extra patterns as ``(kind, regex)`` pairs: a list of regexes (kind
    ``custom``) or a mapping of kind to regex. ValueError says which one is bad."""
    items: list[tuple[str, object]]
    if isinstance(patterns, Mapping):
        items = [(str(kind), regex) for kind, regex in patterns.items()]
    else:
        items = [("custom", regex) for regex in patterns]
    checked: list[tuple[str, str]] = []
    for kind, regex in items:
        if not isinstance(regex, str) or not regex:
            raise ValueError(f"pattern {regex!r} is not a regular expression")
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", kind):
            raise ValueError(f"kind {kind!r}: use 1-40 of a-z, 0-9 and '_'")
        try:
            re.compile(regex)
        except re.error as error:
            raise ValueError(
                f"pattern {regex!r} is not a valid regular expression: {error}"
            ) from None
        checked.append((kind, regex))
    return checked
