"""A Hypothesis state machine interleaving agent appends, torn tails, external rewrites and
our appends/seals. After every step: bytes a user had are never changed by us, and the gate's
decision matches a simple model of "is the file still the one we loaded"."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import (
    AppendRefused,
    SessionChanged,
    append_entry,
    make_leaf_marker,
    seal_tail,
)

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "bad" / "two-roots.jsonl"
FAST: dict[str, Any] = {"quiet_seconds": 0.0, "refresh": False}


class AppendMachine(RuleBasedStateMachine):
    """The file, what we loaded, and what the gate must say."""

    def __init__(self) -> None:
        super().__init__()
        self.directory = Path(tempfile.mkdtemp(prefix="writer-sm-"))
        self.path = self.directory / "s.jsonl"
        shutil.copyfile(BASE, self.path)
        self.session: Any = None
        self.loaded_bytes = b""
        self.agent_counter = 0
        self.last_id = "e0000008"

    def teardown(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def _data(self) -> bytes:
        return self.path.read_bytes()

    # -- the agent and other programs -----------------------------------------------------

    @precondition(lambda self: self._data().endswith(b"\n"))
    @rule(text=st.text(max_size=40))
    def agent_appends_a_line(self, text: str) -> None:
        self.agent_counter += 1
        entry_id = f"a{self.agent_counter:07d}"
        line = json.dumps(
            {
                "type": "message",
                "id": entry_id,
                "parentId": self.last_id,
                "timestamp": "2025-12-03T19:00:00.000Z",
                "message": {"role": "user", "content": text},
            }
        )
        with self.path.open("ab") as handle:
            handle.write(line.encode() + b"\n")
        self.last_id = entry_id

    @precondition(lambda self: self._data().endswith(b"\n"))
    @rule(cut=st.integers(min_value=1, max_value=30))
    def agent_crashes_mid_line(self, cut: int) -> None:
        line = b'{"type":"message","id":"torn0001","parentId":null,"message":{"role":"user"}}'
        with self.path.open("ab") as handle:
            handle.write(line[:cut])

    @rule(position=st.integers(min_value=0, max_value=2000), byte=st.binary(min_size=1, max_size=1))
    def someone_rewrites_a_byte(self, position: int, byte: bytes) -> None:
        data = bytearray(self._data())
        position %= len(data)
        data[position : position + 1] = byte
        with self.path.open("r+b") as handle:  # same inode, same size
            handle.write(bytes(data))

    # -- us ---------------------------------------------------------------------------------

    @rule()
    def we_load(self) -> None:
        self.session = load_session(self.path)
        self.loaded_bytes = self._data()

    @precondition(lambda self: self.session is not None)
    @rule()
    def we_append(self) -> None:
        before = self._data()
        session = self.session
        same_file = before == self.loaded_bytes
        grew = not same_file and before.startswith(self.loaded_bytes) and before.endswith(b"\n")
        appendable = (
            session.header is not None
            and isinstance(session.header.get("id"), str)  # A1: a header with a string id
            and session.version == 3
            and not session.snapshot.torn_tail
            and session.leaf is not None
            and session.path_problem(session.leaf) is None
        )
        try:
            result = append_entry(session, make_leaf_marker(), parent_index=session.leaf, **FAST)
        except SessionChanged:
            assert grew and appendable
            after = self._data()
            assert after == before
            return
        except AppendRefused:
            after = self._data()
            assert after == before  # refused: nothing written
            assert not (same_file and appendable), "a clean append was refused"
            return
        after = self._data()
        assert same_file and appendable, "appended to a changed or unsafe file"
        assert after[: len(before)] == before
        assert after[len(before) :].rstrip(b"\n").endswith(b"}")
        assert json.loads(after[len(before) :].strip())["id"] == result.ids[0]
        self.session = None  # reload before the next append (refresh=False)

    @precondition(lambda self: self.session is not None)
    @rule()
    def we_seal(self) -> None:
        before = self._data()
        try:
            seal_tail(self.session, **FAST)
        except AppendRefused:
            assert self._data() == before
            return
        after = self._data()
        assert before == self.loaded_bytes and not before.endswith(b"\n")
        assert after == before + b"\n"
        self.session = None

    @invariant()
    def no_lock_file_left(self) -> None:
        assert not (self.directory / ".s.jsonl.lock").exists()


TestAppendMachine = AppendMachine.TestCase
TestAppendMachine.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None, database=None
)
