"""Reading one markdown file: frontmatter, title, headings and fragments.

Title (``ParsedMarkdown.title``, then ``document_title`` for the path-based fallbacks), first
match wins:

1. frontmatter ``title`` (a string or number, whitespace collapsed);
2. the first heading of any level, ATX (``#`` to ``######``) or setext (a one-line paragraph
   underlined with ``===`` or ``---``), outside code fences and HTML comments, unless it is
   a generic section name (``Summary``, ``Abstract``, ``Motivation``, ``Background``,
   ``Overview``, ``Introduction``, ``Context``, ``Contents``, ``Index``, ``README``, ...,
   compared without case, numbering or a trailing colon): a generic first heading never
   titles a document;
3. a metadata title from the opening lines before that heading (the first 30 non-blank
   lines): ``Title: ...`` (also as a list item ``- Title: ...``, bold ``**Title:**``, or a
   Pandoc ``% Title`` first line), else ``Feature Name: ...`` as Rust RFCs write it (or
   frontmatter ``feature`` as NixOS RFCs do); backticks and quotes are dropped and
   placeholders (``N/A``, ``none``, ``TBD``, ``(fill me in ...)``, ``[Title]``) ignored. When
   the body starts with a ``---`` block that is not valid YAML, that block is read as such
   metadata and its closing ``---`` is not a setext underline;
4. for a folder's index page (``index``, ``README`` or ``_index``, any case and extension),
   the folder name with ``-`` and ``_`` read as spaces (``auth/refresh-tokens/README.md`` ->
   ``refresh tokens``);
5. the file name without its extension.

Links in a title keep their text only (``[Foo](foo.md)`` -> ``Foo``); titles are capped at
300 characters.

Fragments are character ranges into the stored text (``content.doc``), so they cost a few
integers each and always agree with the body they come from:

- ``full``: the body (after the frontmatter), up to 500,000 characters, always first;
- ``frontmatter``: the YAML block, when there is one, except for ``conversation`` documents
  (a mined exchange's YAML is its ids, source and speakers: a vector of it only matched
  queries on the title, which ``full`` already carries);
- ``section``: from each heading to the next, long ones cut at paragraph breaks;
- ``list``: each run of list items;
- ``code``: each fenced code block.

Bodies under 200 characters keep only ``full``; other fragments run 50-2,000 characters and
a document has at most 500.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any, NamedTuple

__all__ = [
    "CODE_FENCE",
    "GENERIC_HEADINGS",
    "HEADING",
    "SECTION_NUMBER",
    "Fragment",
    "ParsedMarkdown",
    "document_title",
    "is_generic_heading",
    "parse_markdown",
    "split_fragments",
]

FULL_LIMIT = 500_000
SPLIT_THRESHOLD = 200
FRAGMENT_MIN = 50
FRAGMENT_MAX = 2_000
MAX_FRAGMENTS = 500
TITLE_LIMIT = 300
METADATA_LINES = 30

# Section names that say where in a document you are, not what it is about.
GENERIC_HEADINGS = frozenset(
    {
        "summary",
        "abstract",
        "motivation",
        "background",
        "overview",
        "introduction",
        "intro",
        "context",
        "preface",
        "contents",
        "table of contents",
        "toc",
        "index",
        "readme",
        "home",
        "about",
    }
)
_INDEX_STEMS = frozenset({"index", "readme", "_index"})


def _safe_loader() -> Any:
    """The C YAML loader when available (imported on first frontmatter, not on import)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_FENCE_OPEN = re.compile(r"^---[ \t]*\r?\n")
