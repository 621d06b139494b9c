"""Reading a hook's stdin within its time and size bounds, on real pipes."""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrove.hooks.events import MAX_STDIN_BYTES, HookInputError, read_payload
from memtrove.hooks.runner import main
from tests.hooks.conftest import context_of, payload, run_hook


@pytest.fixture
def pipe() -> Iterator[tuple[io.BufferedReader, int]]:
    """(the reading end as a stream, the writing end's descriptor), both closed after."""
    read_end, write_end = os.pipe()
    stream = os.fdopen(read_end, "rb")
    yield stream, write_end
    stream.close()
    with contextlib.suppress(OSError):  # unless the test closed it
        os.close(write_end)


def test_the_whole_input_is_read_to_its_end(pipe: tuple[io.BufferedReader, int]) -> None:
    stream, writer = pipe
    os.write(writer, b'{"prompt": "a"} \n')
    os.close(writer)
    assert read_payload(stream, timeout=5) == b'{"prompt": "a"} \n'


def test_a_complete_object_is_read_without_the_end_of_input(
    pipe: tuple[io.BufferedReader, int],
) -> None:
    stream, writer = pipe
    os.write(writer, b'\xef\xbb\xbf{"prompt": "braces } and \\" quotes {"}\n')
    started = time.monotonic()
    assert read_payload(stream, timeout=30).endswith(b'{"}\n')
    assert time.monotonic() - started < 5


def test_an_object_arriving_in_parts_is_read_whole(pipe: tuple[io.BufferedReader, int]) -> None:
    """A pause on a brace inside the text is not taken for the end of the object."""
    stream, writer = pipe

    def write_later() -> None:
        os.write(writer, b'{"prompt": "a {nested}')
        time.sleep(0.3)
        os.write(writer, b' text", "cwd": "/x"}')

    thread = threading.Thread(target=write_later)
    thread.start()
    assert read_payload(stream, timeout=30) == b'{"prompt": "a {nested} text", "cwd": "/x"}'
    thread.join()


@pytest.mark.parametrize("data", [b'{"prompt": "unfinished', b"", b"[1, 2]", b"not json}"])
def test_input_incomplete_at_the_deadline_is_refused(
    pipe: tuple[io.BufferedReader, int], data: bytes
) -> None:
    stream, writer = pipe
    os.write(writer, data)
    started = time.monotonic()
    with pytest.raises(HookInputError, match=r"still open after 0\.5 s"):
        read_payload(stream, timeout=0.5)
    assert 0.4 < time.monotonic() - started < 5


def test_input_over_the_cap_is_refused_without_reading_on(
    pipe: tuple[io.BufferedReader, int],
) -> None:
    stream, writer = pipe
    stop = threading.Event()

    def flood() -> None:
        chunk = b"x" * 65536
        try:
            while not stop.is_set():
                os.write(writer, chunk)
        except OSError:
            pass

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    with pytest.raises(HookInputError, match="larger than 1 MB"):
        read_payload(stream, timeout=30, limit=1024 * 1024)
    stop.set()
    stream.close()  # the writer gets EPIPE and ends
    thread.join(timeout=10)


def test_in_memory_streams_are_capped_too() -> None:
    assert read_payload(io.BytesIO(b"{}"), timeout=0) == b"{}"
    with pytest.raises(HookInputError, match="larger than 8 MB"):
        read_payload(io.BytesIO(b" " * (MAX_STDIN_BYTES + 1)), timeout=0)


def test_a_terminal_gives_no_payload() -> None:
    controller, terminal = os.openpty()
    try:
        with os.fdopen(os.dup(terminal), "rb") as stream:
            assert read_payload(stream, timeout=5) == b""
    finally:
        os.close(controller)
        os.close(terminal)


def test_the_runner_answers_an_oversized_payload_without_it(hook_env: dict[str, str]) -> None:
    huge = payload("user_prompt_submit.json")[:-1] + b" " * MAX_STDIN_BYTES + b"}"
    answer = run_hook("context-surfacing", huge, hook_env)
    assert context_of(answer) == ""
    log = Path(hook_env["XDG_CACHE_HOME"]) / "memtrove" / "hooks.log"
    assert "the payload is larger than 8 MB; answered without it" in log.read_text()


def test_the_runner_counts_its_time_from_the_start_it_is_given(
    hook_env: dict[str, str], pipe: tuple[io.BufferedReader, int]
) -> None:
    """Stdin read on the warm path took most of the time: the rest is what is left."""
    stream, writer = pipe
    os.write(writer, b'{"prompt": "never finished')
    out = io.BytesIO()
    env = {**hook_env, "MEMTROVE_HOOK_TIMEOUT": "2"}
    started = time.monotonic()
    main(["context-surfacing"], env=env, stdin=stream, stdout=out, watchdog=False,
         started=started - 1.5)  # fmt: skip
    assert time.monotonic() - started < 1.5
    assert context_of(json.loads(out.getvalue())) == ""
