"""The catalogue of secret shapes the redaction engine knows.

Each :class:`Shape` is a regular expression, the kind it is reported and stored as
(``[REDACTED:kind]``), the group holding the secret (0 for the whole match), and the literal
*triggers* of which at least one must occur in the text before the expression runs at all.
Triggers are what keeps redaction cheap: ``str.__contains__`` over a note costs well under a
microsecond, so a note without ``-----BEGIN``, ``://``, ``ghp_`` and the other triggers is
never scanned by a regular expression.

Three families:

- **formats**: tokens whose shape alone says what they are (provider API keys, private key
  blocks, password hashes, JWTs, webhook URLs); found anywhere, whatever surrounds them;
- **places**: credentials by where they sit (an ``Authorization:`` header, a ``.netrc``
  line, a JSON credential file's ``"auth"`` field); the places that need a little parsing
  (URL user info, command-line flags, Kubernetes Secrets) are in
  :mod:`memtrove.security.scanners`;
- **names**: a value assigned to a name that says secret (``DB_PASSWORD=...``,
  ``"api_key": "..."``, ``--token ...``) and a high-entropy string right after a secret-ish
  word in prose; these are judged in :mod:`memtrove.security.redaction`, since whether the
  value is a secret depends on what it looks like (``token: str`` is a type annotation,
  ``password = os.environ["X"]`` a lookup, ``max_tokens: 512`` a number).
"""

from __future__ import annotations

import functools
import re

from memtrove.patterns import LazyPattern

__all__ = [
    "FORMATS",
    "NAME_TRIGGERS",
    "PLACES",
    "SCANNED",
    "SECRET_NAME",
    "WEAK_NAME",
    "LazyPattern",
    "Shape",
]


class Shape:
    """One shape (see the module doc). A plain class with slots: creating a dataclass and
    fifty frozen instances of it cost a hook process most of a millisecond."""

    __slots__ = ("boundary", "flags", "group", "judged", "kind", "lowered", "regex", "triggers")

    def __init__(
        self,
        kind: str,
        regex: str,
        triggers: tuple[str, ...],
        group: int = 0,
        lowered: bool = False,  # matched against the lowercased text (literals in lowercase)
        judged: bool = False,  # the value must also look like a secret (not a word of prose)
        boundary: bool = True,  # the match starts a word (checked in code: a leading \b
        # makes the regex engine try every position instead of jumping to its literal prefix)
        flags: int = 0,
    ) -> None:
        self.kind = kind
        self.regex = regex
        self.triggers = triggers
        self.group = group
        self.lowered = lowered
        self.judged = judged
        self.boundary = boundary
        self.flags = flags

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use: most shapes never meet their trigger in a process, and
        compiling them all would cost a hook process ~10 ms."""
        return _compile(self.regex, self.flags)


@functools.cache
def _compile(regex: str, flags: int) -> re.Pattern[str]:
    return re.compile(regex, flags)


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
    # PEM, OpenSSH and PGP private keys: a whole block, or one cut before its END line
    # (then every line that still looks like base64 or an armour header goes, up to the
    # first line that does not); the line breaks may be JSON's literal \n. The search for
    # the END line stops at the next BEGIN: a text of BEGIN lines stays linear.
    _shape(
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:(?!-----BEGIN).){0,20000}?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*(?:[A-Za-z0-9+/=]+"
        r"|(?:Proc-Type|DEK-Info|Comment|Version|Hash|Charset|MessageID):[^\n\\]*)?"
        r"(?=\r?\n|(?:\\r)?\\n|[ \t]*\Z))*)",
        "-----BEGIN",
        flags=re.DOTALL,
        boundary=False,
    ),
    # PuTTY .ppk (versions 2 and 3): the private lines and their MAC; the public part stays.
    _shape(
        "private_key",
        r"Private-Lines:[ \t]*\d+(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*[A-Za-z0-9+/=]+"
        r"(?=\r?\n|(?:\\r)?\\n|[ \t]*\Z))*"
        r"(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*Private-(?:MAC|Hash):[ \t]*[0-9a-fA-F]+)?",
        "private-lines:",
        boundary=False,
    ),
    # A GCP service account's key id (its private key is a PEM block above).
    _shape(
        "private_key",
        r'"private_key_id"\s*:\s*"([0-9a-fA-F]{16,64})"',
        '"private_key_id"',
        group=1,
        boundary=False,
    ),
    # crypt(3) and htpasswd hashes: bcrypt, MD5-crypt and Apache's apr1, SHA-crypt,
    # yescrypt, Argon2, Django's PBKDF2, and LDAP-style {SHA}/{SSHA}.
    _shape(
        "password_hash",
        r"\$(?:2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}"
        r"|(?:apr1|1|5|6)\$(?:rounds=\d{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{22,86}"
        r"|(?:y|gy|7)\$[./A-Za-z0-9]{1,64}\$[./A-Za-z0-9]{1,64}\$[./A-Za-z0-9]{16,86}"
        r"|argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{8,}\$[A-Za-z0-9+/]{16,})",
        "$2",
        "$apr1$",
        "$1$",
        "$5$",
        "$6$",
        "$y$",
        "$gy$",
        "$7$",
        "$argon2",
        boundary=False,
    ),
    _shape(
        "password_hash",
        r"pbkdf2_sha(?:1|256|512)\$\d{1,9}\$[A-Za-z0-9./+]{1,64}\$[A-Za-z0-9+/=]{20,}",
        "pbkdf2_sha",
    ),
    _shape(
        "password_hash",
        r"\{(?:SHA|SSHA|SHA256|SSHA256|SHA512|SSHA512|MD5|SMD5)\}[A-Za-z0-9+/]{20,}={0,2}",
        "{sha",
        "{ssha",
        "{md5}",
        "{smd5}",
        boundary=False,
        flags=re.IGNORECASE,
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
    # Azure shared access signatures: the signature of a SAS URL or connection string.
    _shape(
        "azure_sas",
        r"(?:[?&;]|\b)sig=([A-Za-z0-9%+/=]{20,})",
        "sig=",
        group=1,
        boundary=False,
    ),
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
# Generic suffixes: any name ending in ``_KEY`` or ``_PAT`` may hold a secret
# (``APP_KEY``, ``STRIPE_KEY``, ``GITHUB_PAT``) and just as often does not (``sort_key``,
# ``topologyKey``); the value decides (see :func:`memtrove.security.values.strong`).
WEAK_NAME = LazyPattern(r"(?:key|pat)[0-9]*\Z")
# Every secret name contains one of these; a text without any is never searched for names.
NAME_TRIGGERS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "credential",
    "cookie",
    "_pat",
    "-pat",
)

PLACES: tuple[Shape, ...] = (
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

# The scanners of :mod:`memtrove.security.scanners` (imported when a trigger first occurs:
# most hook processes never meet one) and the triggers each starts from. The automaton
# reports the start of each command name and the whole name is read from there, so
# ``mysql`` finds ``mysqldump`` and ``mariadb`` finds ``mariadb-dump`` too.
SCANNED: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "commands",
        (
            "curl",
            "docker",
            "podman",
            "nerdctl",
            "helm",
            "mysql",
            "mariadb",
            "sshpass",
            "ssh-keygen",
            "htpasswd",
            "openssl",
            "kubectl",
        ),
    ),
    ("urls", ("://",)),
    ("kubernetes_secrets", ("kind: secret", '"kind": "secret"', '"kind":"secret"')),
    ("twilio", ("twilio",)),
)
