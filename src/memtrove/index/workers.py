"""A helper process that reads and parses files while the indexer writes (big updates).

Reading and parsing (Python) and writing (SQLite: the FTS5 tokenizer, the commit) each take
about half of a full index. In one process they cannot overlap: a thread would wait for the
GIL at each of the writes' many short SQLite calls. So with at least ``PARALLEL_FILES`` files
to read and a second processor, one helper process reads and parses the batch after the one
being written, and the indexer applies what it returns, in order: the same documents, issues
and notices as reading in-process.

The helper is ``python -c`` with this package on its path (never the caller's main module,
unlike multiprocessing's spawn), speaks pickle over its stdin and stdout, and prints nothing.
Anything going wrong with it (it cannot start, dies, answers what is not an answer) only
means the rest is read in-process. ``MEMTROVE_INDEX_WORKERS=0`` keeps all of it in-process.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memtrove.index.preparing import Outcome, prepare_file, tokenize_outcomes
from memtrove.index.scanner import FileEntry
from memtrove.results import Collection
from memtrove.security.redaction import DEFAULT, Redactor

if TYPE_CHECKING:
    import subprocess

__all__ = ["PARALLEL_FILES", "Helper", "helper_wanted", "prepared_batches", "serve"]

PARALLEL_FILES = 1000  # below this, starting a process costs more than it saves
FIRST_FILES = 400  # at most this many read here while the helper starts (and reads the next)
_STOP_SECONDS = 5.0
_OFF = ("0", "off", "false", "no")

Request = tuple[Collection, Sequence[FileEntry], tuple[tuple[str, str], ...] | None, bool]


def prepared_batches(
    collection: Collection,
    files: list[FileEntry],
    batch_size: int,
    redactor: Redactor | None,
    tokenize: bool = False,
) -> Iterator[tuple[list[FileEntry], list[Outcome]]]:
    """Each batch of ``files`` (in order) with what reading it gave; ``redactor`` None
    stores the files verbatim. The helper reads one batch ahead when it is worth it, and
    with ``tokenize`` tokenizes what it read for the text index too (an index that
    tokenizes in Python: that work then leaves the writing process)."""
    redact = redactor.redact if redactor is not None else None

    def here(batch: list[FileEntry]) -> list[Outcome]:
        return [prepare_file(collection, file, redact) for file in batch]

    helper = Helper.start(__name__) if len(files) >= PARALLEL_FILES and helper_wanted() else None
    if helper is None:
        for start in range(0, len(files), batch_size):
            batch = files[start : start + batch_size]
            yield batch, here(batch)
        return
    # Nothing is written while this process reads the first batch: a short one, so that
    # writing starts soon (the helper reads the next meanwhile).
    first = min(batch_size, FIRST_FILES)
    batches = [files[:first]]
    batches += [files[start : start + batch_size] for start in range(first, len(files), batch_size)]
    extra = redactor.extra if redactor is not None else None
    try:
        # This process reads the first batch while the helper starts, then writes it while
        # the helper reads the second; and so on, one batch ahead.
        helper_ok = len(batches) > 1 and helper.send((collection, batches[1], extra, tokenize))
        yield batches[0], here(batches[0])
        for index in range(1, len(batches)):
            outcomes = helper.receive(_outcomes(len(batches[index]))) if helper_ok else None
            if outcomes is None:
                helper_ok = False
                outcomes = here(batches[index])
            elif index + 1 < len(batches):
                helper_ok = helper.send((collection, batches[index + 1], extra, tokenize))
            yield batches[index], outcomes
    finally:
        helper.stop()


def _outcomes(expected: int) -> Callable[[Any], bool]:
    def valid(answer: Any) -> bool:
        return (
            isinstance(answer, list)
            and len(answer) == expected
            and all(isinstance(outcome, Outcome) for outcome in answer)
        )

    return valid


def helper_wanted() -> bool:
    """Whether a helper process may be started: a second processor, and
    ``MEMTROVE_INDEX_WORKERS`` not set to ``0`` (or ``off``)."""
    if os.environ.get("MEMTROVE_INDEX_WORKERS", "").strip().lower() in _OFF:
        return False
    affinity = getattr(os, "sched_getaffinity", None)
    processors = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return processors > 1


class Helper:
    """A helper process running ``serve()`` of a module of this package: requests and
    answers are pickles over its stdin and stdout. Any failure is the caller's cue to do
    the work itself."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    @classmethod
    def start(cls, module: str) -> Helper | None:
        import subprocess  # with the helper only: an update of a few files never needs it

        package_root = str(Path(__file__).resolve().parents[2])
        code = (
            f"import sys; sys.path.insert(0, {package_root!r}); from {module} import serve; serve()"
        )
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError):
            return None
        return cls(process)

    def send(self, request: Any) -> bool:
        import pickle

        stream = self._process.stdin
        try:
            assert stream is not None
            pickle.dump(request, stream, protocol=pickle.HIGHEST_PROTOCOL)
            stream.flush()
        except (OSError, ValueError, pickle.PickleError, AssertionError):
            return False
        return True

    def receive(self, valid: Callable[[Any], bool]) -> Any:
        """The helper's answer to the request it was sent, or None if it failed or the
        answer is not ``valid``."""
        import pickle

        stream = self._process.stdout
        try:
            assert stream is not None
            answer: Any = pickle.load(stream)
        except Exception:  # a dead or confused helper: the caller does the work itself
            return None
        return answer if valid(answer) else None

    def stop(self) -> None:
        import subprocess

        for stream in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        try:
            self._process.wait(timeout=_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """The helper's loop: read a request, answer the batch's outcomes, until stdin closes."""
    import pickle

    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout.buffer
    engines: dict[tuple[tuple[str, str], ...], Redactor] = {(): DEFAULT}
    while True:
        try:
            collection, files, extra, tokenize = pickle.load(source)
        except EOFError:
            return
        redact = None
        if extra is not None:
            engine = engines.get(extra)
            if engine is None:
                engine = engines[extra] = Redactor(extra)
            redact = engine.redact
        outcomes = [prepare_file(collection, file, redact) for file in files]
        if tokenize:  # the batch at once: its tokens cross the pipe once
            tokenize_outcomes(collection, outcomes)
        pickle.dump(outcomes, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()
