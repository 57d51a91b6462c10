"""The app's cl100k counter: a counting process that builds the encoder on its own GIL.

It counts exactly what the in-process counter counts, ends with the process that started it
(however that ends), and says why when it cannot count (the app then counts chars/4)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui_compactor.engine import token_process
from tui_compactor.engine.messages import MESSAGE_BEARING_TYPES
from tui_compactor.engine.token_process import Cl100kProcessCounter
from tui_compactor.engine.tokens import Cl100kCounter, TokenCache, TokenTableError, get_counter
from tui_compactor.session.reader import load_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSIONS = sorted(
    path
    for folder in ("sessions", "oracle/sessions", "oracle-omp/sessions")
    for path in (FIXTURES / folder).glob("*.jsonl")
)

HOSTILE_TEXTS = [
    "",
    "hello world",
    "lone \ud800 surrogate and \udfff another",
    "\ud83d\ude00 a pair split into two code points (a text cut between them)",
    "<|endoftext|> and <|fim_prefix|> count as ordinary text",
    "日本語のテキスト 🧪 emoji, combining é",
    "\x00\x1b[2J control bytes",
    "x" * 200_000,
]


@pytest.fixture(scope="module")
def process_counter() -> Iterator[Cl100kProcessCounter]:
    counter = Cl100kProcessCounter()
    yield counter
    counter.close()


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_ended(pid: int, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _running(pid):
            return True
        time.sleep(0.05)
    return False


def test_texts_count_as_the_in_process_counter_counts_them(
    process_counter: Cl100kProcessCounter,
) -> None:
    local = Cl100kCounter(preload=False)
    assert process_counter.count_texts(HOSTILE_TEXTS) == [
        local.count_text(text) for text in HOSTILE_TEXTS
    ]
    assert [process_counter.count_text(text) for text in HOSTILE_TEXTS[:3]] == [
        local.count_text(text) for text in HOSTILE_TEXTS[:3]
    ]
    assert process_counter.count_texts([]) == []


@pytest.mark.parametrize("path", SESSIONS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_entry_of_the_fixtures_counts_the_same_through_the_process(
    path: Path, process_counter: Cl100kProcessCounter
) -> None:
    """Per message (one request each) and per session (``count_entries``: one request)."""
    session = load_session(path)
    local = TokenCache(session, Cl100kCounter(preload=False))
    batched = TokenCache(session, process_counter)
    indices = range(len(session.entries))
    batched.count_entries(indices)
    one_by_one = TokenCache(session, process_counter)
    expected = [local.entry_tokens(index) for index in indices]
    assert [batched.entry_tokens(index) for index in indices] == expected
    assert [one_by_one.entry_tokens(index) for index in indices] == expected
    messages = [e for e in session.entries if e.type in MESSAGE_BEARING_TYPES]
    assert len(messages) == sum(tokens is not None for tokens in expected)


def test_a_batch_longer_than_one_request_is_sent_in_parts_and_counts_the_same(
    process_counter: Cl100kProcessCounter,
) -> None:
    texts = [f"part {n}: " + "word " * 20_000 for n in range(30)]  # ~3 MB
    assert sum(map(len, texts)) > 10 * token_process.REQUEST_BYTES
    local = Cl100kCounter(preload=False)
    assert process_counter.count_texts(texts) == [local.count_text(text) for text in texts]


def test_python_files_in_the_working_directory_are_not_imported_by_the_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A project holding a ``hashlib.py`` (or ``tiktoken.py``) is where a user runs the app: the
    counting process must not import it, nor run it."""
    ran = tmp_path / "ran"
    for name in ("hashlib", "tiktoken", "base64"):
        (tmp_path / f"{name}.py").write_text(
            f"open({str(ran)!r}, 'a').write({name!r})\nraise SystemExit(3)\n", encoding="utf-8"
        )
    monkeypatch.chdir(tmp_path)
    counter = Cl100kProcessCounter()
    try:
        assert counter.count_text("hello world") == 2
    finally:
        counter.close()
    assert not ran.exists()


