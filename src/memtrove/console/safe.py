"""Stored text as safe HTML: the console renders documents written by anyone.

Markdown is parsed by ``markdown-it-py`` with raw HTML off (a ``<script>`` in a note is
text, shown as typed), then the HTML is cleaned by ``nh3`` (the ammonia sanitiser) to an
allow-list of tags and attributes: no scripts, styles, event handlers, forms or frames; links
only to ``http``, ``https`` and ``mailto`` (never ``javascript:`` or ``data:``), each opened
without a referrer; no images at all, so nothing is fetched from a network when a page is
read. A huge body is cut before it is parsed, and its headings sit one level down (the
page's own title is its only ``h1``).
"""

from __future__ import annotations

import re

import nh3
from markdown_it import MarkdownIt

__all__ = ["MAX_RENDERED_CHARS", "render_markdown"]

MAX_RENDERED_CHARS = 200_000

_TAGS = {
    "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "code",
    "pre", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
_SCHEMES = {"http", "https", "mailto"}
_HEADING = re.compile(r"<(/?)h([1-6])>")
_PARSER = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> tuple[str, bool]:
    """``text`` as sanitised HTML, and whether it was cut at :data:`MAX_RENDERED_CHARS`."""
    cut = len(text) > MAX_RENDERED_CHARS
    html = _PARSER.render(text[:MAX_RENDERED_CHARS] if cut else text)
    html = _HEADING.sub(lambda m: f"<{m[1]}h{min(6, int(m[2]) + 1)}>", html)
    clean = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    return clean, cut