_FENCE_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
# A closing run of #s only counts after a space or tab (CommonMark): "# Learning C#" keeps its #.
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
CODE_FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*([\w+#.-]*)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_FENCE_MARKS = frozenset("`~")
_LIST_MARKS = frozenset("-*+0123456789")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-{2,})[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
# Lines that cannot be the text of a setext heading: list items, quotes, tables, HTML,
# link reference definitions.
_NOT_PARAGRAPH = re.compile(r"^ {0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|>|\||<|\[[^\]]+\]:)")
_KEY_VALUE = re.compile(r"^ {0,3}[A-Za-z][\w()/ -]{0,30}:[ \t]+\S")
_METADATA = re.compile(
    r"^ {0,3}(?:[-*+][ \t]+)?(?:\*\*|__)?(title|feature[ _-]?name)(?:\*\*|__)?[ \t]*:"
    r"(?:\*\*|__)?[ \t]*(.*?)[ \t]*$",
    re.IGNORECASE,
)
_PANDOC_TITLE = re.compile(r"^%[ \t]+(\S.*?)[ \t]*$")
_TITLE_SCAN = 10_000
_INLINE_LINK = re.compile(r"!?\[([^\]\n]{0,300})\](?:\([^)\n]{0,2000}\)|\[[^\]\n]{0,300}\])")
SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[ivx]+\.)\s+")
_PLACEHOLDERS = frozenset({"", "n/a", "na", "none", "null", "tbd", "todo", "-", "?", "title"})


_BARE_YAML = frozenset({"conversation"})  # content types whose YAML gets no fragment


class Fragment(NamedTuple):
    seq: int
    fragment_type: str
    label: str
    start: int
    end: int


_PARSED_FIELDS = (
    "text",
    "body_start",
    "frontmatter",
    "frontmatter_span",
    "frontmatter_error",
    "title",
)


class ParsedMarkdown:
    """What the indexer needs from one file's text. Immutable, compared and shown by its
    fields (as a frozen dataclass, without importing :mod:`dataclasses` on each update)."""

    __slots__ = _PARSED_FIELDS
    text: str
    body_start: int
    frontmatter: dict[str, Any]
    frontmatter_span: tuple[int, int] | None
    frontmatter_error: str | None
    title: str | None
    """The title the file gives itself (rules 1-3 of the module docstring), else None."""

    def __init__(
        self,
        text: str,
        body_start: int,
        frontmatter: dict[str, Any] | None = None,
        frontmatter_span: tuple[int, int] | None = None,
        frontmatter_error: str | None = None,
        title: str | None = None,
    ) -> None:
        values: tuple[object, ...] = (text, body_start, {} if frontmatter is None else frontmatter)
        values += (frontmatter_span, frontmatter_error, title)
        for name, value in zip(_PARSED_FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _PARSED_FIELDS)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _PARSED_FIELDS)
        return f"ParsedMarkdown({shown})"

    def __reduce__(self) -> tuple[type[ParsedMarkdown], tuple[object, ...]]:
        return (ParsedMarkdown, self._fields())

    @property
    def body(self) -> str:
        return self.text[self.body_start :]

    @property
    def first_heading(self) -> str | None:
        """Alias of ``title``, for callers that predate it."""
        return self.title


def parse_markdown(text: str) -> ParsedMarkdown:
    """Split off YAML frontmatter; malformed frontmatter leaves the whole text as body."""
    frontmatter: dict[str, Any] = {}
    span: tuple[int, int] | None = None
    error: str | None = None
    body_start = 0
    opening = _FENCE_OPEN.match(text)
    if opening:
        closing = _FENCE_CLOSE.search(text, opening.end())
        if closing:
            yaml_text = text[opening.end() : closing.start()]
            try:
                import yaml

                loaded = yaml.load(yaml_text, Loader=_safe_loader())
            except yaml.YAMLError as exc:
                error = "malformed frontmatter: " + _first_line(str(exc))
            except (RecursionError, ValueError, TypeError) as exc:
                error = f"malformed frontmatter: {type(exc).__name__}"
            else:
                if loaded is None or isinstance(loaded, dict):
                    frontmatter = {str(key): value for key, value in (loaded or {}).items()}
                    span = (opening.end(), closing.start())
                    body_start = closing.end()
                    if text.startswith("\n", body_start):
                        body_start += 1
                    elif text.startswith("\r\n", body_start):
                        body_start += 2
                else:
                    error = "malformed frontmatter: expected key: value pairs"
    return ParsedMarkdown(
        text=text,
        body_start=body_start,
        frontmatter=frontmatter,
        frontmatter_span=span,
        frontmatter_error=error,
        title=_own_title(text, body_start, frontmatter),
    )


