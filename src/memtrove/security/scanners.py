"""Secrets found by reading a little structure rather than by one expression.

- **command lines**: the password flags of the commands shell history is full of
  (``curl -u user:pass``, ``docker login -p``, ``mysql -pPASS``, ``sshpass -p``,
  ``ssh-keygen -N``, ``htpasswd -b``, ``openssl -passin pass:``, ``kubectl create secret
  --from-literal``): the line after the command is split into words, as far as the next
  ``|``, ``;`` or ``&&`` (a ``\\`` continues it), and each command's flags are read the way
  that command reads them (``mysql -p`` alone prompts, and ``mysql -p db`` names a
  database, so only ``-pPASS`` is a password);
- **URL user info** with any characters: the last ``@`` before something that looks like
  a host ends it, so ``https://user:p/a@ss@host`` loses ``p/a@ss`` and
  ``https://<token>@github.com`` its token (a bare user name such as ``git@`` stays);
- **Kubernetes Secrets**: every value under ``data:`` and ``stringData:`` of a manifest of
  ``kind: Secret`` (YAML or JSON), wherever the ``kind`` line is;
- **Twilio**: account and key SIDs and 32-hex auth tokens near the word ``twilio``.

Each scanner is given where its trigger words are and reads a bounded window from there;
a trigger inside the window of the one before is skipped, so a hostile line of repeated
triggers costs one window per window, not one per trigger.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

from memtrove.security.patterns import LazyPattern
from memtrove.security.values import MARK, plausible, random_looking

__all__ = ["SCANNERS", "Scanner", "Span"]

Span = tuple[str, int, int]  # (kind, start, end) in the text
Scanner = Callable[[str, str, Sequence[int]], list[Span]]

_LINE_LIMIT = 4096
_WORD = LazyPattern(r"""(?:[^\s'"|;&]|'[^'\n]*'|"(?:[^"\\\n]|\\.)*")+|\|\|?|;|&&?""")
_COMMAND_NAME = LazyPattern(r"[a-z0-9_.-]*")
_FAMILIES = {
    "curl": "curl",
    **dict.fromkeys("docker podman nerdctl helm".split(), "login"),
    **dict.fromkeys(
        "mysql mysqldump mysqladmin mysqlimport mysqlshow mysqlcheck mysqlpump mysqlsh "
        "mysqlbinlog mariadb mariadb-dump mariadb-admin mariadb-import".split(),
        "mysql",
    ),
    "sshpass": "sshpass",
    "ssh-keygen": "ssh-keygen",
    "htpasswd": "htpasswd",
    "openssl": "openssl",
    "kubectl": "kubectl",
}


def _unquoted(text: str, start: int, end: int) -> tuple[int, int]:
    if end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]:
        return start + 1, end - 1
    return start, end


def _value(text: str, start: int, end: int, kind: str, *, loose: bool = True) -> list[Span]:
    start, end = _unquoted(text, start, end)
    if end <= start or not plausible(text[start:end], loose=loose):
        return []
    return [(kind, start, end)]


def _after_colon(text: str, start: int, end: int, kind: str) -> list[Span]:
    """``user:password``: the password."""
    start, end = _unquoted(text, start, end)
    colon = text.find(":", start, end)
    return [] if colon < 0 else _value(text, colon + 1, end, kind)


def _words(text: str, start: int) -> list[tuple[int, int]]:
    """The words of the command line from ``start``: to the line's end (a trailing ``\\``
    continues it), a ``|``, ``;`` or ``&``, or :data:`_LINE_LIMIT` characters."""
    limit = min(len(text), start + _LINE_LIMIT)
    words: list[tuple[int, int]] = []
    position = start
    while position < limit:
        newline = text.find("\n", position, limit)
        line_end = limit if newline < 0 else newline
        for match in _WORD.finditer(text, position, line_end):
            if match.group()[0] in "|;&":
                return words
            words.append(match.span())
        if newline < 0 or not text[position:line_end].rstrip().endswith("\\"):
            break
        if words and text[words[-1][0] : words[-1][1]] == "\\":
            words.pop()
        position = newline + 1
    return words


def _flag_value(
    text: str, words: list[tuple[int, int]], index: int, short: str, longs: tuple[str, ...]
) -> tuple[int, int] | None:
    """The value of the flag at ``words[index]`` when it is ``short`` (``-p X`` or
    ``-pX``) or one of ``longs`` (``--user X`` or ``--user=X``)."""
    start, end = words[index]
    word = text[start:end]
    for name in longs:
        if word == name:
            return words[index + 1] if index + 1 < len(words) else None
        if word.startswith(name + "="):
            return start + len(name) + 1, end
    if short and word == short:
        return words[index + 1] if index + 1 < len(words) else None
    if short and word.startswith(short) and len(word) > len(short) and not word.startswith("--"):
        return start + len(short), end
    return None


