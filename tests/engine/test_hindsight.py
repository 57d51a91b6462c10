"""The hindsight audit (``audit``) and the compaction timeline (``timeline``) on copies of real
session files, with facts planted before a compaction and used after it."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import cli, cli_json

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
SESSIONS = TESTS / "fixtures" / "sessions"
ORACLE_SESSIONS = TESTS / "fixtures" / "oracle" / "sessions"

FACT = "frobnicate_widget_cache"
PATH = "src/planted/widget_cache.py"


def records(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def text(role: str, words: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": words}]}


def call(call_id: str, name: str, path: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": {"path": path}}],
    }


def result(call_id: str, name: str, output: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": output}],
        "isError": False,
    }


def plant(target: Path, summary: str) -> dict[str, str]:
    """Append to a copy of the real session: the fact and a read, unrelated turns, a compaction
    with ``summary`` keeping only the last of them, then a turn using the fact and the file."""
    last = records(target)[-1]["id"]
    ids: dict[str, str] = {}
    lines = []

    def add(name: str, record: dict[str, Any]) -> None:
        nonlocal last
        ident = f"h{len(lines):04d}"
        record.update({"id": ident, "parentId": last, "timestamp": "2025-12-09T03:00:00.000Z"})
        lines.append(json.dumps(record))
        ids[name] = ident
        last = ident

    def message(name: str, body: dict[str, Any]) -> None:
        add(name, {"type": "message", "message": body})

    message("ask", text("user", f"rename {FACT} before the release"))
    message("read", call("hcall1", "read", PATH))
    message("read_result", result("hcall1", "read", "CACHE = {}\n"))
    message("answer", text("assistant", "Found the cache module."))
    for number in range(4):
        message(f"filler_user{number}", text("user", f"unrelated question {number}"))
        message(f"filler_answer{number}", text("assistant", f"unrelated answer {number}"))
    add(
        "compaction",
        {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": ids["filler_user3"],
            "tokensBefore": 123456,
        },
    )
    message("use", text("user", f"so did you rename {FACT}? check it again"))
    message("reread", call("hcall2", "read", PATH))
    message("reread_result", result("hcall2", "read", "CACHE = {}\n"))
    with target.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    return ids


@pytest.fixture
def session_copy(tmp_path: Path) -> Path:
    target = tmp_path / "hindsight.jsonl"
    shutil.copyfile(SESSIONS / "refactor-session-v3.jsonl", target)
    return target


def _planted_audit(path: Path, ids: dict[str, str]) -> dict[str, Any]:
    data = cli_json("audit", str(path))
    rows = [row for row in data["compactions"] if row["entryId"] == ids["compaction"]]
    assert len(rows) == 1
    return rows[0]


def test_fact_missing_from_the_summary_is_reported(session_copy: Path) -> None:
    ids = plant(session_copy, "## Goal\nAnswer unrelated questions.\n")
    row = _planted_audit(session_copy, ids)
    lost = {(fact["kind"], fact["text"]): fact for fact in row["lost"]}
    assert ("identifier", FACT) in lost
    fact = lost[("identifier", FACT)]
    assert fact["lostAtId"] == ids["ask"] and fact["neededAtId"] == ids["use"]
    assert ("path", PATH) in lost
    assert lost[("path", PATH)]["lostAtId"] == ids["read"]
    assert lost[("path", PATH)]["neededAtId"] == ids["reread"]
    rereads = [item for item in row["rereads"] if item["path"] == PATH]
    assert rereads and rereads[0]["readAtId"] == ids["read"]
    assert rereads[0]["rereadAtId"] == ids["reread"]
    assert row["used"] >= 2 and row["lostCount"] == len(row["lost"])
    assert row["score"] == round((row["used"] - row["lostCount"]) / row["used"], 3) < 1


def test_fact_the_summary_carries_is_not_reported(session_copy: Path) -> None:
    ids = plant(session_copy, f"## Goal\nRename `{FACT}` in {PATH} before the release.\n")
    row = _planted_audit(session_copy, ids)
    assert not [fact for fact in row["lost"] if fact["text"] in (FACT, PATH)]
    assert row["score"] == 1.0
    # The re-read is still a re-read: the agent read the file again.
    assert [item for item in row["rereads"] if item["path"] == PATH]


def test_audit_text_and_exit_status(session_copy: Path) -> None:
    plant(session_copy, "nothing useful")
    done = cli("audit", str(session_copy))
    assert done.returncode == 0
    out = done.stdout.decode()
    assert FACT in out and "re-read" in out and "worst score" in out


@pytest.mark.parametrize(
    "session",
    [SESSIONS / "refactor-session-v3.jsonl", *sorted(ORACLE_SESSIONS.glob("tree-*.jsonl"))],
    ids=lambda p: p.name,
)
def test_timeline_lists_every_summary_in_file_order(session: Path) -> None:
    data = cli_json("timeline", str(session))
    expected = [
        (n, record)
        for n, record in enumerate(records(session))
        if record.get("type") in ("compaction", "branch_summary")
    ]
    assert [row["entryIndex"] for row in data["rows"]] == [n for n, _ in expected]
    audit = {row["entryId"]: row for row in cli_json("audit", str(session))["compactions"]}
    for row, (_, record) in zip(data["rows"], expected, strict=True):
        assert row["entryId"] == record["id"] and row["type"] == record["type"]
        assert row["summaryChars"] == len(record.get("summary") or "")
        if record["type"] == "compaction":
            assert row["tokensBefore"] == record["tokensBefore"]
            assert row["score"] == audit[record["id"]]["score"]
            assert row["rereads"] == len(audit[record["id"]]["rereads"])
        else:
            assert row["score"] is None


def test_timeline_tokens_after_is_the_context_at_the_compaction(session_copy: Path) -> None:
    """After = the local count of what the model sees right after it (``context --json``)."""
    ids = plant(session_copy, "short summary")
    rows = {row["entryId"]: row for row in cli_json("timeline", str(session_copy))["rows"]}
    context = cli_json("context", str(session_copy), "--at", ids["compaction"])
    assert rows[ids["compaction"]]["tokensAfter"] == context["contextTokens"]["localEstimate"]


def test_a_command_the_user_ran_is_a_use(session_copy: Path) -> None:
    """A shell command the user ran (``!cmd``) before and after a compaction that dropped it."""
    last = records(session_copy)[-1]["id"]
    command = "make check-widget-cache"
    bash = {"role": "bashExecution", "command": command, "output": "ok", "exitCode": 0}
    lines = []
    bodies = [("b1", {"type": "message", "message": bash}),
              ("b2", {"type": "message", "message": text("user", "thanks")}),
              ("b3", {"type": "message", "message": text("assistant", "ok")}),
              ("c", {"type": "compaction", "summary": "nothing", "firstKeptEntryId": "b3",
                     "tokensBefore": 1}),
              ("b4", {"type": "message", "message": dict(bash)})]  # fmt: skip
    for ident, record in bodies:
        record.update({"id": ident, "parentId": last, "timestamp": "2025-12-09T04:00:00.000Z"})
        lines.append(json.dumps(record))
        last = ident
    with session_copy.open("a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    rows = {row["entryId"]: row for row in cli_json("audit", str(session_copy))["compactions"]}
    lost = [(fact["kind"], fact["text"], fact["lostAtId"]) for fact in rows["c"]["lost"]]
    assert ("command", command, "b1") in lost


@pytest.mark.parametrize("version", [3, 2])
def test_facts_noted_while_loading_give_the_same_audit(tmp_path: Path, version: int) -> None:
    """``audit`` notes each entry's facts while the file loads (one decode per record); that
    audit equals the one that reads each record when asked, on a generated branchy session
    with many compactions, in the fast (v3) and the migrating (v2) load path, and through
    the timeline."""
    from tui_compactor.engine.hindsight import (
        EntryFacts,
        audit_compactions,
        compaction_timeline,
    )
    from tui_compactor.engine.tokens import get_counter
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate  # type: ignore[import-not-found]

    path = generate(3000, tmp_path / "gen-3000.jsonl")
    if version != 3:  # the same entries under an older header: loaded through migration
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        header["version"] = version
        path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    facts = EntryFacts()
    noted = load_session(path, on_record=facts.take)
    assert facts._facts, "the load hook saw no entry"
    lazily = load_session(path)
    from_load = [audit.to_json(noted) for audit in audit_compactions(noted, "pi", facts)]
    read_later = [audit.to_json(lazily) for audit in audit_compactions(lazily, "pi")]
    assert len(read_later) >= 4
    assert any(row["lost"] for row in read_later) and any(row["rereads"] for row in read_later)
    assert from_load == read_later
    assert cli_json("audit", str(path))["compactions"] == read_later
    counter = get_counter("bytes")
    timeline = [row.to_json(noted) for row in compaction_timeline(noted, counter, facts=facts)]
    assert timeline == [row.to_json(lazily) for row in compaction_timeline(lazily, counter)]


def _plain_facts(entry: Any) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """An entry's facts worked out the plain way: its message's uses, stripped, each once in
    order, and the paths of its read calls."""
    from tui_compactor.engine.anchors import call_path, message_uses, tool_calls
    from tui_compactor.engine.hindsight import HINDSIGHT_KINDS
    from tui_compactor.engine.messages import message_from_entry

    uses_roles = ("user", "assistant", "custom", "bashExecution")
    if entry.type not in ("message", "custom_message") or (
        entry.type == "message" and entry.role not in uses_roles
    ):
        return (), ()
    message = message_from_entry(entry.data_once())
    uses = dict.fromkeys(
        (kind, text.strip())
        for kind, texts in message_uses(message)
        for text in texts
        if kind in HINDSIGHT_KINDS
    )
    reads: tuple[str, ...] = ()
    if entry.role == "assistant" and isinstance(message, dict):
        reads = tuple(
            path
            for _, name, arguments in tool_calls(message)
            if name == "read" and (path := call_path(arguments))
        )
    return tuple(uses), reads


def test_entry_facts_are_the_plain_reading_of_each_message(tmp_path: Path) -> None:
    """``EntryFacts`` (noted while loading or read when asked; keys shared between entries)
    gives every entry of the fixture sessions and of a generated one exactly the facts a
    plain reading of its message gives."""
    from tui_compactor.engine.hindsight import EntryFacts
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate  # type: ignore[import-not-found]

    paths = [*SESSIONS.glob("*.jsonl"), *ORACLE_SESSIONS.glob("*.jsonl")]
    paths.append(generate(3000, tmp_path / "gen-3000.jsonl"))
    checked = 0
    for path in paths:
        noted = EntryFacts()
        session = load_session(path, on_record=noted.take)
        asked = EntryFacts()
        for entry in session.entries:
            expected = _plain_facts(entry)
            assert noted.of(entry) == expected == asked.of(entry), (path.name, entry.index)
            checked += bool(expected[0])
    assert checked > 1000


def test_numbers_a_user_gave_are_anchors_but_not_uses() -> None:
    """One rule for numbers: the full reading of a user's words lists them (the summary audit
    checks them), the reading of uses (hindsight) leaves them out."""
    from tui_compactor.engine.anchors import message_anchors, message_uses

    message = text("user", "retry `load_all` 45 times within 200ms")
    full = message_anchors(message)
    assert ("number", "45") in full and ("number", "200ms") in full
    uses = [(kind, found) for kind, texts in message_uses(message) for found in texts]
    assert ("identifier", "load_all") in uses
    assert [anchor for anchor in uses if anchor[0] == "number"] == []
    assert uses == [anchor for anchor in full if anchor[0] != "number"]


def test_a_messages_anchors_are_its_uses_then_what_tools_returned() -> None:
    """One rule for what a message used: the full reading of every message of the fixture
    sessions starts with exactly its uses (tool-call ids in place), and adds only numbers,
    tool outputs' names and errors, and the ids tool results answer."""
    from tui_compactor.engine.anchors import message_anchors, message_uses
    from tui_compactor.engine.messages import message_from_entry
    from tui_compactor.session.reader import load_session

    checked = 0
    for path in [*SESSIONS.glob("*.jsonl"), *ORACLE_SESSIONS.glob("*.jsonl")]:
        for entry in load_session(path).entries:
            message = message_from_entry(entry.data)
            if not isinstance(message, dict):
                continue
            full = message_anchors(message)
            uses = [(kind, found) for kind, texts in message_uses(message, call_ids=True)
                    for found in texts]  # fmt: skip
            assert full[: len(uses)] == uses, (path.name, entry.index)
            rest = {kind for kind, _ in full[len(uses) :]}
            assert rest <= {"number", "identifier", "error", "tool_call"}, (path.name, rest)
            checked += any(kind == "tool_call" for kind, _ in uses)
    assert checked > 20


