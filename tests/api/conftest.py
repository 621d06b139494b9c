"""The REST app in-process: a vault of the example notes behind FastAPI's TestClient.

The clients call it as ``http://127.0.0.1:7438``, the Host a local program sends (the test
client's default, ``testserver``, is refused like any other unknown Host)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from memtrove import ModelSettings, Vault
from memtrove.api import create_app
from tests.conftest import EXAMPLES

TOKEN = "test-token-0123456789-abcdef"
BASE_URL = "http://127.0.0.1:7438"
# What every POST sends, a body-less one too (anything else is a 415)
JSON = {"Content-Type": "application/json"}
JWT_NOTE = "demo/decisions/0004-jwt-access-and-rotating-refresh-tokens.md"


def local_client(app: FastAPI, **options: Any) -> TestClient:
    """A test client that calls ``app`` as a local program does (Host 127.0.0.1:7438)."""
    return TestClient(app, base_url=BASE_URL, raise_server_exceptions=False, **options)


@pytest.fixture
def demo(tmp_path: Path, example_copy: Path) -> Iterator[Vault]:
    """A fresh vault of a writable copy of examples/vault (collection ``demo``), not embedded."""
    vault = Vault.open(tmp_path / "api.sqlite", config_dir=tmp_path / "api-config")
    vault.add_collection(example_copy, name="demo")
    vault.update()
    yield vault
    vault.close()


@pytest.fixture
def client(demo: Vault) -> Iterator[TestClient]:
    """No token: every route open."""
    with local_client(create_app(demo)) as test_client:
        yield test_client


@pytest.fixture
def docid(demo: Vault) -> str:
    return demo.get(JWT_NOTE).docid


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """Read-only: examples/vault indexed and embedded once per module (embedded wordllama)."""
    folder = tmp_path_factory.mktemp("embedded")
    vault = Vault.open(
        folder / "vault.sqlite", config_dir=folder / "config", models=ModelSettings()
    )
    vault.add_collection(EXAMPLES, name="demo")
    vault.update()
    vault.embed()
    with local_client(create_app(vault)) as test_client:
        yield test_client
    vault.close()
