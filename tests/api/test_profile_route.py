"""``GET /profile``: the real profile document, never whatever a search finds first."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from memtrove import Vault
from memtrove.vault.profile import profile_area
from tests.conftest import write


def test_profile_route_before_and_after_a_build(
    client: TestClient, demo: Vault, example_copy: Path
) -> None:
    missing = client.get("/profile")
    assert missing.status_code == 404
    assert "memtrove profile rebuild" in missing.json()["error"]
    profile_area(demo).rebuild(embed=False)
    answer = client.get("/profile")
    assert answer.status_code == 200
    data = answer.json()
    assert data["path"] == "_memtrove/profile.md"
    assert data["body"].startswith("---\n") and "# User Profile" in data["body"]
    assert data["static"] and isinstance(data["dynamic"], list)


def test_a_note_about_profiles_is_not_taken_for_the_profile(
    client: TestClient, demo: Vault, example_copy: Path
) -> None:
    write(example_copy, "notes/profile.md", "# Profile profile profile\n\nprofile profile profile")
    demo.update()
    profile_area(demo).rebuild(embed=False)
    data = client.get("/profile").json()
    assert data["path"] == "_memtrove/profile.md" and "# User Profile" in data["body"]