def test_facts_noted_by_a_copy_while_loading_are_the_same(tmp_path: Path) -> None:
    """``audit`` has a forked copy of its process note the messages' facts while it loads a
    version-3 file (``FactsAhead``): every entry gets exactly the facts noted while loading,
    lines the copy could not note (here: one that is not UTF-8, which the loader repairs)
    are read by the process itself, and other versions are not handed to a copy at all."""
    from tui_compactor.engine.hindsight import EntryFacts, FactsAhead
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate  # type: ignore[import-not-found]

    path = generate(3000, tmp_path / "gen-3000.jsonl")
    lines = path.read_bytes().split(b"\n")
    users = [i for i, line in enumerate(lines) if b'"role":"user"' in line and i > 100]
    lines[users[0]] += b"\r"  # a CRLF line: the loader's slow path, the copy's parse
    lines[users[1]] = lines[users[1]].replace(b'"text":"', b'"text":"\xff', 1)  # not UTF-8
    path.write_bytes(b"\n".join(lines))
    noted = EntryFacts()
    expected_session = load_session(path, on_record=noted.take)
    ahead = FactsAhead.start(path)
    assert ahead is not None
    session = load_session(path, on_record=ahead.note)
    by_copy = EntryFacts()
    read_here = _count_reads(by_copy)
    ahead.finish(by_copy, session)
    del by_copy.of
    assert len(session.entries) == len(expected_session.entries)
    checked = 0
    for entry in session.entries:
        expected = noted.known(entry.index)
        assert by_copy.known(entry.index) == expected, entry.index
        checked += expected is not None
    assert checked > 1000
    assert [entry.line for entry in read_here] == [users[1] + 1]  # the one the copy could not

    old = tmp_path / "v2.jsonl"
    header = json.loads(lines[0])
    header["version"] = 2
    old.write_text(json.dumps(header) + "\n", encoding="utf-8")
    assert FactsAhead.start(old) is None
    assert FactsAhead.start(tmp_path) is None  # not a file