def _curl(text: str, words: list[tuple[int, int]]) -> list[Span]:
    found: list[Span] = []
    for index in range(len(words)):
        for short, longs in (("-u", ("--user", "--http-user")), ("-U", ("--proxy-user",))):
            value = _flag_value(text, words, index, short, longs)
            if value is not None:
                found += _after_colon(text, *value, "password")
        value = _flag_value(text, words, index, "", ("--oauth2-bearer",))
        if value is not None:
            found += _value(text, *value, "token")
    return found


def _short_flags(
    short: str, kind: str, *, attached_only: bool = False
) -> Callable[..., list[Span]]:
    def read(text: str, words: list[tuple[int, int]]) -> list[Span]:
        found: list[Span] = []
        for index in range(len(words)):
            start, end = words[index]
            if attached_only and end - start <= len(short):
                continue
            value = _flag_value(text, words, index, short, ())
            if value is not None:
                found += _value(text, *value, kind)
        return found

    return read


def _login(text: str, words: list[tuple[int, int]]) -> list[Span]:
    if not any(text[start:end] == "login" for start, end in words[:4]):
        return []
    return _short_flags("-p", "password")(text, words)


def _ssh_keygen(text: str, words: list[tuple[int, int]]) -> list[Span]:
    return _short_flags("-N", "password")(text, words) + _short_flags("-P", "password")(text, words)


def _htpasswd(text: str, words: list[tuple[int, int]]) -> list[Span]:
    """``htpasswd -b[c] FILE USER PASSWORD`` and ``htpasswd -nb USER PASSWORD``."""
    letters = ""
    positional: list[tuple[int, int]] = []
    skip_next = False
    for start, end in words:
        word = text[start:end]
        if skip_next:
            skip_next = False
        elif word.startswith("-") and len(word) > 1 and not positional:
            letters += word[1:]
            skip_next = word.endswith("C")  # -C COST takes a number
        else:
            positional.append((start, end))
    if "b" not in letters:
        return []
    place = 1 if "n" in letters else 2
    return _value(text, *positional[place], "password") if len(positional) > place else []


def _openssl(text: str, words: list[tuple[int, int]]) -> list[Span]:
    found: list[Span] = []
    for index in range(len(words) - 1):
        start, end = words[index]
        word = text[start:end]
        value_start, value_end = _unquoted(text, *words[index + 1])
        if word in ("-passin", "-passout", "-pass", "-password", "-passphrase"):
            if text.startswith("pass:", value_start):
                found += _value(text, value_start + 5, value_end, "password")
        elif word in ("-k", "-K"):
            found += _value(text, value_start, value_end, "password")
    return found


def _kubectl(text: str, words: list[tuple[int, int]]) -> list[Span]:
    found: list[Span] = []
    for index in range(len(words)):
        value = _flag_value(text, words, index, "", ("--from-literal",))
        if value is not None:
            start, end = _unquoted(text, *value)
            equals = text.find("=", start, end)
            if equals > 0:
                found += _value(text, equals + 1, end, "password")
    return found


_READERS: dict[str, Callable[[str, list[tuple[int, int]]], list[Span]]] = {
    "curl": _curl,
    "login": _login,
    "mysql": _short_flags("-p", "password", attached_only=True),
    "sshpass": _short_flags("-p", "password"),
    "ssh-keygen": _ssh_keygen,
    "htpasswd": _htpasswd,
    "openssl": _openssl,
    "kubectl": _kubectl,
}


# What a command line must hold for its reader to find anything: most mentions of
# ``kubectl`` or ``docker`` are not worth splitting into words.
_NEEDLES = {
    "curl": ("-u", "--user", "-U", "--proxy-user", "--oauth2-bearer"),
    "login": ("login",),
    "mysql": ("-p",),
    "sshpass": ("-p",),
    "ssh-keygen": ("-N", "-P"),
    "htpasswd": ("b",),
    "openssl": ("pass", "-k", "-K"),
    "kubectl": ("--from-literal",),
}


