"""The credential shapes shell history and tool output are full of, each in several
spellings: password flags of common commands, URL user info with any characters, secret
names whatever their prefix, provider formats, private keys in any container, password
hashes, Kubernetes Secrets; and the text around each that must stay."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtrove.security.normalise import normalise
from memtrove.security.redaction import DEFAULT, redact, redact_text

# (text, secrets that must go, text that must stay)
SHAPES: dict[str, list[tuple[str, tuple[str, ...], tuple[str, ...]]]] = {
    "curl": [
        ("curl -u deploy:Tr0ub4dor3 https://api.example.com", ("Tr0ub4dor3",), ("deploy:",)),
        ("curl -s --user 'ci-bot:pl41n text!' https://x.io", ("pl41n text!",), ("ci-bot",)),
        ("curl --user=admin:hunter2x https://x.io", ("hunter2x",), ("admin",)),
        ("curl -uops:S3cr3tPass -X POST https://x.io/api", ("S3cr3tPass",), ("-X POST",)),
        ("curl -fsSL \\\n  -u jenkins:b4nanaBread \\\n  https://ci/x", ("b4nanaBread",), ()),
        ("curl --proxy-user proxy:Pr0xyPw https://x", ("Pr0xyPw",), ()),
    ],
    "docker login": [
        ("docker login -u bot -p dckr9Xk2LmQ registry.io", ("dckr9Xk2LmQ",), ("registry.io",)),
        ("docker login --password s3cretPw9 ghcr.io", ("s3cretPw9",), ("ghcr.io",)),
        ("podman login -u me -p 'pod pass 77' quay.io", ("pod pass 77",), ("quay.io",)),
        ("helm registry login r.io --username u -p Helm9Pass", ("Helm9Pass",), ()),
    ],
    "mysql": [
        ("mysql -uroot -pR00tPassw0rd -h db shop", ("R00tPassw0rd",), ("-h db shop",)),
        ("mysqldump -u backup -pDump3rPw --all-databases", ("Dump3rPw",), ("--all-databases",)),
        ("mysql --password=myPw4Sql -e 'select 1'", ("myPw4Sql",), ()),
        ("mariadb -u app -p'quoted pw 1' app", ("quoted pw 1",), ()),
        ("mysqladmin -uroot -pAdm1nPw status", ("Adm1nPw",), ("status",)),
    ],
    "sshpass and ssh-keygen": [
        ("sshpass -p 'Sup3r pw' ssh deploy@host", ("Sup3r pw",), ("deploy@host",)),
        ("sshpass -pPlainPw99 scp a host:", ("PlainPw99",), ()),
        ("sshpass -p Outer9Pw ssh db mysql -uroot -pInner9Pw", ("Outer9Pw", "Inner9Pw"), ()),
        ('ssh-keygen -t ed25519 -N "K3yPhrase!" -f id', ("K3yPhrase!",), ("-f id",)),
        ("ssh-keygen -p -P oldPhrase1 -N newPhrase2 -f k", ("oldPhrase1", "newPhrase2"), ()),
    ],
    "htpasswd": [
        ("htpasswd -b /etc/nginx/.htpasswd admin Htp4ssw0rd", ("Htp4ssw0rd",), ("admin",)),
        ("htpasswd -bc .htpasswd alice AliceS3cret", ("AliceS3cret",), ("alice",)),
        ("htpasswd -nbB bob BobPassw0rd", ("BobPassw0rd",), ("bob",)),
    ],
    "openssl": [
        (
            "openssl pkcs12 -export -in c.pem -passout pass:Exp0rtPw -out c.p12",
            ("Exp0rtPw",),
            ("-out c.p12",),
        ),
        ("openssl rsa -in k.pem -passin pass:'in pass 9'", ("in pass 9",), ()),
        ("openssl enc -aes-256-cbc -k EncKey12345 -in f", ("EncKey12345",), ()),
        ("openssl rsa -in k.pem -passin env:KEY_PASS", (), ("env:KEY_PASS",)),
    ],
    "psql and environment": [
        ("PGPASSWORD=PgPw0rd123 psql -h db -U app", ("PgPw0rd123",), ("psql -h db",)),
        ("export pgpassword=lowerPw77", ("lowerPw77",), ()),
        ("psql postgresql://app:p0stgres!pw@db:5432/app", ("p0stgres!pw",), ("@db:5432",)),
        ("MYSQL_PWD=mysqlPw42 mysql -u root", ("mysqlPw42",), ()),
    ],
    "url user info": [
        (
            "git clone https://ghx8Kq93jfLs0aPq2mZ9Tk4R@github.com/acme/app.git",
            ("ghx8Kq93jfLs0aPq2mZ9Tk4R",),
            ("github.com/acme/app.git",),
        ),
        ("https://user:p/a@ss@host.example.com/path", ("p/a@ss",), ("host.example.com/path",)),
        ("postgres://app:pa:ss/w0rd@db.internal/app", ("pa:ss/w0rd",), ("db.internal",)),
        (
            "https://x-access-token:tok3nValue99@github.com/a/b",
            ("tok3nValue99",),
            ("x-access-token",),
        ),
        ("ftp://anon:a%40b%2Fc9@files.example.org/", ("a%40b%2Fc9",), ("files.example.org",)),
        (
            "proxy https://p.io/?to=https://u:inner9Pw@h.io/x",
            ("inner9Pw",),
            ("h.io/x",),
        ),
    ],
    "secret names whatever the prefix": [
        ("APP_KEY=base64:k9Pz2qXr7Lm1Vb8Nc3Dw4Ef5Gh6Jk0Ai=", ("k9Pz2qXr7Lm1Vb8Nc3Dw4Ef5",), ()),
        ("export STRIPE_KEY=stripeLive998877", ("stripeLive998877",), ()),
        ("GITHUB_PAT=patValue0123456789abc", ("patValue0123456789abc",), ()),
        ("MY_SERVICE_SECRET: s3rv1ce-s3cret", ("s3rv1ce-s3cret",), ()),
        ('{"deployToken": "dt-88xx-11yy-22zz"}', ("dt-88xx-11yy-22zz",), ()),
        ("[default]\nSMTP_PASS = smtpPass123\n", ("smtpPass123",), ()),
        ("ADMIN_PWD=adm1nPwd", ("adm1nPwd",), ()),
        ("NPM_AUTH='bnBtOnNlY3JldDEyMw=='", ("bnBtOnNlY3JldDEyMw==",), ()),
        ("GOOGLE_CREDENTIALS: '{\"k\": 1}'", ('{"k": 1}',), ()),
        ("stripeKey: Zq81xJ2mKp44WvB0Lr", ("Zq81xJ2mKp44WvB0Lr",), ()),
        ("signing_key = 'hmacK3yValue'", ("hmacK3yValue",), ()),
    ],
    "provider formats": [
        (
            "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&se=2026-01-01&sr=b&sp=r"
            "&sig=Xk3%2Bq9ZrT7vLm2PwN8bQ4yHc5Ds6Fg7Jh1Ka0Lb%3D",
            ("Xk3%2Bq9ZrT7vLm2PwN8bQ4yHc5Ds6Fg7Jh1Ka0Lb",),
            ("sv=2022-11-02",),
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Ab12Cd34Ef56Gh78"
            "Ij90Kl12Mn34Op56Qr78St90Uv12Wx34Yz56Ab78Cd90Ef12Gh34Ij56Kl78Mn90Op==;"
            "EndpointSuffix=core.windows.net",
            ("Ab12Cd34Ef56Gh78Ij90",),
            ("AccountName=acct",),
        ),
        (
            "twilio: account ACa1b2c3d4e5f60718293a4b5c6d7e8f90 auth "
            "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
            ("ACa1b2c3d4e5f60718293a4b5c6d7e8f90", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
            (),
        ),
        (
            "TWILIO_AUTH_TOKEN=9a8b7c6d5e4f30211203f4e5d6c7b8a9",
            ("9a8b7c6d5e4f30211203f4e5d6c7b8a9",),
            (),
        ),
        (
            "twilio key SK0123456789abcdef0123456789abcdef",
            ("SK0123456789abcdef0123456789abcdef",),
            (),
        ),
        (
            "SENTRY_DSN=https://8f2c1e9a7b3d4f5e6a7b8c9d0e1f2a3b@o123456.ingest.sentry.io/4504",
            ("8f2c1e9a7b3d4f5e6a7b8c9d0e1f2a3b",),
            ("o123456.ingest.sentry.io/4504",),
        ),
        (
            "dsn: 'https://abcdef0123456789abcdef0123456789@sentry.example.com/7'",
            ("abcdef0123456789abcdef0123456789",),
            (),
        ),
        ("xoxp-1111111111-2222222222-3333333333-abcdefabcdef", ("abcdefabcdef",), ()),
        ("rk_live_51HxYzAbCdEfGhIjKlMnOp", ("rk_live_51HxYzAbCdEfGhIjKlMnOp",), ()),
        (
            "ghs_abcdefghijklmnopqrstuvwxyz0123456789",
            ("ghs_abcdefghijklmnopqrstuvwxyz0123456789",),
            (),
        ),
        ("ya29.a0AfH6SMBx7Yq-9ZkLmNoPqRsTuVwXyZ", ("ya29.a0AfH6SMBx7Yq",), ()),
        ("key sk-abcdefghijklmnopqrstuvwxyz012345", ("sk-abcdefghijklmnopqrstuvwxyz012345",), ()),
        (
            "aws_access_key_id = ASIAQ3EGUQ7LAZ3KXR5N\naws_secret_access_key = "
            "Kx9/Lm2+Pq7Rs4Tu1Vw8Xy5Za3Bc6De0Fg2Hi4Jk",
            ("ASIAQ3EGUQ7LAZ3KXR5N", "Kx9/Lm2+Pq7Rs4Tu1Vw8Xy5Za3Bc6De0Fg2Hi4Jk"),
            (),
        ),
        (
            '{"type": "service_account", "private_key_id": '
            '"3f2a9c1e4b7d3f60a1b2c3d4e5f60718293a4b5c", "client_id": "1"}',
            ("3f2a9c1e4b7d3f60a1b2c3d4e5f60718293a4b5c",),
            ('"client_id": "1"',),
        ),
    ],
    "private keys": [
        (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
            "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIPub1\nAAAApub2\nPrivate-Lines: 1\n"
            "AAAAIPr1vAt3KeyB0dyL1neXyZ0123456789ab\n"
            "Private-MAC: 0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9\n",
            ("AAAAIPr1vAt3KeyB0dyL1neXyZ0123456789ab", "0a1b2c3d4e5f607182"),
            ("Comment: deploy",),
        ),
        (
            "PuTTY-User-Key-File-2: ssh-rsa\\r\\nPrivate-Lines: 2\\r\\nAAAAgQCpr1v4te\\r\\n"
            "AAAAQQDm0re\\r\\nPrivate-MAC: 00ff00ff00ff00ff00ff",
            ("AAAAgQCpr1v4te", "AAAAQQDm0re", "00ff00ff00ff00ff00ff"),
            (),
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBGPgpBodyLine01\n"
            "=Ab3D\n-----END PGP PRIVATE KEY BLOCK-----",
            ("lQOYBGPgpBodyLine01",),
            (),
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBGPgpCutLine02\n",
            ("lQOYBGPgpCutLine02",),
            (),
        ),
        (
            '{"key": "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAAcut\\n"}',
            ("b3BlbnNzaC1rZXktdjEAAAAAcut",),
            (),
        ),
        (
            "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIEcPrivBody\n-----END EC PRIVATE KEY-----",
            ("MHcCAQEEIEcPrivBody",),
            (),
        ),
    ],
    "password hashes": [
        (
            "admin:$apr1$Zx9Kq2Lm$8mQ1v0nF7bY2dR5sT9wXc/",
            ("$apr1$Zx9Kq2Lm$8mQ1v0nF7bY2dR5sT9wXc/",),
            ("admin:",),
        ),
        (
            "hash = '$2y$10$abcdefghijklmnopqrstuuVWXYZ0123456789./abcdefghijklmn'",
            ("abcdefghijklmnopqrstuuVWXYZ0123456789",),
            (),
        ),
        (
            "root:$6$rounds=5000$saltsalt$"
            + "a" * 40
            + "Bb12./"
            + "c" * 40
            + ":19000:0:99999:7:::",
            ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaBb12",),
            ("root:",),
        ),
        ("bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", ("W6ph5Mm5Pz8GgiULbPgzG37mj9g=",), ("bob:",)),
        (
            "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG",
            ("RdescudvJCsgt3ub+b+dWRWJTmaaJObG",),
            (),
        ),
        (
            "pbkdf2_sha256$600000$s4lt$Zm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg==",
            ("Zm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg==",),
            (),
        ),
    ],
    "kubernetes secrets": [
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n"
            "  password: cGFzc3dvcmQxMjM=\n  username: YWRtaW4=\n",
            ("cGFzc3dvcmQxMjM=", "YWRtaW4="),
            ("name: db",),
        ),
        (
            "apiVersion: v1\ndata:\n  tls.key: LS0tLS1CRUdJTi\n  api: c2VjcmV0\nkind: Secret\n"
            "metadata:\n  name: tls\n",
            ("LS0tLS1CRUdJTi", "c2VjcmV0"),
            ("name: tls",),
        ),
        (
            "kind: Secret\nstringData:\n  config.yaml: |\n    user: app\n    pass: plainPw\n"
            "  token: plainToken\n",
            ("plainPw", "plainToken"),
            (),
        ),
        (
            '{"apiVersion": "v1", "kind": "Secret", "data": {"db-pass": "ZGJwYXNz", '
            '"user": "dXNlcg=="}}',
            ("ZGJwYXNz", "dXNlcg=="),
            ('"apiVersion": "v1"',),
        ),
        (
            "kubectl create secret generic db --from-literal=password=kubePw123 "
            "--from-literal=user=app",
            ("kubePw123",),
            ("generic db",),
        ),
    ],
    "normalised spellings": [
        ("pass\u200bword=hunter2secret", ("hunter2secret",), ()),
        ("ＰＡＳＳＷＯＲＤ=fullw1dthPw", ("fullw1dthPw",), ()),
        ("p&#97;ssword=ent1tyPw", ("ent1tyPw",), ()),
        ("pass\\u0077ord=escapedPw1", ("escapedPw1",), ()),
        ("api%5Fkey=urlEsc4ped99", ("urlEsc4ped99",), ()),
        (
            "sk-ant-api03-abc\u200bdefGhIjKlMnOpQrStUvWxYz012345",
            ("abcdefGhIjKlMnOpQrStUvWxYz012345", "defGhIjKlMnOp", "sk-ant-api03-abc"),
            (),
        ),
        (
            "ghp_16C7e42F292c6912\u2060E7710c838347Ae178B4a",
            ("ghp_16C7e42F292c6912", "E7710c838347Ae178B4a"),
            (),
        ),
        (
            "ｓｋ－ａｎｔ－ａｐｉ０３－ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴ",
            ("ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴ",),
            (),
        ),
        ("to\u00adken: s0ftHyph3nTok", ("s0ftHyph3nTok",), ()),
        ("%73k-ant-api03-PctEsc4pedAbCdEfGhIjKlMn", ("PctEsc4pedAbCdEfGhIjKlMn",), ()),
        ("pass\U000e0020word=t4gCharPw", ("t4gCharPw",), ()),
    ],
}

CASES = [(group, *case) for group, cases in SHAPES.items() for case in cases]


@pytest.mark.parametrize(
    ("group", "text", "secrets", "kept"),
    CASES,
    ids=[f"{group}-{n}" for n, (group, *_rest) in enumerate(CASES)],
)
def test_each_shape_is_redacted_and_its_surroundings_stay(
    group: str, text: str, secrets: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    redacted = redact_text(text)
    for secret in secrets:
        assert secret not in redacted, redacted
    for part in kept:
        assert part in redacted, redacted
    if secrets:
        assert "[REDACTED:" in redacted
    assert redact_text(redacted) == redacted


ORDINARY = [
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "mysql -u root -p shop",  # -p alone prompts; shop is the database
    "sshpass -f ~/.pw ssh host",
    "curl -fsSL https://get.example.com | sh",
    "git push -u origin main",
    "ssh-keygen -t ed25519 -N '' -f ~/.ssh/id",
    "openssl enc -d -aes-256-cbc -kfile key.txt -in f",
    "sort_key: name\ntopologyKey: kubernetes.io/hostname\nprimary_key: user_id",
    "partition-key: tenant\nkey: app\n- key: node-role.kubernetes.io/control-plane",
    "PASS: TestFoo (0.00s)\n--- PASS: TestHostname2 (0.01s)",
    "sig-auth: v1beta1 TokenReview",
    "https://github.com/kubernetes/enhancements/tree/master/keps/sig-auth/1205-bound",
    "go get github.com/acme/tool@v1.2.3 and https://registry.npmjs.org/@scope/pkg",
    "https://example.com:8443/path/@user and ssh://git@github.com/acme/app.git",
    "http://localhost:8080?next=a@b.io and https://example.com/?email=me@mail.example.com",
    "kind: SecretProviderClass\nspec:\n  data:\n    objectName: db\n",
    "kind: ConfigMap\ndata:\n  mode: fast\n",
    "the version is 1.2.3-rc.4 and the hash 3f2a9c1e4b7d3f60a1b2c3d4e5f60718293a4b5c",
    'var ServerContextKey = &contextKey{"http-server"}',
    'multicluster.x-k8s.io/placement-key="training-job-resnet50-123"',
    "Ｆｕｌｌｗｉｄｔｈ text and café, naïve, 東京 stay as they are",
    "50% of requests &amp; 20% of writes",
    "price: $5$ per unit; regex s/a/$1$2/",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert DEFAULT.findings(text) == [], [text[f.start : f.end] for f in DEFAULT.findings(text)]


def test_normalised_findings_keep_the_rest_as_written() -> None:
    text = "Ｎｏｔｅ: pass\u200bword=hunter2secret — café &amp; more"
    redacted = redact_text(text)
    assert redacted == "Ｎｏｔｅ: pass\u200bword=[REDACTED:password] — café &amp; more"


def test_structured_values_under_environment_names_go_whole() -> None:
    value = {"APP_KEY": "base64:abc", "GITHUB_PAT": "patvalue", "sort_key": "name", "key": "v"}
    assert redact(value) == {
        "APP_KEY": "[REDACTED:key]",
        "GITHUB_PAT": "[REDACTED:token]",
        "sort_key": "name",
        "key": "v",
    }


def test_a_secret_key_in_another_spelling_takes_its_value_whole() -> None:
    assert redact({"ＡＰＩ＿ＫＥＹ": "v4lue", "pass\u200bword": "hunter22"}) == {
        "ＡＰＩ＿ＫＥＹ": "[REDACTED:api_key]",
        "pass\u200bword": "[REDACTED:password]",
    }


def test_a_key_split_by_an_invisible_character_goes_whole() -> None:
    """The guard drops zero-width characters later: neither half may stay."""
    for joiner in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\ufe0f"):
        text = f"key: sk-ant-api03-AbCdEfGhIj{joiner}KlMnOpQrStUvWxYz0123456789 ok"
        redacted = redact_text(text)
        assert redacted == "key: [REDACTED:anthropic_key] ok", (joiner, redacted)


_TOKENS = [
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-2142893716-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
]
_HIDERS = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\ufe0f", "\U000e0020"]


@settings(max_examples=300, deadline=None)
@given(
    before=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
    after=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
    token=st.sampled_from(_TOKENS),
    hider=st.sampled_from(_HIDERS),
    cut=st.integers(min_value=4, max_value=18),
)
def test_a_token_split_by_any_invisible_character_never_survives_in_either_spelling(
    before: str, after: str, token: str, hider: str, cut: int
) -> None:
    text = f"{before} {token[:cut]}{hider}{token[cut:]} {after}"
    redacted = redact_text(text)
    canonical = normalise(redacted)
    assert token not in (canonical.text if canonical else redacted)
    assert token[cut:] not in redacted and token[:cut] + hider not in redacted
    assert redact_text(redacted) == redacted