def test_a_failed_copy_leaves_the_audit_to_the_process(tmp_path: Path) -> None:
    """When the copy's results never arrive (it was stopped), every entry's facts are read by
    the process itself: the audit is the same."""
    from tui_compactor.engine.hindsight import EntryFacts, FactsAhead, audit_compactions
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate  # type: ignore[import-not-found]

    path = generate(3000, tmp_path / "gen-3000.jsonl")
    session = load_session(path)
    ahead = FactsAhead.start(path)
    assert ahead is not None
    import os
    import signal

    os.kill(ahead._pid, signal.SIGKILL)
    facts = EntryFacts()
    ahead.finish(facts, session)
    plain = [audit.to_json(session) for audit in audit_compactions(load_session(path), "pi")]
    assert [audit.to_json(session) for audit in audit_compactions(session, "pi", facts)] == plain
    assert plain and any(row["lost"] for row in plain)


def _generated(tmp_path: Path, entries: int = 3000) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate  # type: ignore[import-not-found]

    return generate(entries, tmp_path / f"gen-{entries}.jsonl")


def _audit_rows(session: Any, facts: Any) -> list[dict[str, Any]]:
    from tui_compactor.engine.hindsight import audit_compactions

    return [audit.to_json(session) for audit in audit_compactions(session, "pi", facts)]


