"""The redaction engine: every class of secret in several shapes, ordinary text left alone,
and properties (idempotent, never raises, a planted token never survives) under hypothesis."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove.security.patterns import FORMATS
from memtrove.security.redaction import DEFAULT, Redactor, compile_extra, redact, redact_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"
GO_PROPOSALS = Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose" / "go-proposals"

# (text, the secret that must go, the kind it is stored as)
SECRETS: list[tuple[str, str, str]] = [
    # known token formats
    (
        "key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z here",
        "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
        "openai_key",
    ),
    (
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AA",
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AA",
        "anthropic_key",
    ),
    (
        "push with ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "github_token",
    ),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
        "github_token",
    ),
    ("glpat-xxXXyyYYzzZZ0123456789", "glpat-xxXXyyYYzzZZ0123456789", "gitlab_token"),
    ("AWS key AKIAIOSFODNN7EXAMPLE in the config", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
    (
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "google_api_key",
    ),
    (
        "xoxb-2142893716-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-2142893716-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "slack_token",
    ),
    (
        "post to https://hooks.slack.com/services/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",
        "T024BE7LD/B01ABCD2EFG/x9Y8z7W6v5U4t3S2r1Q0p9O8",
        "slack_webhook",
    ),
    (
        "https://discord.com/api/webhooks/123456789012345678/AbC-dEf_GhI",
        "AbC-dEf_GhI",
        "discord_webhook",
    ),
    ("STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    (
        "signing secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "webhook_secret",
    ),
    (
        "HF token hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "huggingface_token",
    ),
    (
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_token",
    ),
    (
        "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",
        "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",
        "sendgrid_key",
    ),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "jwt",
    ),
    (
        "vault token hvs.CAESIJ1b3Y2x5ZXpxbWVhbnl0aGluZw",
        "hvs.CAESIJ1b3Y2x5ZXpxbWVhbnl0aGluZw",
        "vault_token",
    ),
    # PEM private keys, whole and cut before the END line
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq3\nabcdef==\n-----END RSA PRIVATE KEY-----\n",
        "MIIEowIBAAKCAQEA7bq3",
        "private_key",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACB\n",
        "QyNTUxOQAAACB",
        "private_key",
    ),
    (
        "paste:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7",
        "BKcwggSjAgEAAoIBAQC7",
        "private_key",
    ),
    # credentials by place
    ("redis://:s3cretPass@cache:6379/0", "s3cretPass", "credential_url"),
    ("DATABASE_URL=postgres://app:correct-horse@db:5432/main", "correct-horse", "credential_url"),
    ("amqp://guest:Gu3st!pw@rabbit/", "Gu3st!pw", "credential_url"),
    (
        "Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
        "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
        "auth_header",
    ),
    (
        "curl -H 'Authorization: Bearer tok_8f3k2j5h1g9d7s6a' https://api",
        "tok_8f3k2j5h1g9d7s6a",
        "auth_header",
    ),
    (
        '{"headers": {"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}}',
        "dXNlcjpwYXNzd29yZA==",
        "auth_header",
    ),
    ("X-Api-Key: 12345abcdef67890zz", "12345abcdef67890zz", "api_key"),
    ("Cookie: session=8f2a9c1e4b7d3f60; theme=dark", "8f2a9c1e4b7d3f60", "auth_header"),
    ("machine api.github.com login octo password s3cr3tpw", "s3cr3tpw", "netrc_password"),
    (
        '{"auths": {"https://index.docker.io/v1/": {"auth": "dXNlcjpwYXNzd29yZA=="}}}',
        "dXNlcjpwYXNzd29yZA==",
        "docker_auth",
    ),
    # names that say secret
    ("DB_PASSWORD=hunter2-but-longer", "hunter2-but-longer", "password"),
    ("export API_TOKEN='a b c d'", "a b c d", "token"),
    ("password: swordfish", "swordfish", "password"),
    ('{"client_secret": "GOCSPY-not-a-format-0123"}', "GOCSPY-not-a-format-0123", "secret"),
    ("apiKey = 'q8Zr1x'", "q8Zr1x", "api_key"),
    ("mysql --password hunter22 -h db", "hunter22", "password"),
    ("deploy --token=abcdef123 now", "abcdef123", "token"),
    (
        "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==;",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==",
        "account_key",
    ),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "secret_access_key",
    ),
    ("the staging password is hunter2", "hunter2", "password"),
    ("use the deploy token ghx8Kq93jfLs0aPq2mZ9 for staging", "ghx8Kq93jfLs0aPq2mZ9", "token"),
    (
        'service = {"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n"}',
        "MIIEvQIBADANBg",
        "private_key",
    ),
]

ORDINARY = [
    "The tokenizer splits text; the password reset flow is documented.",
    "max_tokens: 1500 and PIN=1234",
    "https://example.com/path?q=1 and http://localhost:8080/x",
    "git commit -m 'fix token refresh'",
    "token: str",
    'password = os.environ["DB_PASSWORD"]',
    "api_key = get_key()",
    'tokenizer = "porter unicode61"',
    "Token: the parser reads the next one",
    "Authorization is handled by the gateway; Authorization: the gateway handles it",
    "type inference is a two-pass algorithm; a low-pass filter",
    "a *rsa.PrivateKey, an *ecdsa.PrivateKey or an ed25519.PrivateKey",
    "password: ${DB_PASSWORD}",
    "token = self.token",
    "secret_name: prod-db",
    "the access key rotation runs every 90 days",
    "git show 3f2a9c1e4b7d3f60a1b2c3d4e5f60718293a4b5c",
    "passwordless login via magic links",
    "If a key is missing, the cache returns nil.",
]


@pytest.mark.parametrize(
    ("text", "secret", "kind"), SECRETS, ids=[s[2] + str(i) for i, s in enumerate(SECRETS)]
)
def test_every_class_of_secret_is_redacted_with_its_kind(text: str, secret: str, kind: str) -> None:
    redacted = redact_text(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted, redacted


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_text(text) == text


def test_what_surrounds_a_secret_survives() -> None:
    text = "DB_HOST=db.internal\nDB_PASSWORD=hunter2-but-longer\nPORT=8080\n"
    assert redact_text(text) == "DB_HOST=db.internal\nDB_PASSWORD=[REDACTED:password]\nPORT=8080\n"
    cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq3\n\nAfter the key comes prose."
    assert redact_text(cut).endswith("]\nAfter the key comes prose.")
    assert "MIIE" not in redact_text(cut)
    assert (
        redact_text("redis://:pw99x@cache:6379") == "redis://:[REDACTED:credential_url]@cache:6379"
    )


def test_structures_are_walked_and_secret_keys_go_whole() -> None:
    value = {
        "headers": {"Authorization": "Bearer q8Zr1x0Kp2", "Accept": "json"},
        "DB_PASSWORD": "hunter2",
        "max_tokens": 512,
        "items": ["ghp_16C7e42F292c6912E7710c838347Ae178B4a", "plain"],
    }
    redacted = redact(value)
    assert redacted["headers"] == {"Authorization": "[REDACTED:auth_header]", "Accept": "json"}
    assert redacted["DB_PASSWORD"] == "[REDACTED:password]"
    assert redacted["max_tokens"] == 512
    assert redacted["items"] == ["[REDACTED:github_token]", "plain"]


def test_extra_patterns_from_settings() -> None:
    engine = Redactor(compile_extra({"ticket_key": r"TCK-[0-9A-F]{8}"}))
    assert engine.redact("use TCK-0123ABCD now") == "use [REDACTED:ticket_key] now"
    grouped = Redactor(compile_extra([r"internal-pin: (\d{6})"]))
    assert grouped.redact("internal-pin: 123456") == "internal-pin: [REDACTED:custom]"
    for bad in ([r"("], {"Bad Kind": "x"}, [""]):
        with pytest.raises(ValueError):
            compile_extra(bad)


def test_redaction_is_idempotent_on_every_example() -> None:
    for text, _secret, _kind in SECRETS:
        once = redact_text(text)
        assert redact_text(once) == once


def test_real_notes_are_left_alone() -> None:
    """The example vault and, when present, real design documents: no false positive is
    allowed in text about code and design (findings there are listed if any)."""
    folders = [EXAMPLES] + ([GO_PROPOSALS] if GO_PROPOSALS.is_dir() else [])
    found: list[str] = []
    for folder in folders:
        for path in sorted(folder.rglob("*.md")):
            if "_PRIVATE" in path.parts:
                continue  # the example's planted secrets: see the next test
            text = path.read_text(encoding="utf-8")
            for finding in DEFAULT.findings(text):
                found.append(f"{path.name}: {finding.kind} {text[finding.start : finding.end]!r}")
    assert found == []


def test_the_examples_planted_secrets_are_found() -> None:
    text = (EXAMPLES / "_PRIVATE" / "api-keys-rotation.md").read_text(encoding="utf-8")
    redacted = redact_text(text)
    for secret in (
        "AKIAFAKE0000000000ZZ",
        "sk-test-NOT-A-REAL-KEY-0000",
        "confidential-zebra-fake-secret-0000",
    ):
        assert secret not in redacted


_FORMAT_KINDS = {shape.kind for shape in FORMATS} - {"private_key"}
_PLANTED = st.sampled_from(
    [secret for text, secret, kind in SECRETS if kind in _FORMAT_KINDS and secret in text.split()]
)
_FILLER = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x2FFF), max_size=200
)


@settings(max_examples=300, deadline=None)
@given(before=_FILLER, secret=_PLANTED, after=_FILLER)
def test_a_planted_token_never_survives_whatever_surrounds_it(
    before: str, secret: str, after: str
) -> None:
    text = f"{before} {secret} {after}"
    redacted = redact_text(text)
    assert secret not in redacted
    assert redact_text(redacted) == redacted


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(), max_size=2000))
def test_any_text_is_answered_and_only_loses_what_it_redacts(text: str) -> None:
    redacted = redact_text(text)
    for finding in DEFAULT.findings(text):
        assert finding.start < finding.end
    kept = re.sub(r"\[REDACTED:[a-z0-9_]+\]", "", redacted)
    assert len(kept) <= len(text)


def test_lone_surrogates_do_not_stop_redaction() -> None:
    text = "\ud800 token ghp_16C7e42F292c6912E7710c838347Ae178B4a \udfff"
    assert redact_text(text) == "\ud800 token [REDACTED:github_token] \udfff"
    assert redact({"k\ud800": ["DB_PASSWORD=hunter2\udc80x"]}) == {
        "k\ud800": ["DB_PASSWORD=[REDACTED:password]"]
    }


def test_json_credential_files_survive_as_json() -> None:
    service_account = {
        "type": "service_account",
        "project_id": "demo",
        "private_key_id": "0123456789abcdef0123456789abcdef01234567",
        "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----\n",
        "client_email": "bot@demo.iam.gserviceaccount.com",
    }
    text = json.dumps(service_account, indent=2)
    redacted = redact_text(text)
    parsed = json.loads(redacted)
    assert parsed["client_email"] == "bot@demo.iam.gserviceaccount.com"
    assert "MIIEvQ" not in redacted and parsed["private_key"].startswith("[REDACTED")
