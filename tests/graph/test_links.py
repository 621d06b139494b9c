"""Links written in documents: extraction, resolution, and the indexer keeping them in step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtrove.graph.links import Link, Resolver, extract_links
from memtrove.vault import Vault
from tests.conftest import write

GO_PROPOSALS = Path(
    os.environ.get(
        "MEMTROVE_GO_PROPOSALS",
        Path(__file__).resolve().parents[3] / "shared" / "bench" / "prose" / "go-proposals",
    )
)


def targets(body: str, source: str = "notes/a.md") -> list[tuple[str, str]]:
    return [(link.kind, link.target) for link in extract_links(body, source)]


# -- extraction -------------------------------------------------------------------------------


def test_markdown_links_are_resolved_against_the_source_folder() -> None:
    body = (
        "See [b](b.md), [up](../top.md), [here](./c.md#part), [sp](my%20note.md), "
        '[angle](<other note.md>), [titled](d.md "Title"), [root](/x/y.md), [bare](plain).'
    )
    assert targets(body) == [
        ("markdown", "notes/b.md"),
        ("markdown", "top.md"),
        ("markdown", "notes/c.md"),
        ("markdown", "notes/my note.md"),
        ("markdown", "notes/other note.md"),
        ("markdown", "notes/d.md"),
        ("markdown", "x/y.md"),
        ("markdown", "notes/plain"),
    ]


def test_what_is_not_a_document_link() -> None:
    body = (
        "[web](https://example.com/a.md) [mail](mailto:a@b.c) ![img](pic.png) [anchor](#top) "
        "[pdf](paper.pdf) [proto](//host/x.md) [code](s []T) \\[esc](x.md) [[pic.png]] [[#Head]]"
    )
    assert targets(body) == []


def test_code_is_not_a_link() -> None:
    body = (
        "```\n[in](fenced.md) [[Fenced]]\n```\n"
        "~~~~python\n[[Tilde]]\n```\nstill code [[Tilde2]]\n~~~~\n"
        "Inline `[x](inline.md)` and ``[[Double]]`` but [real](real.md) and [[Real Note]].\n"
    )
    assert targets(body) == [("markdown", "notes/real.md"), ("wiki", "Real Note")]


def test_wikilinks_alias_heading_and_duplicates() -> None:
    links = extract_links(
        "[[Alpha]] [[Alpha|again]] [[beta#Section|B]] [[folder/Gamma^block]] ![[Embed]] "
        "[[  spaced   name ]] [[Done.md]] [x](b.md) [y](b.md#other)",
        "a.md",
    )
    assert links == [
        Link("markdown", "b.md", "x"),
        Link("wiki", "Alpha", None),
        Link("wiki", "beta", "B"),
        Link("wiki", "folder/Gamma", None),
        Link("wiki", "Embed", None),
        Link("wiki", "spaced name", None),
        Link("wiki", "Done.md", None),
    ]


def test_reference_definitions_are_links() -> None:
    body = "Read [the draft][d].\n\n[d]: drafts/draft.md\n[web]: https://example.com\n"
    assert targets(body, "index.md") == [("markdown", "drafts/draft.md")]


def test_hostile_text_gives_no_error() -> None:
    hostile = "[" * 5000 + "](" * 3000 + "[[" * 4000 + "`" * 999 + "\x00[[a\x00]]" + "]]" * 100
    assert isinstance(extract_links(hostile, "a.md"), list)
    assert extract_links("[[" + "x" * 5000 + "]]", "a.md") == []
    assert targets("[u](%E2%82%AC%ZZ.md) [[Café Ünïcode]] [[日本語]]") == [
        ("markdown", "notes/€%ZZ.md"),
        ("wiki", "Café Ünïcode"),
        ("wiki", "日本語"),
    ]


# -- resolution -------------------------------------------------------------------------------

OBSIDIAN = [
    (1, "Home.md"),
    (2, "Projects/Alpha.md"),
    (3, "Archive/Alpha.md"),
    (4, "Archive/Old/alpha.md"),
    (5, "Daily/2024-01-01.md"),
    (6, "Projects/Deep/Path/Beta.md"),
    (7, "Projects/my note.md"),
]


@pytest.mark.parametrize(
    ("link", "source", "expected"),
    [
        (Link("wiki", "Home", None), "Daily/2024-01-01.md", 1),
        (Link("wiki", "home", None), "Daily/2024-01-01.md", 1),  # case-insensitive
        (Link("wiki", "Alpha", None), "Daily/x.md", 3),  # the shortest path wins...
        (Link("wiki", "Alpha", None), "Archive/Old/alpha.md", 4),  # ...after the same folder
        (Link("wiki", "Alpha", None), "Archive/note.md", 3),
        (Link("wiki", "Archive/Alpha", None), "Home.md", 3),  # path-qualified
        (Link("wiki", "Old/Alpha", None), "Home.md", 4),
        (Link("wiki", "Path/Beta", None), "Home.md", 6),
        (Link("wiki", "Beta.md", None), "Home.md", 6),
        (Link("wiki", "Nope", None), "Home.md", None),
        (Link("wiki", "Other/Alpha", None), "Home.md", None),
        (Link("markdown", "Projects/Alpha.md", None), "Home.md", 2),
        (Link("markdown", "Projects/Alpha", None), "Home.md", 2),  # no suffix
        (Link("markdown", "projects/my note.md", None), "Home.md", 7),
        (Link("markdown", "Alpha.md", None), "Home.md", None),  # markdown links are paths
    ],
)
def test_resolution_like_obsidian(link: Link, source: str, expected: int | None) -> None:
    assert Resolver(OBSIDIAN).resolve(link, source) == expected


# -- through the indexer ----------------------------------------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Vault, Path]:
    folder = tmp_path / "kb"
    write(folder, "index.md", "# Index\n\nSee [[Alpha]], [beta](topics/beta.md) and [[Later]].\n")
    write(folder, "Alpha.md", "# Alpha\n\nBack to [home](index.md) and [[Alpha]] itself.\n")
    write(folder, "topics/beta.md", "# Beta\n\nSee [[alpha|the first]] and `[[Gamma]]`.\n")
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(folder, name="kb")
    vault.update()
    return vault, folder


def edges(vault: Vault) -> set[tuple[str, str]]:
    rows = vault._connection.execute(
        "SELECT s.path, t.path FROM memory_relations r JOIN documents s ON s.id = r.source_id "
        "JOIN documents t ON t.id = r.target_id WHERE r.relation_type = 'reference'"
    )
    return {(str(a), str(b)) for a, b in rows}


def test_links_become_reference_edges(linked: tuple[Vault, Path]) -> None:
    vault, _ = linked
    assert edges(vault) == {
        ("index.md", "Alpha.md"),
        ("index.md", "topics/beta.md"),
        ("Alpha.md", "index.md"),
        ("topics/beta.md", "Alpha.md"),
    }
    stored = {
        (kind, target, text, target_id is not None)
        for kind, target, text, target_id in vault.graph.links("kb/index.md")
    }
    assert stored == {
        ("wiki", "Alpha", None, True),
        ("markdown", "topics/beta.md", "beta", True),
        ("wiki", "Later", None, False),  # waiting for its target
    }
    alpha = vault.graph.links("kb/Alpha.md")
    assert ("wiki", "Alpha", None, vault.get("kb/Alpha.md").doc_id) in alpha  # a self-link: no edge
    relation_types = {r.relation_type for r in vault.graph.relations_of("kb/index.md")}
    assert relation_types == {"reference"}


def test_a_target_appearing_later_resolves(linked: tuple[Vault, Path]) -> None:
    vault, folder = linked
    write(folder, "sub/Later.md", "# Later\n\nNew.\n")
    vault.update()
    assert ("index.md", "sub/Later.md") in edges(vault)


def test_edit_rename_delete(linked: tuple[Vault, Path]) -> None:
    vault, folder = linked
    write(folder, "index.md", "# Index\n\nOnly [[topics/beta]] now.\n")
    vault.update()
    assert ("index.md", "Alpha.md") not in edges(vault)
    assert ("index.md", "topics/beta.md") in edges(vault)
    # rename beta: the markdown link from nowhere, the wikilink by name still finds it
    (folder / "topics" / "beta.md").rename(folder / "moved.md")
    vault.update()
    assert ("moved.md", "Alpha.md") in edges(vault)  # its own links follow the move
    assert ("index.md", "moved.md") not in edges(vault)  # [[topics/beta]] no longer matches
    write(folder, "index.md", "# Index\n\n[[MOVED]] and [m](moved.md).\n")
    vault.update()
    assert ("index.md", "moved.md") in edges(vault)
    # delete Alpha: every reference edge touching it goes, links to it wait again
    (folder / "Alpha.md").unlink()
    vault.update()
    assert not [edge for edge in edges(vault) if "Alpha.md" in edge]
    waiting = [link for link in vault.graph.links("kb/moved.md") if link[1] == "alpha"]
    assert waiting and waiting[0][3] is None
    write(folder, "Alpha.md", "# Alpha reborn\n")
    vault.update()
    assert ("moved.md", "Alpha.md") in edges(vault)


def test_closer_candidate_appearing_takes_over(tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    write(folder, "deep/er/Note.md", "# far\n")
    write(folder, "a/index.md", "# Index\n\n[[Note]]\n")
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(folder, name="kb")
    vault.update()
    assert edges(vault) == {("a/index.md", "deep/er/Note.md")}
    write(folder, "a/note.md", "# near\n")
    vault.update()
    assert edges(vault) == {("a/index.md", "a/note.md")}


def test_forgotten_document_leaves_traversal(linked: tuple[Vault, Path]) -> None:
    vault, _ = linked
    vault.curation.forget("kb/Alpha.md")
    assert not [edge for edge in edges(vault) if "Alpha.md" in edge]


def test_links_stay_in_their_collection(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write(one, "a.md", "[[Shared]]\n")
    write(two, "Shared.md", "# Shared\n")
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(one, name="one")
    vault.add_collection(two, name="two")
    vault.update()
    assert edges(vault) == set()


@pytest.mark.skipif(not GO_PROPOSALS.is_dir(), reason="the go-proposals corpus is not here")
def test_go_proposals_links_resolve(tmp_path: Path) -> None:
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(GO_PROPOSALS.resolve(), name="go")
    vault.update()
    found = edges(vault)
    assert ("go2draft.md", "go2draft-error-values-overview.md") in found
    assert ("go2draft-error-handling-overview.md", "go2draft-error-handling.md") in found
    assert any(target == "30333-smarter-scavenging.md" for _, target in found)
    # images, mailto and code like `Sum[T](s []T)` never become links
    rows = vault._connection.execute("SELECT target FROM document_links").fetchall()
    assert rows and not [t for (t,) in rows if t.endswith(".png") or "mailto" in t or " " in t]
    every_target = {str(t) for (t,) in rows}
    resolved = vault._connection.execute(
        "SELECT COUNT(*) FROM document_links WHERE target_id IS NOT NULL"
    ).fetchone()[0]
    assert resolved >= 10, every_target


def test_link_text_may_wrap_but_not_across_a_blank_line() -> None:
    assert targets("[the scavenging\npolicy](s.md#why)") == [("markdown", "notes/s.md")]
    assert targets("[broken\n\nacross](s.md)") == []


def test_links_across_batches_resolve(tmp_path: Path) -> None:
    folder = tmp_path / "chain"
    count = 450  # more than two indexing batches
    for number in range(count):
        write(folder, f"n{number:03}.md", f"# N{number}\n\nNext: [[n{(number + 1) % count:03}]]\n")
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(folder, name="chain")
    vault.update()
    found = edges(vault)
    assert len(found) == count
    assert ("n449.md", "n000.md") in found and ("n000.md", "n001.md") in found


def test_hostile_file_names_and_an_obsidian_layout(tmp_path: Path) -> None:
    folder = tmp_path / "Obsidian Vault"
    names = {
        "Daily Notes/2024-05-01.md": (
            "[[Café Ünïcode]] [[we'ird (name) & more]] [[Projects/Q&A]] "
            "[sp](../Projects/Q%26A.md) [[日本語のノート|jp]] [[ Home ]] ![[diagram.png]]\n"
        ),
        "Café Ünïcode.md": "# Café\n\nBack [[2024-05-01]].\n",
        "we'ird (name) & more.md": "# Weird\n",
        "Projects/Q&A.md": "# QA\n\n```\n[[Home]]\n```\n",
        "日本語のノート.md": "# 日本語\n",
        "Home.md": "# Home\n\n[[Missing One]] [[Home]]\n",
    }
    for name, text in names.items():
        write(folder, name, text)
    write(folder, "attachments/diagram.png", b"\x89PNG\r\n")
    vault = Vault.open(tmp_path / "vault.sqlite", config_dir=tmp_path / "config")
    vault.add_collection(folder, name="obsidian")
    vault.update()
    daily = "Daily Notes/2024-05-01.md"
    assert edges(vault) == {
        (daily, "Café Ünïcode.md"),
        (daily, "we'ird (name) & more.md"),
        (daily, "Projects/Q&A.md"),
        (daily, "日本語のノート.md"),
        (daily, "Home.md"),
        ("Café Ünïcode.md", daily),
    }
    home = vault.graph.links("obsidian/Home.md")
    assert [(kind, target, target_id is None) for kind, target, _, target_id in home] == [
        ("wiki", "Home", False),
        ("wiki", "Missing One", True),
    ]