def document_title(parsed: ParsedMarkdown, path: str) -> str:
    """The title to index ``path`` under: the file's own, else its folder's or file's name."""
    if parsed.title:
        return parsed.title
    pure = PurePosixPath(path)
    if pure.stem.lower() in _INDEX_STEMS and pure.parent.name:
        folder = " ".join(re.split(r"[-_\s]+", pure.parent.name)).strip()
        if folder:
            return folder[:TITLE_LIMIT]
    return pure.stem or path


def is_generic_heading(heading: str) -> bool:
    """Whether a heading names a section (``Summary``, ``1. Introduction:``), not a topic."""
    plain = SECTION_NUMBER.sub("", heading.replace("*", "").replace("`", "").strip().lower())
    plain = " ".join(plain.strip(" \t:.-_").split())
    return plain in GENERIC_HEADINGS or not plain


def _first_line(message: str) -> str:
    return " ".join(message.split())[:160]


def _lines(text: str, start: int) -> list[tuple[int, str]]:
    """(offset, line without newline) for every line of ``text[start:]``."""
    result: list[tuple[int, str]] = []
    offset = start
    for line in text[start:].splitlines(keepends=True):
        result.append((offset, line.rstrip("\r\n")))
        offset += len(line)
    return result


def _closes_fence(match: re.Match[str] | None, fence: str) -> bool:
    """Whether a fence line closes the block opened by ``fence``: same character, as long."""
    return match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)


def _own_title(text: str, start: int, frontmatter: dict[str, Any]) -> str | None:
    declared = frontmatter.get("title")
    if isinstance(declared, (str, int, float)) and not isinstance(declared, bool):
        title = " ".join(str(declared).split())
        if title:
            return title[:TITLE_LIMIT]
    heading, metadata = _scan_opening(text, start)
    if heading is not None and not is_generic_heading(heading):
        return heading
    if metadata is None:
        for key in ("feature", "feature_name", "feature-name"):
            declared = frontmatter.get(key)
            if isinstance(declared, str):
                metadata = _metadata_value(declared)
                if metadata:
                    break
    return metadata


def _scan_opening(text: str, start: int) -> tuple[str | None, str | None]:
    """The first heading, and the metadata title written before it (see module docstring)."""
    lines = _lines(text, start)
    titles: list[str] = []  # Title: / % Title values, in order
    features: list[str] = []  # Feature Name: values
    yaml_end = -1
    if start == 0 and lines and _FENCE_CLOSE.match(lines[0][1]) and lines[0][1].startswith("-"):
        # Frontmatter that failed to parse: its lines are metadata, never headings.
        for index in range(1, len(lines)):
            if _FENCE_CLOSE.match(lines[index][1]):
                yaml_end = index
                break
    fence: str | None = None
    in_comment = False
    paragraph: str | None = None  # the current paragraph's text while it is one line long
    paragraph_lines = 0
    seen = 0  # non-blank lines looked at for metadata
    heading: str | None = None
    for index, (_, line) in enumerate(lines):
        stripped = line.strip()
        if index <= yaml_end:
            if 0 < index < yaml_end:
                _collect_metadata(line, titles, features)
            continue
        fence_match = CODE_FENCE.match(line)
        if fence is not None:
            if _closes_fence(fence_match, fence):
                fence = None
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        if fence_match:
            fence, paragraph, paragraph_lines = fence_match.group(1), None, 0
            continue
        if stripped.startswith("<!--"):
            in_comment = "-->" not in stripped[4:]
            paragraph, paragraph_lines = None, 0
            continue
        match = HEADING.match(line)
        if match:
            heading = match.group(2)
            break
        underline = _SETEXT_UNDERLINE.match(line)
        # a one-line paragraph over === or ---, except "key: value" over --- (a metadata
        # block's end, not a heading)
        if (
            underline
            and paragraph is not None
            and paragraph_lines == 1
            and (underline.group(1)[0] == "=" or not _KEY_VALUE.match(paragraph))
        ):
            heading = paragraph
            break
        if not stripped:
            paragraph, paragraph_lines = None, 0
            continue
        seen += 1
        if seen <= METADATA_LINES:
            if seen == 1 and (pandoc := _PANDOC_TITLE.match(line)):
                titles.append(pandoc.group(1))
            else:
                _collect_metadata(line, titles, features)
        if _THEMATIC_BREAK.match(line) or _NOT_PARAGRAPH.match(line) or line[:4] == "    ":
            paragraph, paragraph_lines = None, 0
        elif paragraph_lines == 0:
            paragraph, paragraph_lines = stripped, 1
        else:
            paragraph_lines += 1
    if heading is not None:
        heading = _plain_title(heading) or None
    for value in titles + features:
        cleaned = _metadata_value(value)
        if cleaned:
            return heading, cleaned
    return heading, None


