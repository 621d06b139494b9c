"""Finding a batch's heuristic notes and entities one batch ahead, in a helper process.

Enrichment without an LLM is two halves of about equal size: finding (each document's
salient terms and the entities the heuristic names in it: Python over the text) and writing
(resolution, mentions, co-occurrences, edges: SQLite and its commits). In one process they
cannot overlap. So a run of at least :data:`AHEAD_DOCUMENTS` documents on a machine with a
second processor starts one helper process (:class:`memtrove.index.workers.Helper`, which
``MEMTROVE_INDEX_WORKERS=0`` turns off): it finds for the batch after the one being
written, with the same functions over a snapshot of the same vocabulary, so its answers are
the ones this process would find. A helper that cannot start, dies or answers what is not
an answer only means the rest is found in-process.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import IO, Any, cast

from memtrove.graph.amem_notes import Note, Vocabulary, heuristic_note
from memtrove.graph.entities import ExtractedEntity, heuristic_extraction
from memtrove.graph.entity_links import link_rows
from memtrove.index.workers import Helper, helper_wanted

__all__ = [
    "AHEAD_DOCUMENTS",
    "Found",
    "find",
    "findings",
    "linked",
    "send_links",
    "serve",
    "start_helper",
]

AHEAD_DOCUMENTS = 1000  # below this, starting a process costs more than it saves

Found = tuple[Note, tuple[list[ExtractedEntity], int] | None]
"""A document's heuristic note, and its entities (kept, how many rejected) when asked."""

Texts = Mapping[int, tuple[Any, ...]]  # id -> (title, text, content hash, tags JSON)


def find(title: str, text: str, tags: Any, vocabulary: Vocabulary, entities: bool) -> Found:
    """What the heuristics find in one document."""
    note = heuristic_note(title, text, tags, vocabulary)
    return note, heuristic_extraction(title, text) if entities else None


def start_helper(documents: int) -> Helper | None:
    """The helper for a run of ``documents`` documents without an LLM, when it is worth one
    (see the module doc); the caller stops it."""
    if documents < AHEAD_DOCUMENTS or not helper_wanted():
        return None
    return Helper.start(__name__)


def findings(
    batches: Sequence[Sequence[int]],
    fetch: Callable[[Sequence[int]], Texts],
    vocabulary: Vocabulary,
    guard: AbstractContextManager[Any],
    *,
    entities: bool,
    helper: Helper | None = None,
) -> Iterator[tuple[Sequence[int], Texts, dict[int, Found]]]:
    """Each batch of document ids (in order), its texts (``fetch``) and what was found in
    them, by ``helper`` one batch ahead when there is one. ``guard`` is held while this
    process finds with a vocabulary that may read the vault (a small run's)."""

    def here(texts: Texts) -> dict[int, Found]:
        with guard:
            return {
                doc_id: find(item[0], item[1], item[3], vocabulary, entities)
                for doc_id, item in texts.items()
            }

    if helper is None or len(batches) < 2:
        for batch in batches:
            texts = fetch(batch)
            yield batch, texts, here(texts)
        return
    # This process finds in the first batch while the helper starts, then writes it while
    # the helper finds in the second; and so on, one batch ahead. An answer is always read
    # before the next request is sent: neither side waits on a full pipe.
    texts = fetch(batches[0])
    upcoming = fetch(batches[1])
    helper_ok = helper.send(("vocabulary", vocabulary.snapshot(), entities))
    helper_ok = helper_ok and _send(helper, upcoming)
    yield batches[0], texts, here(texts)
    for index in range(1, len(batches)):
        texts = upcoming
        found = helper.receive(_answer_for(texts)) if helper_ok else None
        if found is None:
            helper_ok = False
            found = here(texts)
        if index + 1 < len(batches):
            upcoming = fetch(batches[index + 1])
            helper_ok = helper_ok and _send(helper, upcoming)
        yield batches[index], texts, found


def send_links(
    helper: Helper,
    documents: int,
    naming: Mapping[str, tuple[int, list[int]]],
    extracted: Sequence[tuple[int, list[str]]],
    chunk: int,
) -> bool:
    """Ask ``helper`` for the entity edges of ``extracted`` (documents and their entity
    ids, in linking order), answered ``chunk`` documents at a time (:func:`linked`)."""
    return helper.send(("link", documents, dict(naming), list(extracted), chunk))


def linked(helper: Helper) -> tuple[int, list[tuple[int, int, float, str, str]]] | None:
    """The next chunk's answer to :func:`send_links`: how many links, and the edge rows."""
    return cast(
        "tuple[int, list[tuple[int, int, float, str, str]]] | None",
        helper.receive(_links_answer),
    )


def _links_answer(answer: Any) -> bool:
    return (
        isinstance(answer, tuple)
        and len(answer) == 2
        and isinstance(answer[0], int)
        and isinstance(answer[1], list)
        and all(isinstance(row, tuple) and len(row) == 5 for row in answer[1])
    )


def _send(helper: Helper, texts: Texts) -> bool:
    request = [(doc_id, item[0], item[1], item[3]) for doc_id, item in texts.items()]
    return helper.send(("batch", request))


def _answer_for(texts: Texts) -> Callable[[Any], bool]:
    def valid(answer: Any) -> bool:
        return (
            isinstance(answer, dict)
            and answer.keys() == texts.keys()
            and all(isinstance(found, tuple) and len(found) == 2 for found in answer.values())
            and all(isinstance(found[0], Note) for found in answer.values())
        )

    return valid


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The helper's loop, until stdin closes: take the vocabulary, answer each batch with
    what was found in it, and each linking request with its edges, chunk by chunk."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    vocabulary = Vocabulary.restore(({}, 1))
    entities = False

    def answer(value: Any) -> None:
        pickle.dump(value, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()

    while True:
        try:
            message = pickle.load(source)
        except EOFError:
            return
        if message[0] == "vocabulary":
            vocabulary, entities = Vocabulary.restore(message[1]), bool(message[2])
        elif message[0] == "batch":
            answer(
                {
                    doc_id: find(title, text, tags, vocabulary, entities)
                    for doc_id, title, text, tags in message[1]
                }
            )
        elif message[0] == "link":
            _, documents, naming, extracted, chunk = message
            written: dict[tuple[int, int], float] = {}
            for start in range(0, len(extracted), chunk):
                count, rows = 0, []
                for doc_id, identifiers in extracted[start : start + chunk]:
                    links, edges = link_rows(doc_id, identifiers, documents, naming, written)
                    count += links
                    rows += edges
                answer((count, rows))