def _count_reads(facts: Any) -> list[Any]:
    """The entries whose facts ``facts`` will read itself (not take from a copy), as it
    reads them."""
    read: list[Any] = []
    of = facts.of

    def counted(entry: Any) -> Any:
        read.append(entry)
        return of(entry)

    facts.of = counted
    return read


def _audit_with_copy(path: Path) -> tuple[Any, Any, list[dict[str, Any]], list[Any]]:
    """``audit`` with the copy noting the facts (the session, its facts, the rows, the
    entries whose facts were read by the process itself)."""
    from tui_compactor.engine.hindsight import EntryFacts, FactsAhead
    from tui_compactor.session.reader import load_session

    ahead = FactsAhead.start(path)
    assert ahead is not None
    session = load_session(path, on_record=ahead.note)
    facts = EntryFacts()
    read_here = _count_reads(facts)
    ahead.finish(facts, session)
    del facts.of  # counted while the copy's facts are taken, not while auditing
    return session, facts, _audit_rows(session, facts), read_here


def _audit_without_copy(path: Path) -> tuple[Any, Any, list[dict[str, Any]]]:
    """``audit`` with the facts noted while the file loads (no copy)."""
    from tui_compactor.engine.hindsight import EntryFacts
    from tui_compactor.session.reader import load_session

    facts = EntryFacts()
    session = load_session(path, on_record=facts.take)
    return session, facts, _audit_rows(session, facts)


def _long_user_line(entry_id: str, parent_id: str, size: int) -> bytes:
    """A user message line of about ``size`` bytes that names a planted fact."""
    record = {
        "type": "message",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": "2025-11-03T09:00:00.000Z",
        "message": text("user", f"look at {PATH} and {FACT} " + "x" * size),
    }
    return json.dumps(record).encode()