def _collect_metadata(line: str, titles: list[str], features: list[str]) -> None:
    match = _METADATA.match(line)
    if match:
        (titles if match.group(1).lower() == "title" else features).append(match.group(2))


def _metadata_value(value: str) -> str | None:
    """A metadata value as a title; None for an empty value or a template's placeholder."""
    cleaned = _plain_title(value.strip().strip("`'\"*_").strip())
    lowered = cleaned.lower()
    if lowered in _PLACEHOLDERS or "fill me in" in lowered or "leave this empty" in lowered:
        return None
    if (cleaned[:1], cleaned[-1:]) in {("(", ")"), ("[", "]"), ("<", ">")}:
        return None
    return cleaned


def _plain_title(title: str) -> str:
    """A heading or metadata value as a title: link text only, whitespace collapsed, capped.
    Only the start of a long line can reach the title: the rest is not scanned for links."""
    return " ".join(_INLINE_LINK.sub(r"\1", title[:_TITLE_SCAN]).split())[:TITLE_LIMIT]


def split_fragments(parsed: ParsedMarkdown, title: str) -> list[Fragment]:
    """The fragments of a parsed document, ``full`` first, in document order after it."""
    text = parsed.text
    body_start = parsed.body_start
    body_end = min(len(text), body_start + FULL_LIMIT)
    pieces: list[tuple[str, str, int, int]] = [("full", title, body_start, body_end)]
    if len(text) - body_start >= SPLIT_THRESHOLD:
        if parsed.frontmatter_span and parsed.frontmatter.get("content_type") not in _BARE_YAML:
            start, end = parsed.frontmatter_span
            if end - start >= FRAGMENT_MIN:
                pieces.append(("frontmatter", title, start, min(end, start + FRAGMENT_MAX)))
        pieces.extend(_structural_pieces(text, body_start, title))
    if parsed.frontmatter.get("observation_type"):
        from memtrove.index.observation_fragments import with_observation_pieces

        pieces = with_observation_pieces(pieces, text, body_start, title)
    fragments: list[Fragment] = []
    for kind, label, start, end in pieces[:MAX_FRAGMENTS]:
        fragments.append(Fragment(len(fragments), kind, label[:200], start, end))
    return fragments


