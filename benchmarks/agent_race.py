"""Long race: pi's own SessionManager appends while our writers loop with --yes (issue 13.1).

    PI_CODING_AGENT_DIR=… python benchmarks/agent_race.py [--appends 30] [--max-pause-ms 5000]

The agent (``tests/support/pi_agent.mjs`` under Node) keeps its leaf in memory and appends
``--appends`` messages with random pauses; meanwhile ``undo``, ``compact`` and ``navigate``
(with and without a branch summary) run in a loop with ``--yes``. Reports the attempts, how many
were refused naming the agent, our entries an agent entry left behind (must be 0), torn lines
(must be 0) and whether every agent entry is in the file. The CI test runs a 6-append version.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.summarize.helpers import split_turn_session  # noqa: E402
from tui_compactor.cli import main as cli  # noqa: E402
from tui_compactor.session.agents import orphaned_appends  # noqa: E402
from tui_compactor.session.reader import load_session  # noqa: E402

WRITERS = [
    ["undo", "--yes"],
    ["compact", "--keep-recent", "1500", "--leaf", "#28", "--yes"],
    ["navigate", "--to", "#3", "--yes"],
    ["navigate", "--to", "#5", "--summarize", "--yes"],
]


def quiet(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli(argv)
    return status, out.getvalue() + err.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument("--max-pause-ms", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None:
        print("node is not installed", file=sys.stderr)
        return 2
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="race-config-")
    path = Path(tempfile.mkdtemp(prefix="race-")) / "s.jsonl"
    split_turn_session(path)
    assert (
        quiet(["compact", str(path), "--keep-recent", "1500", "--yes", "--quiet-window", "0"])[0]
        == 0
    )
    agent = subprocess.Popen(
        [
            node,
            str(ROOT / "tests" / "support" / "pi_agent.mjs"),
            str(path),
            str(args.appends),
            str(args.max_pause_ms),
            str(args.seed),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert agent.stdout is not None
    if agent.stdout.readline().strip() != "ready":
        print("the pi package was not found (set PI_CODING_AGENT_DIR)", file=sys.stderr)
        return 2
    started = time.monotonic()
    attempts = refused_by_name = written = 0
    other: dict[str, int] = {}
    while agent.poll() is None:
        argv = WRITERS[attempts % len(WRITERS)]
        status, text = quiet([argv[0], str(path), *argv[1:], "--quiet-window", "0"])
        attempts += 1
        if status != 0 and f"pid {agent.pid}" in text:
            refused_by_name += 1
        elif status == 0:
            written += 1
        else:  # refused before the gate (e.g. undo would leave the agent's entries behind)
            reason = f"{argv[0]}: " + (text.strip().splitlines() or ["?"])[-1][:100]
            other[reason] = other.get(reason, 0) + 1
        time.sleep(0.05)
    agent_ids = [line.strip() for line in agent.stdout.read().splitlines() if line.strip()]
    session = load_session(path)
    torn = 0
    for line in path.read_bytes().splitlines():
        try:
            json.loads(line)
        except ValueError:
            torn += 1
    present = {entry.id for entry in session.entries}
    report = {
        "agentAppends": len(agent_ids),
        "agentEntriesPresent": all(i in present for i in agent_ids),
        "seconds": round(time.monotonic() - started, 1),
        "attempts": attempts,
        "refusedNamingTheAgent": refused_by_name,
        "writtenWhileAgentRan": written,
        "refusedOtherwise": other,
        "orphanedOfOurs": len(orphaned_appends(session)),
        "tornLines": torn,
    }
    print(json.dumps(report, indent=2))
    bad = report["orphanedOfOurs"] or torn or not report["agentEntriesPresent"]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