def test_the_copy_passes_over_a_line_the_loader_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line over the loader's line limit (``MAX_LINE_BYTES``, lowered here so the file
    stays small) is skipped by the load; the copy passes over it too (it notes nothing for
    it and the lines after it keep their offsets, so their facts are all taken from the
    copy), and the audit is the one made without a copy."""
    from tui_compactor.engine.hindsight import _has_uses, _note_lines
    from tui_compactor.session import reader

    limit = 64 * 1024  # above every line of the generated file
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", limit)
    path = _generated(tmp_path)
    lines = path.read_bytes().split(b"\n")
    first = json.loads(lines[200])
    long_lines = [
        _long_user_line("long0001", first["id"], 4 * limit),  # several limits long
        _long_user_line("long0002", first["id"], limit + 1 - 200),  # just over it
    ]
    assert [len(line) > limit for line in lines] == [False] * len(lines)
    assert all(limit < len(line) < limit + 100 or len(line) > 4 * limit for line in long_lines)
    lines[201:201] = long_lines[:1]
    lines[1500:1500] = long_lines[1:]
    path.write_bytes(b"\n".join(lines))
    long_offsets = [
        sum(len(line) + 1 for line in lines[:n]) for n, line in enumerate(lines)
        if line in long_lines
    ]  # fmt: skip
    assert len(long_offsets) == 2

    session, by_copy, rows, read_here = _audit_with_copy(path)
    plain_session, plain, plain_rows = _audit_without_copy(path)
    assert rows == plain_rows and any(row["lost"] for row in rows)
    assert read_here == []
    assert (
        len(session.entries) == len(plain_session.entries) == len(lines) - 4
    )  # header, 2 long, end
    assert {"long0001", "long0002"}.isdisjoint(entry.id for entry in session.entries)
    for entry in session.entries:
        assert by_copy.known(entry.index) == plain.known(entry.index), entry.index

    noted = _note_lines(path)
    assert not set(long_offsets) & set(noted)
    users = [entry for entry in session.entries if _has_uses(entry.type, entry.role)]
    assert len(users) > 1000
    data = path.read_bytes()
    for entry in users:
        line = data[entry.offset : entry.offset + entry.size]
        assert noted[entry.offset][0] == hash(line), entry.index


def test_a_first_line_over_the_limit_is_not_handed_to_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version-3 header longer than ``MAX_LINE_BYTES`` (lowered here) is one the loader
    skips: no copy is started (nor the line read whole to find out), the audit is the plain
    one."""
    from tui_compactor.engine.hindsight import FactsAhead
    from tui_compactor.session import reader

    limit = 64 * 1024
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", limit)
    path = _generated(tmp_path, 300)
    lines = path.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    assert header["version"] == 3
    header["padding"] = "p" * limit
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
    assert FactsAhead.start(path) is None
    header["padding"] = "p" * (limit - len(lines[0]) - 40)
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
    ahead = FactsAhead.start(path)  # just under the limit: a copy as before
    assert ahead is not None
    ahead.cancel()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/self/status")
