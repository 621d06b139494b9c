"""Any file in a collection (name and bytes): ``update`` finishes, indexes what it can and
names a reason for every file it leaves out; nothing else in the collection is lost."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtrove import Vault

names = st.binary(min_size=1, max_size=40).map(
    lambda raw: raw.replace(b"/", b"_").replace(b"\x00", b"_").strip(b".") or b"x"
)
bodies = st.one_of(
    st.binary(max_size=3000),
    st.text(max_size=3000).map(lambda t: t.encode("utf-8", errors="surrogatepass")),
    st.sampled_from([b"---\ntitle: [unclosed\n---\nbody", b"\xef\xbb\xbf# BOM title\n", b"---\n---\n",
                     b"# " + b"x" * 100_000, b"\xff\xfe\x00h\x00i", b"---\n" + b"a: " * 5000]),
)  # fmt: skip


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=st.lists(st.tuples(names, bodies), min_size=1, max_size=6))
def test_update_survives_any_file(files: list[tuple[bytes, bytes]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        notes = root / "notes"
        notes.mkdir()
        (notes / "anchor.md").write_text("# Anchor\n\nAlways indexed.\n", encoding="utf-8")
        for name, body in files:
            path = os.path.join(os.fsencode(notes), name + b".md")
            try:
                with open(path, "wb") as handle:
                    handle.write(body)
            except OSError:
                continue  # a name this filesystem refuses
        with Vault.open(root / "vault.sqlite", config_dir=root / "config") as vault:
            vault.add_collection(notes, name="fuzz")
            report = vault.update()
            assert vault.get("fuzz/anchor.md").title == "Anchor"
            listed = len(os.listdir(os.fsencode(notes)))
            assert report.added + len(report.skipped) == listed
            again = vault.update()
            assert again.added == 0 and again.removed == 0