def _line_stop(text: str, start: int) -> int:
    """Where the command line from ``start`` ends for the search of its flags (a line
    ending in ``\\`` goes on, to :data:`_LINE_LIMIT`)."""
    stop = text.find("\n", start, start + _LINE_LIMIT)
    if stop < 0 or text[start:stop].rstrip().endswith("\\"):
        stop = min(len(text), start + _LINE_LIMIT)
    return stop


def commands(text: str, lowered: str, hits: Sequence[int]) -> list[Span]:
    found: list[Span] = []
    # family -> up to where its command lines were read (or its flags are known absent):
    # a mention inside adds nothing (``sshpass -p X ssh h mysql -pY`` still reads mysql's)
    covered: dict[str, int] = {}
    for hit in hits:
        if hit > 0 and (lowered[hit - 1].isalnum() or lowered[hit - 1] in "_-"):
            continue
        name = _COMMAND_NAME.match(lowered, hit)
        end = name.end() if name is not None else hit
        family = _FAMILIES.get(lowered[hit:end])
        if family is None or (end < len(text) and not text[end].isspace()):
            continue
        if hit < covered.get(family, -1):
            continue
        stop = _line_stop(text, end)
        if not any(text.find(needle, end, stop) >= 0 for needle in _NEEDLES[family]):
            covered[family] = stop
            continue
        words = _words(text, end)
        if words:
            covered[family] = words[-1][1]
            found += _READERS[family](text, words)
    return found


# --- URL user info --------------------------------------------------------------------

_URL_RUN = LazyPattern(r"""[^\s"'<>`]{1,2048}""")
_HOST = LazyPattern(r"(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252}))(?::\d{1,5})?")
_HOST_END = frozenset("/?#),;]")
_PORT_PATH = LazyPattern(r"\d{1,5}(?:[/?#]|\Z)")


def urls(text: str, lowered: str, hits: Sequence[int]) -> list[Span]:
    """The user info of ``scheme://user:password@host``, ``scheme://TOKEN@host``."""
    found: list[Span] = []
    covered = -1
    for hit in hits:
        start = hit + 3  # after "://"
        if start < covered:
            continue
        run = _URL_RUN.match(text, start)
        if run is None:
            continue
        covered = run.end()
        at = text.rfind("@", start, run.end())
        while at > start:
            inner = text.rfind("://", start, at)
            if inner >= 0:  # a URL inside a URL: https://proxy/?to=https://u:p@host
                start = inner + 3
            host = _HOST.match(text, at + 1, run.end())
            if host is not None and (host.end() == run.end() or text[host.end()] in _HOST_END):
                found += _user_info(text, start, at, lowered[host.start() : host.end()])
                break
            at = text.rfind("@", start, at)
    return found


def _user_info(text: str, start: int, at: int, host: str) -> list[Span]:
    if text.startswith(MARK, start):
        return []
    colon = text.find(":", start, at)
    kind = "sentry_dsn" if "sentry" in host else "credential_url"
    if colon < 0:  # a token as the user name: https://<token>@github.com
        user = text[start:at]
        if "/" in user or user.startswith(MARK):
            return []
        if (
            kind == "sentry_dsn"
            or random_looking(user)
            or (
                len(user) >= 20
                and any(c.isdigit() for c in user)
                and any(c.isalpha() for c in user)
            )
        ):
            return [(kind, start, at)]
        return []
    if any(c in text[start:colon] for c in "/?#"):
        return []  # a path, not a user name: https://example.com/a:b@c
    password = text[colon + 1 : at]
    if not password or password.startswith(MARK) or _PORT_PATH.match(password):
        return []  # host:8080/path/@scope
    if len(password) < 3 or plausible(password, loose=True):
        return [(kind, colon + 1, at)]
    return []


# --- Kubernetes Secrets ---------------------------------------------------------------

