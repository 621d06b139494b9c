"""The catalogue of secret shapes the redaction engine knows.

Each :class:`Shape` is a regular expression, the kind it is reported and stored as
(``[REDACTED:kind]``), the group holding the secret (0 for the whole match), and the literal
*triggers* of which at least one must occur in the text before the expression runs at all.
Triggers are what keeps redaction cheap: ``str.__contains__`` over a note costs well under a
microsecond, so a note without ``-----BEGIN``, ``://``, ``ghp_`` and the other triggers is
never scanned by a regular expression.

Three families:

- **formats**: tokens whose shape alone says what they are (provider API keys, PEM private
  key blocks, JWTs, webhook URLs); found anywhere, whatever surrounds them;
- **places**: credentials by where they sit (a password in a URL, an ``Authorization:`` header,
  a ``.netrc`` line, a JSON credential file's ``"auth"`` and ``"private_key"`` fields);
- **names**: a value assigned to a name that says secret (``DB_PASSWORD=...``,
  ``"api_key": "..."``, ``--token ...``) and a high-entropy string right after a secret-ish
  word in prose; these are judged in :mod:`memtrove.security.redaction`, since whether the
  value is a secret depends on what it looks like (``token: str`` is a type annotation,
  ``password = os.environ["X"]`` a lookup, ``max_tokens: 512`` a number).
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["FORMATS", "NAME_TRIGGERS", "PLACES", "SECRET_NAME", "LazyPattern", "Shape"]


@dataclass(frozen=True)
class Shape:
    kind: str
    regex: str
    triggers: tuple[str, ...]
    group: int = 0
    lowered: bool = False  # matched against the lowercased text (literals in lowercase)
    judged: bool = False  # the value must also look like a secret (not a word of prose)
    boundary: bool = True  # the match starts a word (checked in code: a leading \b makes
    # the regex engine try every position instead of jumping to its literal prefix)
    flags: int = 0

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: most shapes never meet their trigger in a process, and
        compiling them all would cost a hook process ~10 ms."""
        return _compile(self.regex, self.flags)


@functools.cache
def _compile(regex: str, flags: int) -> re.Pattern[str]:
    return re.compile(regex, flags)


class LazyPattern:
    """A regular expression compiled when first used (a hook process that never meets a
    secret word never pays for compiling the expressions that judge one)."""

    __slots__ = ("_compiled", "flags", "regex")

    def __init__(self, regex: str, flags: int = 0) -> None:
        self.regex = regex
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = _compile(self.regex, self.flags)
        return self._compiled

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(text, pos, endpos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(text, pos, endpos)

    def sub(self, replacement: str, text: str) -> str:
        return self.compiled.sub(replacement, text)

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text, pos, endpos)


def _shape(
    kind: str,
    regex: str,
    *triggers: str,
    group: int = 0,
    flags: int = 0,
    lowered: bool = False,
    judged: bool = False,
    boundary: bool = True,
) -> Shape:
    return Shape(kind, regex, triggers, group, lowered, judged, boundary, flags)


_B64 = r"A-Za-z0-9+/="