def _structural_pieces(text: str, body_start: int, title: str) -> list[tuple[str, str, int, int]]:
    lines = _lines(text, body_start)
    sections: list[tuple[str, int]] = []  # (label, start offset)
    lists: list[tuple[str, int, int]] = []
    codes: list[tuple[str, int, int]] = []
    heading = title
    fence: str | None = None
    code_start = 0
    code_label = ""
    list_start: int | None = None
    list_end = 0
    for offset, line in lines:
        end = offset + len(line)
        # The first non-blank character says which patterns could match: most lines are
        # prose, and three regular expressions per line were most of the parsing time.
        first = line.lstrip()[:1]
        fence_match = CODE_FENCE.match(line) if first in _FENCE_MARKS else None
        if fence is not None:
            if _closes_fence(fence_match, fence):
                codes.append((code_label, code_start, end))
                fence = None
            continue
        if fence_match:
            fence, code_start = fence_match.group(1), offset
            code_label = f"{heading} ({fence_match.group(2)})" if fence_match.group(2) else heading
            list_start = _close_list(lists, heading, list_start, list_end)
            continue
        heading_match = HEADING.match(line) if first == "#" else None
        if heading_match:
            list_start = _close_list(lists, heading, list_start, list_end)
            heading = heading_match.group(2).strip() or heading
            sections.append((heading, offset))
            continue
        if first in _LIST_MARKS and _LIST_ITEM.match(line):
            if list_start is None:
                list_start = offset
            list_end = end
        elif list_start is not None and line.strip() and line[:1] in " \t":
            list_end = end  # continuation of the current item
        elif list_start is not None and line.strip():
            list_start = _close_list(lists, heading, list_start, list_end)
    if fence is not None:
        codes.append((code_label, code_start, len(text)))
    _close_list(lists, heading, list_start, list_end)

    pieces: list[tuple[str, str, int, int]] = []
    if not sections or sections[0][1] > body_start:
        sections.insert(0, (title, body_start))
    for index, (label, start) in enumerate(sections):
        end = sections[index + 1][1] if index + 1 < len(sections) else len(text)
        if len(sections) == 1 and end - start <= FRAGMENT_MAX:
            break  # one short section would only repeat `full`
        for piece_start, piece_end in _cut(text, start, end):
            pieces.append(("section", label, piece_start, piece_end))
    for label, start, end in lists:
        for piece_start, piece_end in _cut(text, start, end):
            pieces.append(("list", label, piece_start, piece_end))
    for label, start, end in codes:
        for piece_start, piece_end in _cut(text, start, end):
            pieces.append(("code", label, piece_start, piece_end))
    pieces.sort(key=lambda piece: (piece[2], piece[0]))
    return pieces


def _close_list(
    lists: list[tuple[str, int, int]], heading: str, start: int | None, end: int
) -> int | None:
    """Record the open list run, if any; returns None, the new 'no open list' state."""
    if start is not None:
        lists.append((heading, start, end))
    return None


def _cut(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` into pieces of 50-2,000 characters at paragraph breaks."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end - start < FRAGMENT_MIN:
        return []
    pieces: list[tuple[int, int]] = []
    while end - start > FRAGMENT_MAX:
        window_end = start + FRAGMENT_MAX
        cut = text.rfind("\n\n", start + FRAGMENT_MAX // 2, window_end)
        if cut < 0:
            cut = text.rfind("\n", start + FRAGMENT_MAX // 2, window_end)
        if cut < 0:
            cut = text.rfind(" ", start + FRAGMENT_MAX // 2, window_end)
        if cut < 0:
            cut = window_end
        pieces.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end - start >= FRAGMENT_MIN:
        pieces.append((start, end))
    elif pieces and end > start:
        # Too short to stand alone: join the tail to the previous piece, or, when that would
        # pass the maximum, cut the two again so that each gets at least the minimum.
        previous_start, _ = pieces.pop()
        if end - previous_start <= FRAGMENT_MAX:
            pieces.append((previous_start, end))
        else:
            lowest, highest = previous_start + FRAGMENT_MIN, end - FRAGMENT_MIN - 1
            cut = max(text.rfind("\n", lowest, highest), text.rfind(" ", lowest, highest))
            if cut < 0:
                pieces.extend([(previous_start, end - FRAGMENT_MIN), (end - FRAGMENT_MIN, end)])
            else:
                piece_end = cut
                while piece_end - previous_start > FRAGMENT_MIN and text[piece_end - 1].isspace():
                    piece_end -= 1
                pieces.extend([(previous_start, piece_end), (cut + 1, end)])
    return pieces
