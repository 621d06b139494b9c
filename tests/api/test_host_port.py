"""The REST Host check reads the port: another port is another origin (421 like a wrong
name); the loopback names stay equivalent on the server's own port."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.api import create_app
from tests.api.conftest import local_client

# the test client's server listens on 127.0.0.1:7438
WRONG_PORTS = [
    "127.0.0.1:9999",
    "localhost:7439",
    "LOCALHOST:80",
    "localhost",  # no port: 80
    "[::1]:9999",
    "[::1]",
    "127.0.0.1:07437",
    "[0:0:0:0:0:0:0:1]:443",
]
OWN_PORT = ["127.0.0.1:7438", "localhost:7438", "LocalHost:7438", "[::1]:7438", "127.0.0.1:07438"]


@pytest.mark.parametrize("host", WRONG_PORTS)
def test_a_loopback_name_with_another_port_is_421(client: TestClient, host: str) -> None:
    for method, path in (("GET", "/collections"), ("POST", "/search"), ("GET", "/export")):
        answer = client.request(
            method,
            path,
            headers={"Host": host, "Content-Type": "application/json"},
            content=b'{"query": "x"}',
        )
        assert answer.status_code == 421, (host, path)
        assert "unknown Host header" in answer.json()["error"]


@pytest.mark.parametrize("host", OWN_PORT)
def test_the_own_port_under_any_loopback_name_is_served(client: TestClient, host: str) -> None:
    assert client.get("/collections", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["memory.example:9999", "memory.example", "192.0.2.10:1"])
def test_an_allowed_host_with_another_port_is_421(demo: Vault, host: str) -> None:
    app = create_app(demo, allowed_hosts=["memory.example", "192.0.2.10"])
    with local_client(app) as client:
        assert client.get("/collections", headers={"Host": host}).status_code == 421
        assert (
            client.get("/collections", headers={"Host": "memory.example:7438"}).status_code == 200
        )