FORMATS: tuple[Shape, ...] = (
    # PEM private keys: a whole block, or one cut before its END line (then every line that
    # still looks like base64 goes, up to the first line that does not).
    _shape(
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.{0,12000}?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Comment):[^\n\\]*)?"
        r"(?=\r?\n|\\r?\\n|[ \t]*\Z))*)",
        "-----BEGIN",
        flags=re.DOTALL,
        boundary=False,
    ),
    _shape("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}\b", "AGE-SECRET-KEY-"),
    _shape("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{20,}", "sk-ant-"),
    _shape("openai_key", r"sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,}", "sk-"),
    _shape("github_token", r"github_pat_[A-Za-z0-9_]{22,}", "github_pat_"),
    _shape(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{30,}",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
    ),
    _shape(
        "gitlab_token",
        r"gl(?:pat|dt|rt)-[0-9A-Za-z_-]{20,}",
        "glpat-",
        "gldt-",
        "glrt-",
    ),
    _shape(
        "aws_access_key",
        r"(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        "AKIA",
        "ASIA",
        "ABIA",
        "ACCA",
        "A3T",
    ),
    _shape("google_api_key", r"AIza[0-9A-Za-z_-]{35}", "AIza"),
    _shape("google_oauth_token", r"ya29\.[0-9A-Za-z_-]{20,}", "ya29."),
    _shape("google_client_secret", r"GOCSPX-[0-9A-Za-z_-]{20,}", "GOCSPX-"),
    _shape("slack_token", r"xox[abposre]-(?:\d+-)?[A-Za-z0-9-]{10,}", "xox"),
    _shape("slack_token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "xapp-"),
    _shape(
        "slack_webhook",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]+",
        "hooks.slack.com",
        boundary=False,
    ),
    _shape(
        "discord_webhook",
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+",
        "/api/webhooks/",
        boundary=False,
    ),
    _shape("stripe_key", r"[rs]k_(?:live|test)_[0-9A-Za-z]{16,}", "k_live_", "k_test_"),
    _shape("webhook_secret", r"whsec_[A-Za-z0-9+/=_-]{16,}", "whsec_"),
    _shape("huggingface_token", r"(?:hf|api_org)_[A-Za-z0-9]{30,}", "hf_", "api_org_"),
    _shape("npm_token", r"npm_[A-Za-z0-9]{36}\b", "npm_"),
    _shape("pypi_token", r"pypi-AgE[A-Za-z0-9_-]{50,}", "pypi-AgE"),
    _shape("sendgrid_key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", "SG."),
    _shape("mailgun_key", r"key-[0-9a-zA-Z]{32}\b", "key-"),
    _shape("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}\b", "_v1_"),
    _shape(
        "shopify_token",
        r"shpat_[a-fA-F0-9]{32}\b",
        "shpat_",
        "shpss_",
        "shpca_",
        "shppa_",
    ),
    _shape("vault_token", r"hvs\.[A-Za-z0-9_-]{24,}", "hvs."),
    _shape("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?\b", "dapi"),
    _shape("telegram_bot_token", r"\d{8,10}:AA[0-9A-Za-z_-]{33}\b", ":AA"),
    _shape("square_token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", "sq0"),
    _shape("linear_key", r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}", "lin_"),
    _shape("groq_key", r"gsk_[A-Za-z0-9]{40,}", "gsk_"),
    _shape("xai_key", r"xai-[A-Za-z0-9]{60,}", "xai-"),
    _shape("replicate_token", r"r8_[A-Za-z0-9]{30,}", "r8_"),
    _shape("perplexity_key", r"pplx-[A-Za-z0-9]{40,}", "pplx-"),
    _shape("notion_token", r"secret_[A-Za-z0-9]{43}\b", "secret_"),
    _shape("notion_token", r"ntn_[A-Za-z0-9]{40,}\b", "ntn_"),
    _shape("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyJ"),
)

# The names whose values are secrets, as the last part of a name (``DB_PASSWORD``,
# ``apiKey``, ``client-secret``, ``x-api-token``); ``tokenizer``, ``max_tokens``,
# ``token_type`` and ``password_file`` end with something else and are not secrets. Matched
# against the lowercased name, at its end (trailing digits allowed: ``TOKEN2``).
SECRET_NAME = LazyPattern(  # "API key" as people write it in prose, too: one space allowed
    r"(?:pass(?:word|wd|phrase)?|pwd|secret(?:[_ -]?key)?|token|api[_ -]?key|apikey"
    r"|access[_ -]?key|account[_ -]?key|private[_ -]?key|signing[_ -]?key|encryption[_ -]?key"
    r"|master[_ -]?key|secret[_ -]?access[_ -]?key|auth|credentials?|cookie|session[_ -]?key)"
    r"[0-9]*\Z"
)
# Every secret name contains one of these; a text without any is never searched for names.
NAME_TRIGGERS = ("pass", "pwd", "secret", "token", "key", "auth", "credential", "cookie")

PLACES: tuple[Shape, ...] = (
    # scheme://user:password@host and scheme://:password@host (redis); the user name stays.
    _shape("credential_url", r"://[^\s:/@'\"<>]*:([^\s@/'\"<>]+)@", "://", group=1, boundary=False),
    # Authorization / Proxy-Authorization: the scheme (Bearer, Basic, Token, ...) stays.
    _shape(
        "auth_header",
        r"authorization[\"']?[^\S\n]*[:=][^\S\n]*[\"']?"
        r"(?:(?:bearer|basic|token|digest|negotiate|bot|apikey|sso-key|aws4-hmac-sha256)\s+)?"
        r"([^\s\"',;\\]+)",
        "authorization",
        group=1,
        lowered=True,
        judged=True,
        boundary=False,
    ),
    _shape(
        "auth_header",
        r"bearer\s+([a-z0-9._~+/=-]{12,})",
        "bearer",
        group=1,
        lowered=True,
        judged=True,
    ),
    _shape(
        "auth_header",
        r"basic\s+([a-z0-9+/]{12,}={0,2})(?![a-z0-9+/=])",
        "basic",
        group=1,
        lowered=True,
        judged=True,
    ),
    # .netrc: machine host login user password secret
    _shape(
        "netrc_password",
        r"machine\s+\S+\s+login\s+\S+\s+password\s+(\S+)",
        "machine",
        group=1,
        lowered=True,
    ),
    # Docker config.json "auths": {"registry": {"auth": "<base64 user:password>"}}
    _shape(
        "docker_auth", r'"auth"\s*:\s*"([A-Za-z0-9+/=]{8,})"', '"auth"', group=1, boundary=False
    ),
)
