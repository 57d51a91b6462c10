"""A running agent on the session is found, named, and every append is refused (issue 13.1).

The agent is pi's own ``SessionManager`` driven by ``tests/support/pi_agent.mjs`` under Node:
it keeps its leaf in memory and appends with pauses, exactly as pi does between turns. Our
writing commands run meanwhile with ``--yes``; nothing of ours may end up orphaned, no line
may be torn, and every one of the agent's entries must be in the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.summarize.helpers import split_turn_session
from tests.support.pi_probe import start_pi_agent
from tui_compactor.cli import main
from tui_compactor.session.agents import find_agents, orphaned_appends
from tui_compactor.session.reader import load_session

ROOT = Path(__file__).resolve().parents[2]

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def compacted_session(path: Path) -> Path:
    """A session with one compaction of ours already on it (so ``undo`` has work to do)."""
    split_turn_session(path)
    status = main(["compact", str(path), "--keep-recent", "1500", "--yes", "--quiet-window", "0"])
    assert status == 0
    return path


def orphaned(path: Path) -> list[str]:
    """Ids of our entries an agent's later entry left off the active path."""
    session = load_session(path)
    return [session.entries[o.index].id for o in orphaned_appends(session)]


def every_line_parses(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.splitlines()]


WRITERS = [
    ["undo", "--yes"],
    ["compact", "--keep-recent", "1500", "--leaf", "#28", "--yes"],
    ["navigate", "--to", "#3", "--yes"],
    ["navigate", "--to", "#5", "--summarize", "--yes"],
]


@needs_proc
@pytest.mark.node
def test_idle_agent_refuses_every_writer_naming_the_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = compacted_session(tmp_path / "s.jsonl")
    capsys.readouterr()
    with start_pi_agent(path, count=0, max_pause_ms=0) as agent:
        before = path.read_bytes()
        found = find_agents(path)
        assert [a.pid for a in found] == [agent.pid]
        for argv in WRITERS + [["seal", "--yes"]]:
            status = main([argv[0], str(path), *argv[1:], "--quiet-window", "0", "--json"])
            out, err = capsys.readouterr()
            assert status != 0, argv
            text = out + err
            if argv[0] != "seal":  # seal refuses first: the file already ends with a newline
                assert f"pid {agent.pid}" in text, (argv, text)
                assert "agent is working on this session" in text
        assert path.read_bytes() == before
        # The explicit override writes, and says nothing is hidden.
        status = main(
            ["navigate", str(path), "--to", "#3", "--yes", "--quiet-window", "0", "--ignore-agent"]
        )
        assert status == 0, capsys.readouterr().err
        assert len(path.read_bytes()) > len(before)
    assert find_agents(path) == []