def test_the_copy_never_holds_a_line_over_the_limit(tmp_path: Path) -> None:
    """The copy's memory does not grow with a line over the limit: with the limit at 64 KB,
    a 48 MB line raises its peak by a few MB at most (holding it would take the line twice
    over, bytes and parsed text). Measured in a fresh interpreter."""
    import subprocess

    path = _generated(tmp_path, 300)
    lines = path.read_bytes().split(b"\n")
    parent = json.loads(lines[100])["id"]
    lines.insert(101, _long_user_line("huge0001", parent, 48 * 1024 * 1024))
    path.write_bytes(b"\n".join(lines))
    del lines
    script = (
        "import re, sys\n"
        "from tui_compactor.session import reader\n"
        "from tui_compactor.engine.hindsight import _note_lines\n"
        "def peak():\n"  # this process's own high-water mark (ru_maxrss keeps the parent's)
        "    with open('/proc/self/status') as status:\n"
        "        return int(re.search(r'VmHWM:\\s+(\\d+)', status.read()).group(1))\n"
        "reader.MAX_LINE_BYTES = 64 * 1024\n"
        "before = peak()\n"
        "noted = _note_lines(sys.argv[1])\n"
        "print(len(noted), (peak() - before) // 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    noted, grown_mb = map(int, done.stdout.split())
    assert noted > 100
    assert grown_mb < 16, f"the copy grew by {grown_mb} MB reading a 48 MB line"


def test_a_file_rewritten_under_the_copy_gives_the_audit_of_the_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is rewritten between the copy's reading and the load (oh-my-pi rewrites
    files): turns reordered, so messages start where others did, and one message shortened
    in place. Facts noted
    from a line that is no longer what the entry at its offset is are not used: the audit
    is the plain one of the new file."""
    from tui_compactor.engine import hindsight

    path = _generated(tmp_path)
    before = tmp_path / "before.jsonl"
    shutil.copy(path, before)
    note_lines = hindsight._note_lines
    monkeypatch.setattr(hindsight, "_note_lines", lambda _path: note_lines(before))

    lines = path.read_bytes().split(b"\n")
    kinds = [
        (json.loads(line).get("message") or {}).get("role") if line else None
        for line in lines
    ]  # fmt: skip

    def relink(line: bytes, old: str, new: str) -> bytes:  # ids are 8 characters: same size
        return line.replace(f'"parentId":"{old}"'.encode(), f'"parentId":"{new}"'.encode())

    n = 100
    swapped = 0
    while n < len(lines) - 2:
        first, second = (json.loads(line) for line in lines[n : n + 2])
        if (kinds[n], kinds[n + 1]) == ("user", "assistant") and second["parentId"] == first["id"]:
            # The agent's turn now comes first, then the user's, then what followed the turn.
            a, b, parent = first["id"], second["id"], first["parentId"]
            assert len({len(a), len(b), len(parent)}) == 1
            lines[n], lines[n + 1] = relink(lines[n + 1], a, parent), relink(lines[n], parent, b)
            lines[n + 2 :] = [relink(line, b, a) for line in lines[n + 2 :]]
            swapped += 1
            n += 7
        n += 1
    assert swapped > 50
    shortened = next(
        n for n in range(2000, len(lines)) if kinds[n] == "user" and b"  " not in lines[n]
    )
    record = json.loads(lines[shortened])
    record["message"] = text("user", f"use {FACT} in {PATH}")
    lines[shortened] = json.dumps(record, separators=(",", ":")).encode()
    path.write_bytes(b"\n".join(lines))

    session, by_copy, rows, read_here = _audit_with_copy(path)
    plain_session, plain, plain_rows = _audit_without_copy(path)
    assert rows == plain_rows and any(row["lost"] for row in rows)
    for entry in session.entries:
        assert by_copy.known(entry.index) == plain.known(entry.index), entry.index
    moved = [entry.line for entry in read_here if entry.line < shortened + 1]
    assert len(moved) > 100  # each pair swapped before the shortened line
    assert shortened + 1 in [entry.line for entry in read_here]


def test_a_line_rewritten_in_place_with_its_id_and_size_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message rewritten in place between the copy's reading and the load, keeping its id
    and its size (a planted fact's name spelled differently, letter for letter): the facts
    the copy noted from the old bytes are not used, the entry is read again, and the audit
    is the plain one of the new file, where the old fact is no longer used (nor lost)."""
    from tui_compactor.engine import hindsight

    path = tmp_path / "session.jsonl"
    shutil.copy(SESSIONS / "refactor-session-v3.jsonl", path)
    plant(path, "Summary: unrelated work.")
    before = tmp_path / "before.jsonl"
    shutil.copy(path, before)
    note_lines = hindsight._note_lines
    monkeypatch.setattr(hindsight, "_note_lines", lambda _path: note_lines(before))

    data = path.read_bytes()
    renamed = FACT.replace("widget", "gadget")
    assert len(renamed) == len(FACT)
    used_at = data.rindex(FACT.encode())  # the turn after the compaction that uses it
    path.write_bytes(data[:used_at] + renamed.encode() + data[used_at + len(FACT) :])
    assert path.stat().st_size == before.stat().st_size

    session, _, rows, read_here = _audit_with_copy(path)
    _, _, plain_rows = _audit_without_copy(path)
    _, _, old_rows = _audit_without_copy(before)
    lost = [fact["text"] for row in rows for fact in row["lost"]]
    old_lost = [fact["text"] for row in old_rows for fact in row["lost"]]
    assert FACT in old_lost and FACT not in lost
    assert rows == plain_rows
    changed = session.entries[read_here[0].index]
    assert [entry.index for entry in read_here] == [changed.index]
    assert changed.offset < used_at < changed.offset + changed.size