_DOCUMENT_LIMIT = 65_536
_MARKER = LazyPattern(r"\n---|```")
_KIND_LINE = LazyPattern(r'^[ \t-]*"?kind"?[ \t]*:', re.MULTILINE)
_YAML_BLOCK = LazyPattern(r"^([ \t]*)(?:data|stringData):[ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_YAML_ENTRY = LazyPattern(r"""([ \t]*)(?:-[ \t]+)?["']?[\w.-]+["']?:[ \t]*([^\n]*)""")
_JSON_BLOCK = LazyPattern(r'"(?:data|stringData)"\s*:\s*\{')
_JSON_ENTRY = LazyPattern(r'\s*"[\w.-]+"\s*:\s*"((?:[^"\\\n]|\\.){0,65536})"\s*,?')


def kubernetes_secrets(text: str, lowered: str, hits: Sequence[int]) -> list[Span]:
    found: list[Span] = []
    covered = -1
    # Document markers and code fences, found once: searching from every hit would read
    # the same stretch again for each ``kind: Secret`` line of a hostile text.
    markers = sorted(
        match.start() for match in _MARKER.finditer(lowered, max(0, hits[0] - _DOCUMENT_LIMIT))
    )
    for hit in hits:
        if hit < covered:
            continue
        word_end = lowered.find("secret", hit) + len("secret")
        if word_end < len(lowered) and (lowered[word_end].isalnum() or lowered[word_end] == "_"):
            continue  # kind: SecretProviderClass
        begin, end = _document(lowered, hit, word_end, markers)
        covered = end
        found += _yaml_data(text, begin, end) + _json_data(text, begin, end)
    return found


def _document(lowered: str, hit: int, word_end: int, markers: Sequence[int]) -> tuple[int, int]:
    """The manifest around a ``kind`` line: between YAML document markers and code fences,
    and no further than the ``kind`` of the manifests before and after it (kubectl writes
    ``data`` before ``kind``)."""
    begin = max(0, hit - _DOCUMENT_LIMIT)
    end = min(len(lowered), hit + _DOCUMENT_LIMIT)
    before = bisect.bisect_left(markers, hit) - 1
    if before >= 0:
        begin = max(begin, markers[before])
    after = bisect.bisect_left(markers, word_end)
    if after < len(markers):
        end = min(end, markers[after])
    position = hit
    while (position := lowered.rfind("kind", begin, position)) >= 0:
        line = lowered.rfind("\n", begin, position) + 1
        other = _KIND_LINE.match(lowered, max(line, begin), end)
        if other is not None and other.end() <= hit:
            begin = other.end()  # the manifest before this one ends here
            break
    following = _KIND_LINE.search(lowered, word_end, end)
    return begin, end if following is None else following.start()


def _yaml_data(text: str, begin: int, end: int) -> list[Span]:
    found: list[Span] = []
    for block in _YAML_BLOCK.finditer(text, begin, end):
        indent = len(block.group(1).expandtabs())
        position = block.end() + 1
        inside_scalar = -1  # the indent of a `key: |` entry whose lines are being read
        while position < end:
            line_end = text.find("\n", position, end)
            line_end = end if line_end < 0 else line_end
            line = text[position:line_end]
            if line.strip():
                depth = len(line) - len(line.lstrip())
                if depth <= indent:
                    break
                if inside_scalar >= 0 and depth > inside_scalar:
                    found.append(("kubernetes_secret", position + depth, line_end))
                else:
                    inside_scalar = -1
                    entry = _YAML_ENTRY.fullmatch(text, position, line_end)
                    if entry is not None and entry.group(2).strip():
                        value = entry.group(2).strip()
                        if value[0] in "|>":
                            inside_scalar = depth
                        elif not value.startswith(MARK):
                            start = entry.start(2)
                            found.append(
                                ("kubernetes_secret", *_unquoted(text, start, start + len(value)))
                            )
            position = line_end + 1
    return found


def _json_data(text: str, begin: int, end: int) -> list[Span]:
    found: list[Span] = []
    for block in _JSON_BLOCK.finditer(text, begin, end):
        position = block.end()
        while position < end:
            entry = _JSON_ENTRY.match(text, position, end)
            if entry is None:
                break
            if entry.group(1) and not entry.group(1).startswith(MARK):
                found.append(("kubernetes_secret", *entry.span(1)))
            position = entry.end()
    return found


# --- Twilio ---------------------------------------------------------------------------

_TWILIO_WINDOW = 400
_TWILIO = LazyPattern(r"\b(?:(AC|SK)[0-9a-fA-F]{32}|[0-9a-f]{32})\b")


def twilio(text: str, lowered: str, hits: Sequence[int]) -> list[Span]:
    found: list[Span] = []
    covered = -1
    for hit in hits:
        if hit < covered:
            continue
        start, covered = max(0, hit - _TWILIO_WINDOW, covered), hit + _TWILIO_WINDOW
        for match in _TWILIO.finditer(text, start, min(len(text), covered)):
            kind = "twilio_sid" if match.group(1) else "twilio_auth_token"
            found.append((kind, *match.span()))
    return found


# By the names :data:`memtrove.security.patterns.SCANNED` gives their triggers under.
SCANNERS: dict[str, Scanner] = {
    "commands": commands,
    "urls": urls,
    "kubernetes_secrets": kubernetes_secrets,
    "twilio": twilio,
}