@needs_proc
@pytest.mark.node
def test_agent_appending_with_pauses_orphans_nothing_of_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pi appends 6 entries with random pauses of up to 5 s while our writers loop with --yes."""
    path = compacted_session(tmp_path / "s.jsonl")
    before = len(every_line_parses(path))
    attempts = refused = 0
    deadline = time.monotonic() + 60
    with start_pi_agent(path, count=6, max_pause_ms=5000, seed=7) as agent:
        try:
            while agent.poll() is None and time.monotonic() < deadline:
                argv = WRITERS[attempts % len(WRITERS)]
                status = main([argv[0], str(path), *argv[1:], "--quiet-window", "0"])
                capsys.readouterr()
                attempts += 1
                refused += status != 0
                time.sleep(0.05)
        finally:
            if agent.poll() is None:
                agent.kill()
        assert agent.stdout is not None and agent.stderr is not None
        agent_ids = [line.strip() for line in agent.stdout.read().splitlines() if line.strip()]
        agent.wait(timeout=10)
        assert agent.returncode == 0, agent.stderr.read()
    assert len(agent_ids) == 6
    # Every attempt while the agent could still write was refused: whatever of ours went
    # through (an attempt racing with the agent's exit, when writing is safe again) comes after
    # the agent's last entry. The attempts came about every 50 ms for the agent's seconds.
    assert attempts >= 4 and refused >= 3
    added = every_line_parses(path)[before:]
    last_of_agent = max(i for i, record in enumerate(added) if record.get("id") in agent_ids)
    written_while_agent_ran = [
        record.get("id") for record in added[:last_of_agent] if record.get("id") not in agent_ids
    ]
    assert written_while_agent_ran == []
    # Once the agent has exited, our writer goes through, on the active path.
    assert main(["navigate", str(path), "--to", "#3", "--yes", "--quiet-window", "0"]) == 0
    records = every_line_parses(path)
    ids = {record.get("id") for record in records}
    assert set(agent_ids) <= ids
    assert orphaned(path) == []


@needs_proc
def test_find_agents_reads_cwd_command_line_and_open_files(tmp_path: Path) -> None:
    """The directory rule and the command-line rule, on a fake /proc."""
    session = tmp_path / "sessions" / "s.jsonl"
    session.parent.mkdir()
    session.write_text("{}\n")
    project = tmp_path / "project"
    project.mkdir()
    proc = tmp_path / "proc"

    def fake(pid: int, argv: list[str], cwd: Path) -> None:
        folder = proc / str(pid)
        (folder / "fd").mkdir(parents=True)
        (folder / "fdinfo").mkdir()
        (folder / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        os.symlink(cwd, folder / "cwd")

    fake(101, ["node", "/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"], project)
    fake(102, ["pi", "--session", str(tmp_path / "sessions" / "other.jsonl")], project)
    fake(103, ["bun", "/opt/omp/cli.ts", "--session", "s.jsonl"], session.parent)
    fake(104, ["node", "server.js"], project)  # not an agent
    fake(105, ["vim", str(session)], project)  # not a runtime; not writing
    found = {a.pid: a for a in find_agents(session, session_cwd=str(project), proc=proc)}
    assert set(found) == {101, 103}
    assert "directory this session belongs to" in found[101].evidence
    assert "command line" in found[103].evidence
    assert "pi-coding-agent" in found[101].describe()


def test_our_own_process_and_strangers_are_not_agents(tmp_path: Path) -> None:
    path = split_turn_session(tmp_path / "s.jsonl")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys,time; f=open(sys.argv[1]); time.sleep(30)", str(path)]
    )
    try:
        time.sleep(0.3)
        with path.open("rb"):
            assert find_agents(path, session_cwd=str(tmp_path)) == []
    finally:
        holder.kill()
        holder.wait()


@needs_proc
@pytest.mark.node
def test_lint_names_an_append_the_agent_left_behind_and_the_fix_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user overrode the refusal; pi's next entry orphaned our compaction. ``lint`` says
    so, and the leaf move it offers puts the compaction back on the active path."""
    path = split_turn_session(tmp_path / "s.jsonl")
    with start_pi_agent(path, count=1, max_pause_ms="stdin") as agent:
        status = main(
            [
                "compact",
                str(path),
                "--keep-recent",
                "1500",
                "--yes",
                "--quiet-window",
                "0",
                "--ignore-agent",
            ]
        )
        assert status == 0, capsys.readouterr().err
        assert agent.stdin is not None and agent.stdout is not None
        agent.stdin.write("go\n")
        agent.stdin.flush()
        agent_id = agent.stdout.readline().strip()
        agent.wait(timeout=20)
    capsys.readouterr()
    session = load_session(path)
    assert session.entries[-1].id == agent_id
    ours = session.entries[-2]
    assert ours.type == "compaction"
    assert orphaned(path) == [ours.id]

    assert main(["lint", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [orphan] = report["orphanedAppends"]
    assert orphan["entryId"] == ours.id and orphan["bypassedBy"] == agent_id
    assert main(["lint", str(path)]) == 0
    text = capsys.readouterr().out
    assert "off the active path" in text and f"--to {ours.id}" in text

    fix = orphan["fix"]
    assert main([*fix, "--yes", "--quiet-window", "0"]) == 0
    capsys.readouterr()
    session = load_session(path)
    assert ours.index in session.path_to(session.leaf)
    assert orphaned(path) == []


def orphaned_session(path: Path) -> tuple[Path, str]:
    """Our compaction, then a line as pi writes it from the leaf it kept in memory."""
    split_turn_session(path)
    before = load_session(path)
    pi_leaf = before.entries[before.leaf].id
    assert (
        main(["compact", str(path), "--keep-recent", "1500", "--yes", "--quiet-window", "0"]) == 0
    )
    ours = load_session(path).entries[-1].id
    line = {
        "type": "message",
        "id": "p1a2b3c4",
        "parentId": pi_leaf,
        "timestamp": "2025-12-03T15:00:00.000Z",
        "message": {"role": "user", "content": "next", "timestamp": 1764774000000},
    }
    with path.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    return path, ours


def test_orphan_rule_without_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, ours = orphaned_session(tmp_path / "s.jsonl")
    capsys.readouterr()
    assert orphaned(path) == [ours]
    assert main(["lint", str(path), "--json"]) == 0
    [orphan] = json.loads(capsys.readouterr().out)["orphanedAppends"]
    assert orphan["entryId"] == ours and orphan["bypassedBy"] == "p1a2b3c4"
    # A leaf move of ours that the user asked for is not an orphan: the agent resumed from it.
    assert main([*orphan["fix"], "--yes", "--quiet-window", "0"]) == 0
    assert orphaned(path) == []
