"""A vault on PostgreSQL, named by a ``postgresql://`` URL wherever a vault is named:
``Vault.open``, ``MEMTROVE_VAULT`` and ``--vault`` (the lean read commands and the Typer
CLI), with its side files in a folder of its own under the cache folder; a URL's password
is never shown, logged or written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from memtrove.cli.claude_settings import placement_env
from memtrove.config import Settings
from memtrove.db.schema.postgres import MIGRATIONS as POSTGRES_MIGRATIONS
from memtrove.errors import VaultNotFoundError, VaultOpenError
from memtrove.locations import has_password, is_server_url, location_key, shown_location
from memtrove.paths import SIDECAR_FOLDER, cache_location, sidecar_folder, vault_location
from memtrove.vault import Vault
from memtrove.warm import find_server, publish, server_file
from tests.db.conftest import SERVER

PASSWORD = "s3cret"


def _with_password(url: str) -> tuple[str, str]:
    """``url`` with a password (a dummy one, which trust authentication ignores, unless the
    server's URL has one), and the password."""
    parts = urlsplit(url)
    if parts.password:
        return url, parts.password
    user = parts.username or "postgres"
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:{PASSWORD}@{host}")), PASSWORD


def _schema_exists(url: str) -> bool:
    import psycopg

    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(SERVER, autocommit=True) as raw:
        row = raw.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (schema,)
        ).fetchone()
    return row is not None


def _environment(root: Path) -> dict[str, str]:
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMTROVE_", "FORCE_COLOR"))}
    return env | {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "MEMTROVE_CONFIG_DIR": str(root / "config"),
        "MEMTROVE_SERVER": "off",
    }


def _run(arguments: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "memtrove", *arguments],
        env=env,
        capture_output=True,
        timeout=120,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


# -- locations ------------------------------------------------------------------------------------


def test_a_url_is_a_server_location_and_is_shown_without_its_password() -> None:
    url = "postgresql://me:pa:ss@db.example:5433/notes?schema=team&sslmode=require"
    assert is_server_url(url) and is_server_url(" POSTGRES://h/db")
    assert not is_server_url(Path("postgresql://h/db")) and not is_server_url("/v.sqlite")
    assert (
        shown_location(url) == "postgresql://me@db.example:5433/notes?schema=team&sslmode=require"
    )
    assert shown_location("postgresql://:pw@h/db") == "postgresql://h/db"
    assert shown_location("postgres://h/db?password=pw&schema=a") == "postgres://h/db?schema=a"
    assert shown_location("postgresql://h/db") == "postgresql://h/db"
    assert shown_location(Path("/a/v.sqlite")) == "/a/v.sqlite"
    assert has_password(url) and not has_password("postgresql://me@h/db")
    assert not has_password("/a/v.sqlite")


def test_a_url_stays_a_string_from_the_environment_to_the_settings(tmp_path: Path) -> None:
    url = f"postgresql://me:{PASSWORD}@h:5432/db?schema=a"
    assert vault_location({"MEMTROVE_VAULT": f" {url} "}) == url
    assert vault_location({}, url) == url
    assert Settings.from_env({}, vault=url).vault_path == url
    assert Settings.from_env({"MEMTROVE_VAULT": url}).vault_path == url
    file = Settings.from_env({}, vault=tmp_path / "v.sqlite").vault_path
    assert file == tmp_path / "v.sqlite" and isinstance(file, Path)


def test_each_server_vault_has_its_own_sidecar_folder_without_the_password() -> None:
    env = {"HOME": "/home/me", "XDG_CACHE_HOME": "/var/cache"}
    first = sidecar_folder(f"postgresql://me:{PASSWORD}@h/db?schema=a", env)
    second = sidecar_folder(f"postgresql://me:{PASSWORD}@h/db?schema=b", env)
    assert first != second
    assert os.path.dirname(first) == os.path.join(cache_location(env), SIDECAR_FOLDER)
    assert PASSWORD not in first and PASSWORD not in second
    assert first == sidecar_folder("postgresql://me:other@h/db?schema=a", env)  # same vault
    assert os.path.basename(first) == location_key("postgresql://me@h/db?schema=a")
    assert sidecar_folder("/data/vault.sqlite", env) == "/data"


def test_the_server_file_and_the_hook_settings_never_hold_the_password(tmp_path: Path) -> None:
    url = f"postgresql://me:{PASSWORD}@h:5432/db?schema=a"
    written = publish(tmp_path, url, "127.0.0.1", 4567, token_required=False)
    assert written == server_file(tmp_path, url)
    assert PASSWORD not in written and PASSWORD not in Path(written).read_text()
    found = find_server(tmp_path, "postgresql://me:changed@h:5432/db?schema=a", {})
    assert found is not None and found.vault == shown_location(url)
    assert find_server(tmp_path, "postgresql://me@h:5432/db?schema=b", {}) is None
    placement = placement_env(url, tmp_path / "config")
    assert placement["MEMTROVE_VAULT"] == shown_location(url)


# -- Vault.open ----------------------------------------------------------------------------------


