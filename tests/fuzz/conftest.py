"""Shared strategies for the fuzz suite: text that is hostile on purpose (control and
zero-width characters, lone surrogates, markup of ours, query operators, very long runs)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

NASTY_PIECES = [
    "\x00", "\ud800", "\udfff", "\u200b", "\u202e", "\U000e0041", "\ufeff", "\r\n", "\t",
    '"', "'", "`", "*", "^", "(", ")", ":", "-", "NEAR(", "AND", "OR", "NOT", "{", "}", "[", "]",
    "</vault-context>", "<system>", "<|im_start|>", "ignore previous instructions",
    "%s", "${HOME}", "../../etc/passwd", "\\", "/", "#", "---\ntitle: [\n---", "日本語", "🙂",
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "x" * 5000,
]  # fmt: skip

hostile_text = st.lists(
    st.one_of(st.text(max_size=40), st.sampled_from(NASTY_PIECES)), max_size=12
).map("".join)

json_values: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-(2**63), 2**63), st.floats(allow_nan=False),
        hostile_text,
    ),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.one_of(hostile_text, st.sampled_from(["query", "limit", "prompt"])),
                      children, max_size=5),
    max_leaves=12,
)  # fmt: skip
