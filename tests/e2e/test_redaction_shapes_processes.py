"""No credential shape survives anywhere in the vault file: a Claude Code session holding one
of each (password flags in Bash commands, tool output, URL user info, secret names,
provider formats, private keys, password hashes, a Kubernetes Secret, spellings hidden by
escapes, fullwidth letters and zero-width characters) is mined by a real ``memtrove mine``,
surfaced by a real hook and partly remembered over the CLI; then every table (FTS5 shadow
and vocabulary tables included), the raw bytes of the file and its WAL, and the injected
context are searched. ``memtrove redact --apply`` cleans the same shapes from a vault that
stored them verbatim."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from memtrove.vault import Vault
from tests.e2e.test_secrets_processes import _env, _memtrove

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

# name -> the secret's spelling as it must never be stored
SECRETS = {
    "curl -u": "Lfc0rlPw91x",
    "curl --user": "Lfc0rlUsr82y",
    "docker login -p": "Lfd0ckerPw73z",
    "docker --password": "Lfd0ckerLong64w",
    "mysql -pPASS": "Lfmy5qlPw55v",
    "mysqldump -p": "Lfdump3rPw46u",
    "sshpass -p": "Lfssh9assPw37t",
    "ssh-keygen -N": "LfkeyPhr4se28s",
    "htpasswd -b": "Lfhtp4sswd19r",
    "openssl -passin": "Lf0pensslIn10q",
    "openssl -passout": "Lf0pensslOut9p",
    "PGPASSWORD": "LfpgPassw0rd8o",
    "psql uri": "Lfp5qlUriPw7n",
    "token user info": "LfTok3nUserInf0AbCdEf12",
    "url password with / and @": "Lf/sl4sh@at6m",
    "APP_KEY": "LfLarav3lAppK3yZq81xJ2mKp44Wv=",
    "STRIPE_KEY": "Lfstr1peKeyV4lue5l",
    "GITHUB_PAT": "Lfgh9atValue0123k",
    "MY_SECRET": "Lfmy5ecretVal3j",
    "export TOKEN": "LfexportTok3n2i",
    "yaml password": "LfyamlPassw0rd1h",
    "json api key": "LfjsonApiK3y0g",
    "toml secret": "LftomlS3cret9f",
    "azure account key": "LfAzur3AccountK3yAbCdEfGhIjKlMnOpQrStUvWxYz0123456789==",
    "azure sas sig": "LfS4sSig1234567890AbCdEfGhIj",
    "twilio sid": "AC" + "1f2e3d4c5b6a79881f2e3d4c5b6a7988",
    "twilio auth token": "9f8e7d6c5b4a39281f0e2d3c4b5a6978",
    "sentry dsn": "4c3b2a19f8e7d6c5b4a39281f0e2d3c4",
    "slack": "xoxb-123456789012-1234567890123-LfSl4ckT0kenAbCdEf",
    "stripe live": "sk_live_Lf51HxYzAbCdEfGhIjKl",
    "stripe webhook": "whsec_LfWebh00kS3cretAbCdEf12",
    "github": "ghp_Lf16C7e42F292c6912E7710c838347Ae1",
    "google": "AIzaSyLf9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "oauth": "ya29.LfA0AfH6SMBx7Yq9ZkLmNoPqRsTuV",
    "openai": "sk-proj-LfAb3dEf6hIj9kLm2nOp5qRs8tUv1wX",
    "anthropic": "sk-ant-api03-LfAbCdEfGhIjKlMnOpQrStUvWxYz0123",
    "aws access key": "AKIALFQ3EGUQ7LAZ3KXR",
    "aws secret key": "LfKx9Lm2Pq7Rs4Tu1Vw8Xy5Za3Bc6De0Fg2Hi4J",
    "hugging face": "hf_LfLanternfishStagingTokenAbCdEf0123",
    "gcp private key": "MIIEvQIBADANLfGcpPr1vateK3yB0dy",
    "gcp private key id": "3f2a9c1e4b7d3f60a1b2c3d4e5f60718293a4b5c",
    "pem rsa": "MIIEpAIBAAKCLfRsaPr1vateK3yB0dy",
    "openssh cut": "b3BlbnNzaC1rZXktdjEAAAAALfOpenSshCut",
    "putty": "AAAAILfPuTTYPr1vateL1neXyZ0123456789",
    "putty mac": "7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
    "pgp": "lQOYBGLfPgpPr1vateB0dyL1ne",
    "htpasswd hash": "$apr1$Lfs4lt12$8mQ1v0nF7bY2dR5sT9wXc/",
    "bcrypt hash": "$2y$10$LfBcryptS4ltAndHashValue0123456789./abcdefghijklmnopq",
    "sha crypt": "$6$Lfs4ltsalt$"
    + "Lf7shaCryptHashValue0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "k8s data": "TGZrOHNEYXRhVmFsdWUxMjM=",
    "k8s stringData": "Lfk8sStr1ngData7",
    "high entropy": "Lf8fK2mZ9pQ4xR7vB1nW3",
    "zero-width split": "sk-ant-api03-LfZw5pl1tAbCdEfGhIjKlMnOpQrSt",
    "fullwidth name": "LfFullw1dthPw6e",
    "escaped name": "LfEsc4pedPw5d",
    "entity name": "LfEnt1tyPw4c",
}
ZWSP = "\u200b"
# Texts that hold a secret in another spelling: the spelling in the text is what must go.
SPELLED = {
    "zero-width split": SECRETS["zero-width split"][:22] + ZWSP + SECRETS["zero-width split"][22:],
}
# The parts of some secrets that must not survive on their own either.
PARTS = {
    "zero-width split": ("LfZw5pl1t", "AbCdEfGhIjKlMnOpQrSt"),
    "url password with / and @": ("Lf/sl4sh", "at6m"),
}


def _commands() -> list[tuple[str, str]]:
    """(Bash command, its output) pairs, as a session runs them."""
    s = SECRETS
    return [
        (f"curl -u ops:{s['curl -u']} https://api.lanternfish.dev/v1/deploys", "[]"),
        (f"curl -fsS --user 'ci:{s['curl --user']}' https://ci.lanternfish.dev", "ok"),
        (f"docker login -u bot -p {s['docker login -p']} registry.lanternfish.dev", "Login OK"),
        (f"docker login --password {s['docker --password']} ghcr.io", "Login Succeeded"),
        (f"mysql -uroot -p{s['mysql -pPASS']} -h db lanternfish -e 'select 1'", "1"),
        (f"mysqldump -u backup -p{s['mysqldump -p']} lanternfish > dump.sql", ""),
        (f"sshpass -p '{s['sshpass -p']}' ssh deploy@lanternfish-1 uptime", "up 3 days"),
        (f"ssh-keygen -t ed25519 -N '{s['ssh-keygen -N']}' -f deploy_key", "saved"),
        (f"htpasswd -b /etc/nginx/.htpasswd admin {s['htpasswd -b']}", "Updating"),
        (f"openssl rsa -in k.pem -passin pass:{s['openssl -passin']} -out plain.pem", ""),
        (f"openssl pkcs12 -export -passout pass:{s['openssl -passout']} -out c.p12", ""),
        (f"PGPASSWORD={s['PGPASSWORD']} psql -h db -U app lanternfish -c 'select 1'", "1"),
        (f"psql postgresql://app:{s['psql uri']}@db.internal:5432/lanternfish", "psql (16)"),
        (f"git clone https://{s['token user info']}@github.com/acme/lanternfish.git", ""),
        ("cat .env", f"APP_KEY=base64:{s['APP_KEY']}"),
        ("grep STRIPE .env", f"STRIPE_KEY={s['STRIPE_KEY']}"),
        ("cat ~/.config/gh/env", f"GITHUB_PAT={s['GITHUB_PAT']}"),
        ("cat /etc/nginx/.htpasswd", f"admin:{s['htpasswd hash']}"),
        ("grep bob /etc/apache2/.htpasswd", f"bob:{s['bcrypt hash']}"),
        ("grep root /etc/shadow", f"root:{s['sha crypt']}:19000:0:99999:7:::"),
        ("kubectl get secret db -o yaml", "apiVersion: v1"),
    ]


def _prompts() -> list[tuple[str, str]]:
    """(user prompt, assistant reply) pairs holding the shapes that span lines or hide."""
    s = SECRETS
    service_account = json.dumps(
        {
            "type": "service_account",
            "project_id": "lanternfish",
            "private_key_id": s["gcp private key id"],
            "private_key": f"-----BEGIN PRIVATE KEY-----\n{s['gcp private key']}\n"
            "-----END PRIVATE KEY-----\n",
            "client_email": "deploy@lanternfish.iam.gserviceaccount.com",
        }
    )
    return [
        (
            "Here is the lanternfish config, set it up:\n"
            f"postgres://app:{s['url password with / and @']}@db.lanternfish.dev:5432/app\n"
            f"export MY_SECRET={s['MY_SECRET']}\nexport API_TOKEN={s['export TOKEN']}\n"
            f"database:\n  password: {s['yaml password']}\n"
            f'{{"api_key": "{s["json api key"]}"}}\n[deploy]\nsecret = "{s["toml secret"]}"\n',
            "Configured lanternfish with those values.",
        ),
        (
            "Storage and alerts for lanternfish:\n"
            "DefaultEndpointsProtocol=https;AccountName=lanternfish;"
            f"AccountKey={s['azure account key']};EndpointSuffix=core.windows.net\n"
            "https://lanternfish.blob.core.windows.net/c/f?sv=2022-11-02&sr=b&sp=r"
            f"&sig={s['azure sas sig']}\n"
            f"twilio account {s['twilio sid']} auth token {s['twilio auth token']}\n"
            f"SENTRY_DSN=https://{s['sentry dsn']}@o4504.ingest.sentry.io/4504\n"
            f"slack bot {s['slack']}",
            f"Stripe uses {s['stripe live']} and webhooks {s['stripe webhook']}; the bot pushes "
            f"with {s['github']}; maps use {s['google']} and the OAuth token is {s['oauth']}.",
        ),
        (
            f"Keys for lanternfish: openai {s['openai']}, anthropic {s['anthropic']}, "
            f"aws {s['aws access key']} with aws_secret_access_key = {s['aws secret key']}, "
            f"hugging face {s['hugging face']}, and the deploy token is {s['high entropy']}",
            f"The service account for lanternfish:\n{service_account}",
        ),
        (
            "The lanternfish deploy keys:\n-----BEGIN RSA PRIVATE KEY-----\n"
            f"{s['pem rsa']}\n-----END RSA PRIVATE KEY-----\n"
            f"-----BEGIN OPENSSH PRIVATE KEY-----\n{s['openssh cut']}\n",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: lanternfish\n"
            "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIPublicLine\nPrivate-Lines: 1\n"
            f"{s['putty']}\nPrivate-MAC: {s['putty mac']}\n\n"
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n"
            f"{s['pgp']}\n=Ab3D\n-----END PGP PRIVATE KEY BLOCK-----",
        ),
        (
            "The lanternfish Secret manifest:\napiVersion: v1\nkind: Secret\nmetadata:\n"
            f"  name: lanternfish-db\ntype: Opaque\ndata:\n  password: {s['k8s data']}\n"
            f"stringData:\n  extra: {s['k8s stringData']}\n",
            "Applied the lanternfish Secret.",
        ),
        (
            f"The lanternfish key is {SPELLED['zero-width split']} and "
            f"ＰＡＳＳＷＯＲＤ={s['fullwidth name']} and pass\\u0077ord={s['escaped name']} and "
            f"p&#97;ssword={s['entity name']}",
            "Noted, for lanternfish.",
        ),
    ]


def _line(kind: str, number: int, parent: str | None, content: Any, **extra: Any) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = f"msg-{number}"
        message["model"] = "claude-sonnet-4-5"
    return json.dumps(
        {
            "type": kind,
            "uuid": f"{kind[0]}{number}",
            "parentUuid": parent,
            "sessionId": "lanternfish-secrets",
            "timestamp": f"2025-05-06T10:{number // 60:02d}:{number % 60:02d}Z",
            "cwd": "/home/dev/lanternfish",
            "version": "2.0.14",
            "gitBranch": "main",
            "message": message,
            **extra,
        }
    )


def _session() -> str:
    lines: list[str] = []
    parent: str | None = None
    number = 0
    for prompt, reply in _prompts():
        number += 1
        lines.append(_line("user", number, parent, prompt))
        lines.append(_line("assistant", number, f"u{number}", [{"type": "text", "text": reply}]))
        parent = f"a{number}"
    number += 1
    lines.append(_line("user", number, parent, "Run the lanternfish deploy checks."))
    parent = f"u{number}"
    for index, (command, output) in enumerate(_commands()):
        tool_id = f"toolu_{index:03d}"
        call = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}
        lines.append(_line("assistant", number, parent, [call]))
        result = {"type": "tool_result", "tool_use_id": tool_id, "content": output}
        lines.append(_line("user", 100 + index, f"a{number}", [result], toolUseResult={}))
        parent = f"u{100 + index}"
    lines.append(
        _line(
            "assistant", number, parent, [{"type": "text", "text": "Checks done for lanternfish."}]
        )
    )
    return "\n".join(lines) + "\n"


def _needles() -> dict[str, list[str]]:
    needles = {name: [secret] for name, secret in SECRETS.items()}
    for name, parts in PARTS.items():
        needles[name] += list(parts)
    return needles


def _leaks(text: str) -> list[str]:
    return sorted(name for name, needles in _needles().items() if any(n in text for n in needles))


def _tokens(secret: str) -> set[str]:
    """The words a full-text index makes of a secret (long enough to be only its own)."""
    return {word.lower() for word in re.findall(r"[A-Za-z0-9]+", secret) if len(word) >= 9}


def _vault_leaks(path: Path) -> dict[str, list[str]]:
    """Every table's every value, the FTS5 vocabulary of every full-text table, and the raw
    bytes of the file and its WAL, after a checkpoint."""
    found: dict[str, list[str]] = {}
    with Vault.open(path, config_dir=path.parent / "config") as vault:
        connection = vault._connection
        tables = connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
        ).fetchall()
        assert any(name.endswith("_data") for name, _ in tables)  # FTS5 shadow tables too
        for name, _sql in tables:
            rows = connection.execute(f'SELECT * FROM "{name}"').fetchall()
            text = "\n".join(
                value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
                for row in rows
                for value in row
            )
            if leaks := _leaks(text):
                found[name] = leaks
        index_words: set[str] = set()
        for name, sql in tables:
            if sql and re.search(r"USING\s+fts5\s*\(", sql, re.IGNORECASE):
                vocabulary = f"vocab_{name}"
                connection.execute(
                    f'CREATE VIRTUAL TABLE temp."{vocabulary}" USING fts5vocab(main, "{name}", row)'
                )
                index_words |= {
                    str(term) for (term,) in connection.execute(f'SELECT term FROM "{vocabulary}"')
                }
        assert index_words, "the full-text index is empty"
        for name, needles in _needles().items():
            hits = [
                word
                for token in {token for needle in needles for token in _tokens(needle)}
                for word in index_words
                # the word holds the secret (glued to a flag: "-pSECRET") up to the few
                # last letters the porter stemmer may change ("...b0dy" -> "...b0di")
                if token[:-3] in word
            ]
            if hits:
                found.setdefault("fts5vocab", []).append(name)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for file in (path, path.with_name(path.name + "-wal")):
        if file.exists() and (leaks := _leaks(file.read_bytes().decode("utf-8", "replace"))):
            found[file.name] = leaks
    return found


def test_a_mined_session_with_every_shape_stores_and_injects_none(tmp_path: Path) -> None:
    env = _env(tmp_path)
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "lanternfish-secrets.jsonl").write_text(_session(), encoding="utf-8")
    mined = _memtrove(env, "mine", str(exports), "--json")
    assert mined.returncode == 0, mined.stderr
    assert json.loads(mined.stdout)["exchanges"] >= 6

    remembered = _memtrove(
        env,
        "remember",
        "lanternfish-access",
        "-",
        stdin=(
            f"curl -u ops:{SECRETS['curl -u']} https://api.lanternfish.dev\n"
            f"mysql -uroot -p{SECRETS['mysql -pPASS']} lanternfish\n"
            f"APP_KEY=base64:{SECRETS['APP_KEY']}\n"
            f"git clone https://{SECRETS['token user info']}@github.com/acme/lanternfish.git\n"
            f"the lanternfish key is {SPELLED['zero-width split']}\n"
        ).encode(),
    )
    assert remembered.returncode == 0, remembered.stderr

    prompt = (
        "which curl, docker login, mysql and openssl commands did we run for lanternfish, "
        f"and with which keys? (my token is {SECRETS['github']})"
    )
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n",
        encoding="utf-8",
    )
    payload = {
        "session_id": "s-shapes",
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    hook = _memtrove(env, "hook", "context-surfacing", stdin=json.dumps(payload).encode())
    assert hook.returncode == 0, hook.stderr
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "lanternfish" in context and "[REDACTED:" in context
    assert _leaks(context) == []
    got = _memtrove(env, "get", "memory/lanternfish-access", "--json")
    assert _leaks(got.stdout.decode() + got.stderr.decode()) == []

    assert _vault_leaks(tmp_path / "vault.sqlite") == {}


def test_redact_apply_cleans_the_shapes_from_a_vault_that_stored_them(tmp_path: Path) -> None:
    env = _env(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    commands = "\n".join(command for command, _ in _commands())
    outputs = "\n".join(output for _, output in _commands())
    prompts = "\n\n".join(f"{prompt}\n\n{reply}" for prompt, reply in _prompts())
    body = f"# Lanternfish runbook\n\n```\n{commands}\n{outputs}\n```\n\n{prompts}\n"
    (notes / "runbook.md").write_text(body, encoding="utf-8")
    with Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config") as vault:
        vault.add_collection(notes, name="ops", redact=False)  # stored verbatim
        vault.update()
    assert _vault_leaks(tmp_path / "vault.sqlite")  # the secrets are there
    config = tmp_path / "config" / "config.yaml"
    data = yaml.safe_load(config.read_text())
    data["collections"]["ops"]["redact"] = True
    config.write_text(yaml.safe_dump(data))

    applied = _memtrove(env, "redact", "--apply", "--json")
    assert applied.returncode == 0 and json.loads(applied.stdout)["applied"] is True
    assert _leaks(applied.stdout.decode()) == []
    assert json.loads(_memtrove(env, "redact", "--json").stdout)["total"] == 0
    assert _vault_leaks(tmp_path / "vault.sqlite") == {}
    assert (notes / "runbook.md").read_text(encoding="utf-8") == body  # never rewritten
