"""What the read commands print, from plain data: ranked results, the stages line, a
document's lines and the vault's status.

The text is what the Typer commands print through Rich (see :mod:`memtrove.cli.lean.output`);
each line also carries its Rich markup, used when Rich would change something.
"""

from __future__ import annotations

from memtrove.cli.lean.output import escape, print_line, printable
from memtrove.locations import is_server_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from memtrove.results import UpdateReport, VaultStatus

__all__ = ["print_results", "print_stages", "print_status", "print_update", "selected_lines"]


def print_results(results: Sequence[Mapping[str, Any]]) -> None:
    """Ranked results (``no results`` when empty). Each result has the keys of
    ``SearchResult.to_dict()`` (``score`` unrounded when known) and ``content`` (None unless
    asked for)."""
    if not results:
        print_line("no results")
    for rank, r in enumerate(results, 1):
        score, collection, path = f"{r['score']:.3f}", printable(r["collection"]), r["path"]
        path, title, snippet = printable(path), printable(r["title"]), printable(r["snippet"])
        kind, docid = printable(r["content_type"]), r["docid"]
        print_line(
            f"[bold]{rank:>2}. {score}[/]  {escape(collection)}/{escape(path)}  "
            f"[dim]\\[{kind}] #{docid}[/]",
            tags=4,
        )
        print_line(f"    {title}", markup_on=False)
        if snippet:
            print_line(f"    [dim]{escape(snippet)}[/]", tags=2)
        content = r.get("content")
        if content is not None:
            for line in content.splitlines():
                print_line(f"    | {printable(line, tabs=True)}", markup_on=False)


def print_stages(stages: Sequence[str], skipped: Mapping[str, str]) -> None:
    """``stages: bm25 > vector ...  (skipped rerank: why)`` after ``query``'s results."""
    line = f"stages: {' > '.join(stages) or 'none'}"
    reasons = "; ".join(f"{stage}: {why}" for stage, why in skipped.items())
    if reasons:
        line += f"  (skipped {reasons})"
    print_line(f"[dim]{escape(line)}[/]", tags=2)


def selected_lines(body: str, from_line: int, max_lines: int | None) -> tuple[list[str], int]:
    """(the lines ``get`` prints, the document's line count)."""
    lines = body.splitlines()
    end = len(lines) if max_lines is None else from_line - 1 + max_lines
    return lines[from_line - 1 : end], len(lines)


def print_status(info: VaultStatus) -> None:
    """``memtrove status``: path, size, schema, counts, newest, types, collections."""
    size = "on the server" if is_server_url(info.path) else f"{info.size_bytes / 1_048_576:.1f} MiB"
    lines = [
        f"vault       {printable(str(info.path))} ({size})",
        f"schema      {', '.join(info.schema)}",
        f"documents   {info.documents} active, {info.inactive_documents} inactive, "
        f"{info.fragments} fragments",
    ]
    space = f" of {info.embedding_space}" if info.embedding_space else ": run `memtrove embed`"
    pending = f", {info.unembedded} documents unembedded" if info.unembedded else ""
    lines.append(f"vectors     {info.vectors}{space}{pending}")
    if info.geometry_taint:
        lines.append(f"geometry    TAINTED {info.geometry_taint}: see `memtrove doctor`")
    if info.second_channel != "off":
        lines.append(f"second      {info.second_channel}")
    if info.last_modified_at:
        lines.append(f"newest      {info.last_modified_at}")
    lines.append(f"sessions    {info.sessions} logged")
    if info.content_types:
        types = ", ".join(f"{name} {count}" for name, count in info.content_types.items())
        lines.append(f"types       {types}")
    for c in info.collections:
        missing = "" if c.path_exists else "  (folder missing)"
        where = printable(f"{c.path}  {c.pattern}")
        lines.append(f"collection  {c.name}: {c.documents} docs  {where}{missing}")
    if not info.collections:
        lines.append("collection  none yet: memtrove collection add <folder>")
    for line in lines:
        print_line(line)


def print_update(report: UpdateReport, *, verbose: bool = False) -> None:
    """``memtrove update``: the summary, one ``skipped N: reason`` line per reason (with
    ``verbose``, each file under it), every notice; warnings on stderr."""
    import sys

    print_line(f"{report.summary}  ({report.elapsed_seconds:.2f}s)")
    for reason, count in report.skipped_by_reason.items():
        print_line(f"skipped {count}: {reason}", markup_on=False)
        if verbose:
            for issue in sorted(report.skipped, key=lambda i: (i.collection, i.path)):
                if issue.reason == reason:
                    detail = f" ({issue.detail})" if issue.detail else ""
                    shown = printable(f"{issue.collection}/{issue.path}{detail}")
                    print_line(f"  {shown}", markup_on=False)
    for issue in report.notices:
        print_line(f"note {printable(str(issue))}", markup_on=False)
    for warning in report.warnings:
        print(f"memtrove: warning: {printable(warning)}", file=sys.stderr)
