"""Per-collection settings in config.yaml: exclude, surface, stale_after_days."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtrove import Vault
from memtrove.errors import CollectionError, ConfigError
from tests.conftest import write


def configure(vault: Vault, text: str) -> None:
    vault.config_file.parent.mkdir(parents=True, exist_ok=True)
    vault.config_file.write_text(text, encoding="utf-8")


def test_settings_are_read_with_their_defaults(vault: Vault, notes: Path) -> None:
    configure(
        vault,
        f"collections:\n"
        f"  plain: {notes}\n"
        f"  docs:\n"
        f"    path: {notes}\n"
        f"    exclude: ['**/*.ru.md', ./i18n/, vendor-docs]\n"
        f"    surface: false\n"
        f"    stale_after_days: none\n"
        f"  logs:\n"
        f"    path: {notes}\n"
        f"    exclude: '*.tmp.md'\n"
        f"    stale_after_days: 30\n"
        f"  explicit:\n"
        f"    path: {notes}\n"
        f"    surface: true\n"
        f"    stale_after_days: auto\n",
    )
    plain, docs, logs, explicit = vault.collections()
    assert (plain.exclude, plain.surface, plain.stale_after_days) == ((), True, "auto")
    assert docs.exclude == ("**/*.ru.md", "i18n", "vendor-docs")
    assert (docs.surface, docs.stale_after_days) == (False, None)
    assert (logs.exclude, logs.stale_after_days) == (("*.tmp.md",), 30)
    assert (explicit.surface, explicit.stale_after_days) == (True, "auto")
    assert docs.to_dict()["exclude"] == ["**/*.ru.md", "i18n", "vendor-docs"]
    assert vault.unsurfaced_collections() == frozenset({"docs"})


@pytest.mark.parametrize("never", ["null", "~", "none", "None", "never", "NEVER"])
def test_never_stale_spellings(vault: Vault, notes: Path, never: str) -> None:
    configure(vault, f"collections:\n  n:\n    path: {notes}\n    stale_after_days: {never}\n")
    assert vault.collections()[0].stale_after_days is None


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("exclude", "42", "'exclude' must be a list of globs, not int"),
        ("exclude", "[ok, 3]", "'exclude' must be a list of globs; 3 is not text"),
        ("exclude", "['']", "'exclude' glob '' is empty"),
        ("exclude", "['/']", "'exclude' glob '/' is empty"),
        ("exclude", "['a\\\\b.md']", "use forward slashes"),
        ("exclude", "{a: b}", "'exclude' must be a list of globs, not dict"),
        ("surface", "maybe", "'surface' must be true or false, not 'maybe'"),
        ("surface", "1", "'surface' must be true or false, not 1"),
        ("stale_after_days", "0", "'stale_after_days' must be a number of days"),
        ("stale_after_days", "-5", "'stale_after_days' must be a number of days"),
        ("stale_after_days", "1.5", "not 1.5"),
        ("stale_after_days", "soon", "not 'soon'"),
        ("stale_after_days", "true", "not True"),
        ("stale_after_days", "99999999", "(1 to 36500)"),
    ],
)
def test_a_bad_value_is_one_line_naming_file_collection_and_key(
    vault: Vault, notes: Path, key: str, value: str, message: str
) -> None:
    configure(vault, f"collections:\n  docs:\n    path: {notes}\n    {key}: {value}\n")
    with pytest.raises(ConfigError) as caught:
        vault.collections()
    text = str(caught.value)
    assert text.startswith(f"{vault.config_file}: collection 'docs': '{key}' ")
    assert message in text and "\n" not in text
    if key == "surface":
        with pytest.raises(ConfigError):
            vault.unsurfaced_collections()
    else:  # the hook path does not parse a file that never says "surface"
        assert vault.unsurfaced_collections() == frozenset()


def test_add_collection_writes_the_settings_and_keeps_unknown_keys(
    vault: Vault, notes: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    configure(
        vault,
        f"lifecycle:\n  archive_after_days: 90\n"
        f"collections:\n  kept:\n    path: {other}\n    update: git pull\n    colour: blue\n",
    )
    added = vault.add_collection(
        notes, name="docs", exclude=["**/*.ru.md"], surface=False, stale_after_days=None
    )
    assert (added.exclude, added.surface, added.stale_after_days) == (("**/*.ru.md",), False, None)
    text = vault.config_file.read_text()
    assert "update: git pull" in text and "colour: blue" in text
    assert "archive_after_days: 90" in text
    assert "surface: false" in text and "stale_after_days: null" in text
    assert [c.name for c in vault.collections()] == ["kept", "docs"]
    assert vault.collections()[1] == added
    vault.remove_collection("docs")
    assert "colour: blue" in vault.config_file.read_text()
    plain = vault.add_collection(notes, name="plain")
    assert "surface" not in vault.config_file.read_text().split("plain:")[1]
    assert plain.stale_after_days == "auto"


def test_add_collection_checks_the_settings(vault: Vault, notes: Path) -> None:
    with pytest.raises(CollectionError, match="exclude glob '' is empty"):
        vault.add_collection(notes, exclude=[""])
    with pytest.raises(CollectionError, match="stale_after_days must be a number of days"):
        vault.add_collection(notes, stale_after_days=0)
    assert vault.collections() == []


def test_unsurfaced_collections_follow_the_file_without_reparsing_it(
    vault: Vault, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert vault.unsurfaced_collections() == frozenset()  # no config file yet
    configure(vault, f"collections:\n  a:\n    path: {notes}\n    surface: false\n")
    assert vault.unsurfaced_collections() == frozenset({"a"})
    reads: list[int] = []
    real_read = type(vault._collections)._read

    def counting_read(self: object) -> object:
        reads.append(1)
        return real_read(self)  # type: ignore[arg-type]

    monkeypatch.setattr(type(vault._collections), "_read", counting_read)
    for _ in range(5):
        assert vault.unsurfaced_collections() == frozenset({"a"})
    assert reads == []  # unchanged file: one stat per call, no parse
    configure(vault, f"collections:\n  a:\n    path: {notes}\n  b:\n    path: {notes}\n"
                     "    surface: false\n")  # fmt: skip
    assert vault.unsurfaced_collections() == frozenset({"b"})
    assert reads == [1]


def test_importing_the_vault_does_not_import_yaml() -> None:
    code = "import sys, memtrove.vault; print('yaml' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    )
    assert out.stdout.strip() == "False", out.stderr


def test_update_honours_exclude_from_the_config(vault: Vault, notes: Path) -> None:
    write(notes, "a.md", "# A\n\ngecko")
    write(notes, "a.ru.md", "# A\n\ngecko ru")
    configure(vault, f"collections:\n  n:\n    path: {notes}\n    exclude: ['*.ru.md']\n")
    report = vault.update()
    assert report.added == 1 and report.skipped_by_reason == {"excluded by pattern": 1}


def _bomb(levels: int) -> str:
    lines = ['l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]")
    return (
        "\n".join(lines) + f"\ncollections:\n  demo:\n    path: /tmp\n    exclude: *l{levels - 1}\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # plain YAML kept the second and indexed /tmp into demo
        ("collections:\n  demo: /srv/a\n  demo: /tmp\n", "found the key 'demo' twice"),
        # 9^9 values: 15 s, 4 GB and a 312 MB error line before
        (_bomb(9), "its aliases expand to more than 100,000 values"),
        ("collections: " + "[" * 5000 + "]" * 5000 + "\n", "it is nested too deeply"),
        ("collections:\n  ../../etc: /etc\n", "'../../etc' is not a collection name"),
        ("collections:\n  '': /etc\n", "'' is not a collection name"),
        ("collections:\n  a/b: /etc\n", "'a/b' is not a collection name"),
        ("collections:\n  ~: /etc\n", "'None' is not a collection name"),
    ],
)
def test_a_hostile_config_is_one_short_line(tmp_path: Path, text: str, message: str) -> None:
    from memtrove.config import CollectionConfig

    (tmp_path / "config.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        CollectionConfig(tmp_path / "config.yaml").load()
    assert message in str(caught.value) and len(str(caught.value)) < 500, str(caught.value)[:500]


def test_anchors_merges_and_number_names_still_read(tmp_path: Path) -> None:
    from memtrove.config import CollectionConfig

    (tmp_path / "config.yaml").write_text(
        "defaults: &d {pattern: '**/*.txt', surface: true}\n"
        "collections:\n"
        "  demo: {<<: *d, path: /srv/a, surface: false, exclude: &skip [drafts/**]}\n"
        "  2024: {path: /srv/b, exclude: *skip}\n",
        encoding="utf-8",
    )
    demo, year = CollectionConfig(tmp_path / "config.yaml").load()
    assert (demo.name, demo.pattern, demo.surface, demo.exclude) == (
        "demo", "**/*.txt", False, ("drafts/**",)
    )  # fmt: skip
    assert (year.name, year.exclude) == ("2024", ("drafts/**",))


def test_a_parsed_config_is_reused_while_its_text_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short command need not import PyYAML to read an unchanged config.yaml."""
    from memtrove.config import CollectionConfig, cache_dir

    config = tmp_path / "config.yaml"
    config.write_text("collections:\n  demo: {path: /srv/a, exclude: [drafts/**]}\n")
    first = CollectionConfig(config).load()
    (kept,) = (cache_dir() / "parsed-config").glob("*.json")
    with monkeypatch.context() as blocked:
        blocked.setitem(sys.modules, "yaml", None)  # `import yaml` now fails
        assert CollectionConfig(config).load() == first
    config.write_text("collections:\n  other: {path: /srv/b}\n")
    assert [c.name for c in CollectionConfig(config).load()] == ["other"]
    kept.write_text("{not json")
    assert [c.name for c in CollectionConfig(config).load()] == ["other"]
    config.write_text("collections:\n  2024: {path: /srv/b}\n")  # an int key: JSON would
    assert [c.name for c in CollectionConfig(config).load()] == ["2024"]  # make it text,
    assert "other" in kept.read_text()  # so it is not kept: parsed again every time