def test_a_process_that_never_says_ready_fails_the_counts_after_a_wait(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Not a hang: the counts fail with why (the app then counts chars/4), the process is ended."""
    silent = tmp_path / "silent-python"
    silent.write_text("#!/bin/sh\nexec sleep 60\n", encoding="utf-8")
    silent.chmod(0o755)
    monkeypatch.setattr(token_process.sys, "executable", str(silent))
    monkeypatch.setattr(token_process, "READY_WAIT_S", 0.5)
    counter = Cl100kProcessCounter()
    pid = counter.pid
    assert pid is not None
    with pytest.raises(TokenTableError, match="not ready after"):
        counter.count_text("hello")
    assert _wait_ended(pid, 5)


def test_a_closed_counter_ends_its_process_and_says_so() -> None:
    counter = Cl100kProcessCounter()
    assert counter.count_text("ready?") == 2
    pid = counter.pid
    assert pid is not None and _running(pid)
    counter.close()
    assert not _running(pid)
    with pytest.raises(TokenTableError, match="the counting process was closed"):
        counter.count_text("after")


def test_a_process_that_cannot_start_fails_every_count_with_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(token_process.sys, "executable", str(tmp_path / "no-python"))
    counter = Cl100kProcessCounter()
    assert not counter.loaded
    with pytest.raises(TokenTableError) as raised:
        counter.count_message({"role": "user", "content": "hello"})
    assert "the counting process could not start" in raised.value.reason
    assert "no-python" in raised.value.reason
    assert counter.count_messages([]) == []  # nothing to count asks nothing


def test_a_table_the_process_cannot_load_fails_every_count_with_the_loaders_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The process inherits the environment: a ``tiktoken_ext`` plugin whose table is missing
    (found first on ``PYTHONPATH``) is reported with the loader's own error."""
    plugin = tmp_path / "site" / "tiktoken_ext"
    plugin.mkdir(parents=True)
    table = tmp_path / "cl100k_base.tiktoken"
    (plugin / "offline_encodings.py").write_text(
        textwrap.dedent(
            f"""
            from tiktoken.load import load_tiktoken_bpe

            def cl100k_base_offline():
                ranks = load_tiktoken_bpe({str(table)!r}, expected_hash=None)
                return {{"name": "x", "pat_str": "", "mergeable_ranks": ranks,
                         "special_tokens": {{}}}}

            ENCODING_CONSTRUCTORS = {{"cl100k_base_offline": cl100k_base_offline}}
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    counter = Cl100kProcessCounter()
    with pytest.raises(TokenTableError) as raised:
        counter.count_text("hello")
    reason = raised.value.reason
    assert "FileNotFoundError" in reason and "cl100k_base.tiktoken" in reason
    pid = counter.pid
    assert pid is None or _wait_ended(pid)


def test_the_counting_process_ends_when_its_app_is_killed(tmp_path: Path) -> None:
    """kill -9 of the process that started it: its pipe closes, it exits (no orphan)."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(token_process.__file__).parents[2])!r})
        from tui_compactor.engine.token_process import Cl100kProcessCounter
        counter = Cl100kProcessCounter()
        print(counter.count_text("hello world"), counter.pid, flush=True)
        sys.stdin.read()
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as app:
        assert app.stdout is not None
        tokens, pid = map(int, app.stdout.readline().split())
        assert tokens == 2 and _running(pid)
        app.kill()
        app.wait()
        assert _wait_ended(pid), "the counting process outlived its app"
        assert app.stdin is not None
        app.stdin.close()


ORPHAN_BOUND_S = 0.25
"""How long a counting process may outlive its app killed while the table loads: well below
the load (0.3-1 s: interpreter, tiktoken, the 100k-rank table)."""


def test_the_counting_process_ends_at_once_when_its_app_is_killed_while_it_loads() -> None:
    """kill -9 of the app before the process is ready: it exits as soon as its pipe closes,
    not after loading the table for nobody (an orphan that skewed the benchmarks)."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(token_process.__file__).parents[2])!r})
        from tui_compactor.engine.token_process import Cl100kProcessCounter
        counter = Cl100kProcessCounter()
        print(counter.pid, flush=True)
        sys.stdin.read()
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as app:
        assert app.stdout is not None and app.stdin is not None
        pid = int(app.stdout.readline())
        app.kill()
        app.wait()
        killed = time.monotonic()
        assert _wait_ended(pid, seconds=20), "the counting process outlived its app"
        outlived = time.monotonic() - killed
        app.stdin.close()
    assert outlived < ORPHAN_BOUND_S, f"the counting process loaded on for {outlived:.2f} s"


def test_the_commands_count_in_their_own_process_the_app_in_a_counting_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tui_compactor.engine import tokens

    monkeypatch.delitem(tokens._COUNTERS, "cl100k", raising=False)
    counter = get_counter("cl100k", preload=False)
    assert isinstance(counter, Cl100kCounter)
    monkeypatch.delitem(tokens._COUNTERS, "cl100k")
    counter = get_counter("cl100k", preload=False, process=True)
    assert isinstance(counter, Cl100kProcessCounter) and counter.pid is None  # not started
    assert get_counter("cl100k") is counter
    try:
        assert counter.count_text("hello world") == 2
        assert counter.pid is not None and os.path.exists(f"/proc/{counter.pid}")
    finally:
        counter.close()


def _cpu_ticks(pid: int) -> int:
    """User + system CPU ticks ``pid`` has used."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_a_counting_process_killed_mid_request_is_started_again_and_the_request_answered() -> None:
    """SIGKILL (the OOM killer, a user's kill) while a long request is being counted: the
    counter starts the process again, sends the request again, and its counts are exact; the
    app is told once (``on_restart``) and the killed process is gone."""
    counter = Cl100kProcessCounter()
    told: list[str] = []
    counter.on_restart = told.append
    local = Cl100kCounter(preload=False)
    texts = [f"{index} " + "lorem ipsum dolor sit amet, " * 4000 for index in range(60)]
    try:
        assert counter.count_text("hello world") == 2
        first = counter.pid
        assert first is not None
        idle = _cpu_ticks(first)
        answered: list[list[int]] = []
        worker = threading.Thread(target=lambda: answered.append(counter.count_texts(texts)))
        worker.start()
        deadline = time.monotonic() + 20
        while _cpu_ticks(first) < idle + 5 and time.monotonic() < deadline:  # counting: 50 ms in
            time.sleep(0.005)
        assert _cpu_ticks(first) >= idle + 5, "the request never reached the process"
        assert not answered, "the request was answered before the kill: make it longer"
        os.kill(first, signal.SIGKILL)
        worker.join(60)
        assert not worker.is_alive()
        assert answered == [[local.count_text(text) for text in texts]]
        assert told == ["the counting process was killed (SIGKILL)"]
        assert counter.restarts == 1 and counter.loaded and counter.error is None
        second = counter.pid
        assert second is not None and second != first and _running(second)
        assert _wait_ended(first)
        # Killed between two requests (idle): the next count starts it again too.
        os.kill(second, signal.SIGKILL)
        assert _wait_ended(second)
        assert counter.count_texts(HOSTILE_TEXTS) == [
            local.count_text(text) for text in HOSTILE_TEXTS
        ]
        assert counter.restarts == 2 and len(told) == 2
    finally:
        counter.close()
    last = counter.pid
    assert last is None


def test_a_counting_process_that_dies_at_once_is_started_again_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Not a loop: after ``RESTART_WAITS_S`` restarts in a row every count fails with why (the
    app then counts chars/4), at once, and no process is left."""
    started = tmp_path / "started"
    dying = tmp_path / "dying-python"
    dying.write_text(f"#!/bin/sh\necho x >> {started}\nexit 7\n", encoding="utf-8")
    dying.chmod(0o755)
    monkeypatch.setattr(token_process.sys, "executable", str(dying))
    monkeypatch.setattr(token_process, "RESTART_WAITS_S", (0.0, 0.05, 0.1))
    counter = Cl100kProcessCounter()
    told: list[str] = []
    counter.on_restart = told.append
    with pytest.raises(TokenTableError) as raised:
        counter.count_text("hello")
    assert raised.value.reason == (
        "the counting process ended (exit code 7); started again 3 times in a row, it ended "
        "each time"
    )
    assert started.read_text().count("x") == 4 and counter.restarts == 3
    with pytest.raises(TokenTableError):
        counter.count_messages([{"role": "user", "content": "again"}])
    assert started.read_text().count("x") == 4, "started again after the restarts were spent"
    assert told == [] and counter.pid is None
    counter.close()


def test_a_closed_counter_is_not_started_again() -> None:
    counter = Cl100kProcessCounter()
    assert counter.count_text("hello world") == 2
    pid = counter.pid
    assert pid is not None
    counter.close()
    assert _wait_ended(pid)
    with pytest.raises(TokenTableError, match="the counting process was closed"):
        counter.count_text("after")
    assert counter.restarts == 0 and counter.pid is None


def test_the_counting_process_runs_at_a_lower_priority_than_the_app() -> None:
    """Its minute of counting after the open yields the CPU to the app's event loop when both
    want it (a busy machine, one core): a nicer process, also after a restart."""
    process_counter = Cl100kProcessCounter()
    try:
        _check_lower_priority(process_counter)
    finally:
        process_counter.close()


def _check_lower_priority(process_counter: Cl100kProcessCounter) -> None:
    assert process_counter.count_text("ready?") == 2
    pid = process_counter.pid
    assert pid is not None
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(ours + token_process.COUNTING_NICE, 19)
    assert token_process.COUNTING_NICE >= 5
    os.kill(pid, signal.SIGKILL)
    assert _wait_ended(pid)
    assert process_counter.count_text("hello world") == 2  # started again
    restarted = process_counter.pid
    assert restarted is not None and restarted != pid
    assert os.getpriority(os.PRIO_PROCESS, restarted) == min(ours + token_process.COUNTING_NICE, 19)