def test_a_vault_opens_on_a_url_and_its_reader_reopens_the_same_schema(
    url: str, tmp_path: Path
) -> None:
    secret_url, password = _with_password(url)
    with Vault.open(secret_url, config_dir=tmp_path / "config") as vault:
        assert vault.path is None
        assert vault.location == shown_location(secret_url) and password not in vault.location
        status = vault.status()
        assert status.path == vault.location
        assert sorted(status.schema) == sorted(name for name, _ in POSTGRES_MIGRATIONS)
        assert not vault.sessions.hook_seen("context-surfacing", "a prompt", session_id="s1")
        with vault.reader() as reader:  # a second connection, to the same schema
            assert reader.location == vault.location
            assert reader.sessions.hook_seen("context-surfacing", "a prompt", session_id="s1")
        with vault.scratch_copy() as copy:  # a schema beside the vault's, dropped after
            assert copy.location != vault.location and "_scratch_" in copy.location
            assert copy.sessions.hook_seen("context-surfacing", "a prompt", session_id="s1")
            copy.sessions.hook_seen("context-surfacing", "only in the copy", session_id="s1")
            scratch = copy._connection.schema  # type: ignore[attr-defined]
        assert not vault.sessions.hook_seen(
            "context-surfacing", "only in the copy", session_id="s1"
        )
        gone = vault._connection.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = ?", (scratch,)
        ).fetchone()
        assert gone is None
    with Vault.open(secret_url, config_dir=tmp_path / "config", create=False) as again:
        assert again.sessions.hook_seen("context-surfacing", "a prompt", session_id="s1")


def test_a_read_never_creates_a_vault_on_the_server(url: str, tmp_path: Path) -> None:
    secret_url, password = _with_password(url)
    with pytest.raises(VaultNotFoundError) as missing:
        Vault.open(secret_url, config_dir=tmp_path / "config", create=False)
    message = str(missing.value)
    assert message.startswith(f"no vault at {shown_location(secret_url)}: create one")
    assert password not in message and "\n" not in message
    assert not _schema_exists(url)
    import psycopg

    schema = url.rsplit("schema=", 1)[1]
    with psycopg.connect(SERVER, autocommit=True) as raw:  # a schema that holds no vault
        raw.execute(f'CREATE SCHEMA "{schema}"')
    with pytest.raises(VaultNotFoundError):
        Vault.open(secret_url, config_dir=tmp_path / "config", create=False)
    with psycopg.connect(SERVER, autocommit=True) as raw:
        tables = raw.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchone()
    assert tables is not None and tables[0] == 0


def test_an_unreachable_server_is_one_line_without_the_password(tmp_path: Path) -> None:
    for url in (
        f"postgresql://me:{PASSWORD}@127.0.0.1:9/db?schema=a&connect_timeout=2",
        f"postgresql://me@127.0.0.1:9/db?schema=a&password={PASSWORD}&connect_timeout=2",
    ):
        with pytest.raises(VaultOpenError) as refused:
            Vault.open(url, config_dir=tmp_path / "config", create=False)
        assert "cannot reach the PostgreSQL vault" in str(refused.value)
        assert PASSWORD not in str(refused.value) and "\n" not in str(refused.value)


# -- the CLI, as a process ------------------------------------------------------------------------


def test_the_cli_runs_on_a_url_from_the_environment_and_from_vault(
    url: str, tmp_path: Path
) -> None:
    secret_url, password = _with_password(url)
    shown = shown_location(secret_url)
    env = _environment(tmp_path)
    named = env | {"MEMTROVE_VAULT": secret_url}
    code, out, err = _run(["init"], named)
    assert code == 0, err
    assert f"vault ready: {shown}" in out
    for arguments, environment in (
        (["status"], named),  # the lean path
        (["status"], named | {"MEMTROVE_LEAN": "off"}),  # the Typer CLI
        (["--vault", secret_url, "status"], env),
        (["--vault", secret_url, "status"], env | {"MEMTROVE_LEAN": "off"}),
    ):
        code, out, err = _run(arguments, environment)
        assert code == 0, err
        assert out.startswith(f"vault       {shown} (on the server)\n"), out
        assert "p001_baseline" in out and password not in out + err
    code, out, err = _run(["--vault", secret_url, "status", "--json"], env)
    assert code == 0, err
    assert json.loads(out)["path"] == shown
    code, out, err = _run(["path"], named)
    assert (code, out) == (0, f"{shown}\n"), err
    code, out, err = _run(["collection", "list"], named)
    assert code == 0, err
    code, out, err = _run(["doctor", "--json"], named)
    checks = {check["name"]: check for check in json.loads(out)["checks"]}
    assert checks["vault"]["status"] == "ok" and checks["schema"]["status"] == "ok", out
    assert password not in out + err
    cache = Path(env["XDG_CACHE_HOME"])
    for path in cache.rglob("*"):
        assert not path.is_file() or password.encode() not in path.read_bytes(), path


def test_a_read_command_on_an_empty_schema_fails_in_one_line(url: str, tmp_path: Path) -> None:
    secret_url, password = _with_password(url)
    env = _environment(tmp_path)
    for arguments, environment in (
        (["status"], env | {"MEMTROVE_VAULT": secret_url}),
        (["search", "anything"], env | {"MEMTROVE_VAULT": secret_url}),
        (["--vault", secret_url, "get", "notes/x.md"], env),
        (["--vault", secret_url, "list"], env),
    ):
        code, out, err = _run(arguments, environment)
        assert code == 1, (arguments, out, err)
        assert err == (
            f"memtrove: error: no vault at {shown_location(secret_url)}: create one with "
            "`memtrove init` or `memtrove bootstrap FOLDER`, or name yours with --vault or "
            "MEMTROVE_VAULT\n"
        ), (arguments, err)
        assert password not in out + err
    assert not _schema_exists(url)
