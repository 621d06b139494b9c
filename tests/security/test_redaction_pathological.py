"""Redaction reads each secret word's value a bounded way: a line of ``password=`` (or
``key:``, ``api_key=``) repeated made every word read to the end of the line, and a 200 KB
line took 40 s (a megabyte, minutes). A value longer than the part read is still redacted
to its end. The timeout is a hang guard, generous on any machine."""

from __future__ import annotations

import random
import string

import pytest

from memtrove.security.redaction import DEFAULT, VALUE_SCAN

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    "unit", ["password=", "key:", "api_key=", "cookie: ", "passwordpassword", "--password "]
)
def test_a_line_of_repeated_secret_words(unit: str) -> None:
    text = unit * (1_000_000 // len(unit))
    redacted = DEFAULT.redact(text)
    assert "[REDACTED" in redacted or redacted == text


def _token(size: int, seed: int) -> str:
    chars = string.ascii_letters + string.digits
    generator = random.Random(seed)
    return "".join(generator.choice(chars) for _ in range(size))


@pytest.mark.parametrize(
    "template",
    [
        "API_KEY={value}\n",
        "export DB_PASSWORD={value} # prod\n",
        "run --password {value} now\n",
        "the api key is {value}, keep it safe\n",
    ],
)
def test_a_secret_longer_than_the_part_read_goes_whole(template: str) -> None:
    value = _token(VALUE_SCAN * 3, seed=len(template))
    redacted = DEFAULT.redact("intro line\n" + template.format(value=value) + "after\n")
    assert value[:40] not in redacted and value[-40:] not in redacted
    assert redacted.startswith("intro line\n") and redacted.endswith("after\n")


def test_many_secrets_on_one_long_line_are_each_redacted() -> None:
    values = [_token(32, seed) for seed in range(2_000)]
    line = " ".join(f"token{n}={value};" for n, value in enumerate(values))
    redacted = DEFAULT.redact(line)
    assert not any(value in redacted for value in values)
    assert redacted.count("[REDACTED") == 2_000


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("add my api key: 4ae31ed2a0f0dd62609e51cd95deadbeefe7774f", "4ae31ed2a0f0dd62"),
        ("API key = 8f3a9c2e71d64b0f", "8f3a9c2e71d64b0f"),
        ("the secret key is 4f9a8b7c6d5e4f3a2b1c", "4f9a8b7c6d5e4f3a2b1c"),
        ("Access Key: wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "wJalrXUtnFEMI"),
    ],
)
def test_a_secret_given_to_a_name_written_with_a_space(text: str, secret: str) -> None:
    """People write "API key" with a space: given a value, it is a secret name too."""
    assert secret not in DEFAULT.redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "Send the request with your API key. We're using the `text-davinci-002` engine.",
        "Rotate the API key every 90 days",
        "the api key is stored in vault",
        "Set the API key: see docs",
    ],
)
def test_prose_about_an_api_key_is_left_alone(text: str) -> None:
    assert DEFAULT.redact(text) == text


HOSTILE_UNITS = [
    "password=",
    "-p",
    "@",
    "://",
    "https://a:b@",
    "https://x@",
    "curl -u ",
    "curl -u a:",
    "curl '",
    "curl \\\n",
    "mysql -p",
    "docker login -p ",
    "openssl -passin pass:",
    "htpasswd -b ",
    "kind: Secret\n",
    "kind: Secret\ndata:\n",
    '"kind": "Secret", "data": {',
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\n",
    "Private-Lines: 1\nAAAA\n",
    "twilio 0123456789abcdef0123456789abcdef ",
    "$6$aaaaaaaa$",
    "{SHA}",
    "sig=",
    "a_pat=",
    "x_key: ",
    "%41",
    "&#97;",
    "\\u0041",
    "\u200b",
    "ＰＡＳＳ",
]


@pytest.mark.parametrize("unit", HOSTILE_UNITS)
def test_a_200_kb_line_of_one_shape_s_trigger_is_read_in_linear_time(unit: str) -> None:
    """Every scanner and expression reads a bounded window per trigger and skips the
    triggers inside a window already read; the hang guard is the file's timeout."""
    text = unit * (200_000 // len(unit))
    redacted = DEFAULT.redact(text)
    assert DEFAULT.redact(redacted) == redacted