def test_no_fork_keeps_the_audit_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a core free a copy is worth forking, unless ``TUI_COMPACTOR_NO_FORK`` is set (the
    benchmark's one-process row); ``0`` or empty leaves the choice to the load."""
    import os

    from tui_compactor.engine.hindsight import NO_FORK_ENV, FactsAhead

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.delenv(NO_FORK_ENV, raising=False)
    assert FactsAhead.worth_it()
    for value, forks in (("1", False), ("yes", False), ("0", True), ("", True)):
        monkeypatch.setenv(NO_FORK_ENV, value)
        assert FactsAhead.worth_it() is forks, value


def test_the_audit_reads_the_index_not_an_entry_per_entry_it_walks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session keeps its index in columns and builds an ``Entry`` only when one is asked
    for: the load hook the audit notes facts with builds none (loading with it builds as many
    entries as loading without it), and auditing every compaction walks the paths and the
    lives by the index's columns and reads the kept records of a big file a run of lines at a
    time (``Session.records_once``), building entries only for the compactions, not one for
    every entry it passes or record it reads."""
    from tui_compactor.engine.hindsight import EntryFacts, audit_compactions
    from tui_compactor.session import model
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate

    path = generate(3000, tmp_path / "gen-3000.jsonl")
    built = [0]
    make = model.Entry.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        built[0] += 1
        make(self, *args, **kwargs)

    monkeypatch.setattr(model.Entry, "__init__", counted)
    load_session(path, lazy=True)  # records read from the file, as for a big one
    plain = built[0]
    facts = EntryFacts()
    session = load_session(path, lazy=True, on_record=facts.take)
    assert built[0] - plain == plain, "the load hook built entries"
    built[0] = 0
    audits = audit_compactions(session, "pi", facts)
    assert len(audits) >= 4 and any(audit.lost for audit in audits)
    walked = sum(len(audit.life) + len(audit.region) for audit in audits)
    assert built[0] <= 2 * len(audits) < walked


def test_facts_not_noted_while_loading_are_read_a_run_of_lines_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's first timeline (the facts not noted while the file loaded): every message
    the audits ask about is read a run of lines at a time (``Session.records_once``), not
    an ``Entry`` built and its line read for each, and the audits and the timeline are what
    they are when the facts were noted while loading."""
    from tui_compactor.engine.hindsight import EntryFacts, audit_compactions, compaction_timeline
    from tui_compactor.engine.tokens import get_counter
    from tui_compactor.session import model
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate

    path = generate(3000, tmp_path / "gen-3000.jsonl")
    noted = EntryFacts()
    expected = [a.to_json(s) for s in [load_session(path, on_record=noted.take)]
                for a in audit_compactions(s, "pi", noted)]  # fmt: skip
    session = load_session(path, lazy=True)
    built = [0]
    make = model.Entry.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        built[0] += 1
        make(self, *args, **kwargs)

    monkeypatch.setattr(model.Entry, "__init__", counted)
    audits = audit_compactions(session, "pi", EntryFacts())
    assert [audit.to_json(session) for audit in audits] == expected
    assert len(audits) >= 4 and built[0] <= 2 * len(audits)
    counter = get_counter("bytes")
    facts = EntryFacts()
    counts = []
    for _ in range(2):  # the second time every fact is known
        built[0] = 0
        rows = compaction_timeline(session, counter, facts=facts)
        assert [row.audit.to_json(session) for row in rows if row.audit] == expected
        counts.append(built[0])
    assert counts[0] - counts[1] <= len(rows)


def test_records_read_a_run_at_a_time_are_the_records_read_one_by_one(tmp_path: Path) -> None:
    """``Session.records_once`` (the audit's read of the kept windows) gives exactly what
    ``data_once`` gives for each entry: a record in the session's cache, a line rewritten in
    place into something that no longer parses, and the lines around them."""
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate

    path = generate(3000, tmp_path / "gen-3000.jsonl")
    session = load_session(path, lazy=True)
    indices = list(range(len(session.entries)))
    one_by_one = [session.entries[i].data_once() for i in indices]
    assert session.records_once(indices) == one_by_one
    assert session.records_once(indices[::7]) == one_by_one[::7]
    cached = session.entries[100].data  # now in the session's record cache
    broken = session.entries[101]
    with path.open("r+b") as file:  # same size, no longer JSON
        file.seek(broken.offset)
        file.write(b"#" * broken.size)
    again = session.records_once(indices[90:110])
    assert again[10] is cached
    assert again == [session.entries[i].data_once() for i in indices[90:110]]
    assert "_unavailable" in again[11]


def test_records_read_a_run_at_a_time_read_a_bounded_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines near each other are read together, but one read never spans more than the bound
    (wanted lines spread over a big file would otherwise read the whole span at once)."""
    import os

    from tui_compactor.session import session as session_module
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate

    path = generate(2000, tmp_path / "gen-2000.jsonl")
    session = load_session(path, lazy=True)
    indices = list(range(len(session.entries)))
    one_by_one = [session.entries[i].data_once() for i in indices]
    bound = 20_000
    monkeypatch.setattr(session_module, "_RUN_MAX", bound, raising=False)
    reads: list[int] = []
    real_pread = os.pread

    def counted(fd: int, size: int, offset: int) -> bytes:
        reads.append(size)
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", counted)
    assert session.records_once(indices) == one_by_one
    longest = max(entry.size for entry in session.entries)
    assert reads and max(reads) <= max(bound, longest)
    assert len(reads) < len(indices) / 2  # still a run at a time


def test_every_life_is_found_in_one_pass_over_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Auditing every compaction finds each one's life (every entry below it on every
    branch, up to the next compaction) in one pass over the parent column, not a walk down
    the children of each: the lives are the ones a walk finds, on a generated file with
    branches and on every fixture, and the audits ask for no entry's children."""
    from tui_compactor.engine.hindsight import EntryFacts, _life, audit_compactions
    from tui_compactor.session.reader import load_session
    from tui_compactor.session.session import Session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate

    paths = [generate(3000, tmp_path / "gen-3000.jsonl")]
    paths += sorted((TESTS / "fixtures").glob("**/*.jsonl"))
    compared = 0
    asked = [0]
    children = Session.children

    def counted(self: Session, index: int) -> list[int]:
        asked[0] += 1
        return children(self, index)

    for path in paths:
        session = load_session(path)
        types = session.entry_types()
        walked = {
            index: _life(session, index, types)
            for index, kind in enumerate(types)
            if kind == "compaction"
        }
        asked[0] = 0
        monkeypatch.setattr(Session, "children", counted)
        audits = audit_compactions(session, "pi", EntryFacts())
        monkeypatch.undo()
        assert {audit.entry_index: audit.life for audit in audits} == walked, path.name
        assert asked[0] == 0, path.name
        compared += len(audits)
    assert compared >= 30


def test_the_load_hook_sees_each_line_without_a_copy(tmp_path: Path) -> None:
    """The load hands the audit's hook each message line as a view of the chunk it read (no
    copy of the 224 MB of a big file's lines): the view holds exactly the line's bytes, and
    its hash is the hash of those bytes (what ``FactsAhead`` compares)."""
    from tui_compactor.session.reader import load_session

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_session import generate

    path = generate(300, tmp_path / "gen-300.jsonl")
    data = path.read_bytes()
    seen: list[tuple[int, Any]] = []

    def hook(index: int, kind: str, role: Any, offset: int, record: Any, raw: Any) -> None:
        line = data[offset : data.index(b"\n", offset)]
        assert bytes(raw) == line and hash(raw) == hash(line)
        seen.append((index, type(raw)))

    session = load_session(path, on_record=hook)
    messages = [i for i, kind in enumerate(session.entry_types()) if kind == "message"]
    assert [index for index, _ in seen if index in set(messages)] == messages
    assert len(messages) > 200
    assert {kind for index, kind in seen if index in set(messages)} == {memoryview}


def test_the_audits_run_without_the_cyclic_collector(tmp_path: Path) -> None:
    """Auditing every compaction (``audit``) and the timeline build many short-lived dicts,
    lists, tuples and parsed kept records and no cycles: the cyclic collector does not run
    while they are built (on the 100k benchmark session it walked them 13 times, ~0.01 s of
    CPU), and it is running again afterwards. Same audits either way."""
    import gc

    from tui_compactor.engine.hindsight import (
        EntryFacts,
        audit_compactions,
        compaction_timeline,
    )
    from tui_compactor.engine.tokens import get_counter
    from tui_compactor.session.reader import load_session

    path = _generated(tmp_path)
    session = load_session(path)
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    assert gc.isenabled()
    gc.callbacks.append(seen)
    try:
        audits = audit_compactions(session, "pi", EntryFacts())
        rows = compaction_timeline(session, get_counter("pi"), facts=EntryFacts())
    finally:
        gc.callbacks.remove(seen)
    assert len(audits) >= 5
    assert [row.audit.to_json(session) for row in rows if row.audit is not None] == [
        audit.to_json(session) for audit in audits
    ]
    assert collections == []
    assert gc.isenabled()


def test_the_copys_facts_are_taken_without_the_cyclic_collector(tmp_path: Path) -> None:
    """Taking what the forked copy noted (tens of thousands of tuples unpickled on a big
    file) runs with the cyclic collector paused, as the audits do, and gives the facts the
    load notes itself."""
    import gc

    from tui_compactor.engine.hindsight import EntryFacts, FactsAhead
    from tui_compactor.session.reader import load_session

    path = _generated(tmp_path)
    noted = EntryFacts()
    load_session(path, on_record=noted.take)
    ahead = FactsAhead.start(path)
    assert ahead is not None
    session = load_session(path, on_record=ahead.note)
    by_copy = EntryFacts()
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        ahead.finish(by_copy, session)
    finally:
        gc.callbacks.remove(seen)
    assert [by_copy.known(i) for i in range(len(session.entries))] == [
        noted.known(i) for i in range(len(session.entries))
    ]
    assert collections == []
    assert gc.isenabled()
