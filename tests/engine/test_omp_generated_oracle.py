"""``--rules omp`` against oh-my-pi 18.2.3 run live on generated sessions, and on what we append.

Every compared value of the oracle's golden (tree, entries, contexts with what is sent, cut
points and the keep-recent sweep, branch-summary collection, other leaves, shake, misc) is
diffed by ``omp_golden.compare`` on:

* the five sessions of ``gen_sessions`` (the pi goldens' generated trees: branches, branch
  summaries with ``details`` and pi's ``fromHook``, two compactions, long turns, several roots,
  settings changes, custom messages, images, bash runs), each made loadable by oh-my-pi: a
  ``cost`` in every usage (18.2.3 refuses a file without one, which the first test shows) and a
  distinct millisecond timestamp per message (the oracle finds a rewritten message's entry by
  type, timestamp and text);
* random trees from ``omp_random.random_session`` (several seeds);
* a random tree, oh-my-pi's own ``omp-tree`` and a file with malformed lines after each append
  tui-compactor makes under ``--rules omp`` (a soft compaction, a branch summary, a leaf move, a
  label, a move back, a handoff compaction, an undo): oh-my-pi loads every entry we wrote, its
  leaf is ours, and every value still agrees;
* the hostile-file corpus (``tests/fixtures/bad``) where oh-my-pi opens and numbers a file as we
  do (the files it refuses or numbers otherwise are listed with the reason).

``compact --rules omp`` writes the cut, ``tokensBefore`` and file lists oh-my-pi's own
``prepareCompaction`` prepares. And ``lint``'s omp-rewrite warning is checked against oh-my-pi
itself appending one entry to a copy (``omp_append_probe.ts``): a plain append, or the whole
file written anew.

Skips with the reason when Bun or the installed reference is missing (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.engine import gen_sessions
from tests.engine.omp_golden import compare
from tests.engine.omp_random import random_session
from tests.support.omp_oracle import kit_dir, omp_golden, run_bun, skip_reason
from tui_compactor.session.reader import load_session

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "tests" / "engine" / "data" / "oracle" / "sessions"
OMP_TREE = REPO / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-tree.jsonl"

SKIP = skip_reason()
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")

SWEEP = int(os.environ.get("TUIC_OMP_SWEEP", "0") or 0)
"""``TUIC_OMP_SWEEP=N``: random trees of seeds up to N, and the appends on seeds 1..N too (off
in CI, which runs the seeds listed)."""

NO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def _assert_matches(session_path: Path, golden: dict[str, Any]) -> int:
    session = load_session(session_path)
    assert len(session.entries) == golden["load"]["entries"]
    assert session.leaf == golden["leafIndex"]
    checks, mismatches = compare(session, golden)
    shown = "\n".join(
        f"{where}: expected {exp!r}, got {got!r}" for where, exp, got in mismatches[:20]
    )
    assert not mismatches, f"{len(mismatches)} of {checks} differ:\n{shown}"
    return checks


def _loadable_by_oh_my_pi(source: Path, target: Path) -> Path:
    """``source`` with a cost in every usage and each message stamped with its entry's time."""
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message")
        if isinstance(message, dict):
            usage = message.get("usage")
            if isinstance(usage, dict):
                usage.setdefault("cost", dict(NO_COST))
            stamp = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
            message["timestamp"] = int(stamp.timestamp() * 1000)
        lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def test_oh_my_pi_refuses_a_usage_without_cost(tmp_path: Path) -> None:
    """Why the generated sessions get a cost: 18.2.3's loader sums ``usage.cost.total``."""
    path = tmp_path / "gen-long-turns.jsonl"
    shutil.copyfile(GENERATED / path.name, path)
    done = run_bun((kit_dir() or Path()) / "omp_oracle.ts", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    load = json.loads(done.stdout)["load"]
    assert load["accepted"] is False and "cost" in load["openError"]


@pytest.mark.parametrize("name", [f"{name}.jsonl" for name in gen_sessions.GENERATORS])
def test_generated_sessions_match_oh_my_pi(name: str, tmp_path: Path) -> None:
    path = _loadable_by_oh_my_pi(GENERATED / name, tmp_path / name)
    checks = _assert_matches(path, omp_golden(path))
    print(f"{name}: {checks} of {checks} values match oh-my-pi")


@pytest.mark.parametrize("seed", [1, 2, 3, 4, *range(5, SWEEP + 1)])
def test_random_trees_match_oh_my_pi(seed: int, tmp_path: Path) -> None:
    path = random_session(tmp_path / f"random-{seed}.jsonl", seed, turns=50)
    checks = _assert_matches(path, omp_golden(path))
    print(f"random tree {seed}: {checks} of {checks} values match oh-my-pi")


def _with_malformed_lines(path: Path) -> Path:
    lines = random_session(path, 5).read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(30, '{"type":"message","id":"torn", this is not JSON\n')
    lines.insert(60, "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _run(*argv: str) -> None:
    from tui_compactor.cli import main

    assert main(list(argv)) == 0, argv


@pytest.mark.parametrize(
    "source", ["random", "omp-tree", "malformed", *(f"random-{n}" for n in range(1, SWEEP + 1))]
)
def test_oh_my_pi_loads_what_we_append_and_agrees(source: str, tmp_path: Path) -> None:
    from tui_compactor.workbench.actions import apply, propose_label
    from tui_compactor.workbench.handle import SessionHandle

    path = tmp_path / f"{source}.jsonl"
    if source.startswith("random"):
        random_session(path, int(source.partition("-")[2] or 3))
    elif source == "malformed":
        _with_malformed_lines(path)
    else:
        shutil.copyfile(OMP_TREE, path)
    write = ("--rules", "omp", "--yes", "--quiet-window", "0")
    offline = ("--provider", "offline")
    session = load_session(path)
    path_now = set(session.path_to(session.leaf))
    side = next(i for i in range(len(session.entries) - 1, 0, -1) if i not in path_now)
    steps: list[tuple[str, Any]] = [
        ("compact", ("compact", str(path), *write, *offline, "--keep-recent", "1000")),
        ("navigate", ("navigate", str(path), "--to", f"#{side}", "--summarize", *write, *offline)),
        ("navigate", ("navigate", str(path), "--to", "#1", *write)),
        ("label", None),
        ("navigate", None),
        (
            "compact",
            ("compact", str(path), *write, *offline, "--method", "handoff", "--keep-recent", "500"),
        ),
        ("undo", ("undo", str(path), "--yes", "--quiet-window", "0")),
    ]
    checks = 0
    for what, argv in steps:
        before = load_session(path)
        count = len(before.entries)
        if what == "label":
            handle = SessionHandle(before)
            with handle.read() as snapshot:
                proposal = propose_label(snapshot, 0, "where it began")
            apply(handle, proposal, quiet_seconds=0)
        elif argv is None:  # back to the branch the first navigation left
            _run("navigate", str(path), "--to", f"#{count - 3}", *write)
        else:
            _run(*argv)
        after = load_session(path)
        assert len(after.entries) == count + 1, what
        golden = omp_golden(path)
        assert golden["entries"][-1]["id"] == after.entries[-1].id
        checks += _assert_matches(path, golden)
    print(f"{source} after our seven appends: {checks} of {checks} values match oh-my-pi")


BAD = REPO / "tests" / "fixtures" / "bad"
BAD_ALIKE = sorted(
    path.name
    for path in BAD.glob("*.jsonl")
    if path.stem
    not in {
        # oh-my-pi 18.2.3 cannot open these (a missing header, a `null` line, a null message, a
        # 50,000-deep value overflows its stack) or its tree / navigation never returns
        # (duplicate ids, a parent cycle): test_omp_open_oracle.py holds `lint --rules omp` to
        # that; an empty or blank file gets a fresh header written into it
        "no-header",
        "non-object-json-lines",
        "null-content",
        "deep-nested-custom-data-50k",
        "duplicate-ids",
        "parent-cycle",
        "empty-file",
        "whitespace-only",
        # oh-my-pi numbers these entries differently: it keeps a replayed header line as an
        # entry, and the JSON object a line starts with when garbage follows it
        "duplicate-header-replay",
        "invalid-json-middle",
        # the navigation target's parent was a malformed line: oh-my-pi moves the leaf to
        # that missing id, we to no entry (the two tools' `#N` still agree)
        "raw-control-byte-in-string",
        # `1e400` and friends: Python reads an int that the JSON comparison cannot hold
        "non-finite-numbers",
        # nothing to plan: the two tools word the reason differently
        "header-only",
    }
)


@pytest.mark.parametrize("name", BAD_ALIKE)
def test_strange_files_load_and_plan_as_oh_my_pi_does(name: str, tmp_path: Path) -> None:
    """The hostile-file corpus, as far as oh-my-pi opens and numbers it as we do: every value
    agrees, malformed-line counts included (they decide whether oh-my-pi rewrites the file)."""
    path = tmp_path / name
    shutil.copyfile(BAD / name, path)
    checks = _assert_matches(path, omp_golden(path))
    print(f"{name}: {checks} of {checks} values match oh-my-pi")


REWRITE_CASES = [
    "oracle/sessions/tree-branches.jsonl",  # clean v3 pi file: a plain append
    "oracle/sessions/before-compaction.jsonl",  # v1: migrated, rewritten with new ids
    "oracle-omp/sessions/omp-basic.jsonl",  # oh-my-pi's own, with a title slot
    "bad/invalid-json-middle.jsonl",
    "bad/truncated-last-line.jsonl",
    "bad/raw-control-byte-in-string.jsonl",
    "bad/v2-hookMessage.jsonl",
    "bad/blank-lines-interspersed.jsonl",
    "bad/bom-prefixed.jsonl",
    "bad/crlf-lines.jsonl",
    "bad/no-trailing-newline.jsonl",
    "bad/future-version-99.jsonl",
]


@pytest.mark.parametrize("name", REWRITE_CASES)
def test_lint_predicts_whether_oh_my_pis_next_append_rewrites_the_file(
    name: str, tmp_path: Path
) -> None:
    """``lint``'s omp-rewrite warning (``flavor.omp_rewrite_reason``) against what oh-my-pi's
    own SessionManager does when it appends one entry to a copy of the file."""
    from tui_compactor.session.flavor import omp_rewrite_reason

    source = REPO / "tests" / "fixtures" / name
    predicted = omp_rewrite_reason(load_session(source)) is not None
    path = tmp_path / source.name
    shutil.copyfile(source, path)
    done = run_bun(Path(__file__).with_name("omp_append_probe.ts"), str(path), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["rewritten"] is predicted, outcome


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_compact_writes_the_cut_oh_my_pi_prepares(seed: int, tmp_path: Path) -> None:
    """``compact --rules omp`` appends the compaction oh-my-pi's ``prepareCompaction`` would
    prepare at the same keep-recent: its first kept entry, ``tokensBefore`` and the file lists
    of its ``details``."""
    path = random_session(tmp_path / f"random-{seed}.jsonl", seed)
    golden = omp_golden(path)
    row = next(row for row in golden["cutPoints"] if row["keepRecentTokens"] == 1000)
    assert row["prepared"], row
    offline = ("--provider", "offline", "--keep-recent", "1000")
    _run("compact", str(path), "--rules", "omp", "--yes", "--quiet-window", "0", *offline)
    written = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert written["type"] == "compaction"
    assert written["firstKeptEntryId"] == row["firstKeptEntryId"]
    assert written["tokensBefore"] == row["tokensBefore"]
    assert written["details"] == {
        "readFiles": row["fileOps"]["readFiles"],
        "modifiedFiles": row["fileOps"]["modifiedFiles"],
    }


@pytest.mark.parametrize("slot", [None, "", "Slot title"])
def test_the_session_name_is_the_one_oh_my_pi_gives(slot: str | None, tmp_path: Path) -> None:
    """oh-my-pi names a session by its title slot's title when the file has one (an empty one:
    no name), else by the session header's ``title``; never by pi's ``session_info`` (this file
    has one)."""
    source = REPO / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["title"] = "Header title"
    lines[0] = json.dumps(header)
    if slot is not None:
        stamp = "2026-01-12T09:13:00.000Z"
        text = json.dumps({"type": "title", "v": 1, "title": slot, "updatedAt": stamp, "pad": ""})
        lines.insert(0, text.replace('"pad": ""', f'"pad": "{" " * (255 - len(text))}"'))
    path = tmp_path / "named.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    theirs = omp_golden(path, "--max-contexts", "1")["misc"]["sessionName"]
    assert theirs == {None: "Header title", "": None, "Slot title": "Slot title"}[slot]
    assert load_session(path).name_under("omp") == theirs
