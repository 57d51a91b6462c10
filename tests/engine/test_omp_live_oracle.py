"""Differential tests against oh-my-pi 18.2.3 itself, run live on sessions the tests write.

The shared oracle kit (``shared/oracle-omp/omp_oracle.ts``, found next to the repository or
through ``OMP_ORACLE_DIR``) runs oh-my-pi's own ``SessionManager``, ``buildSessionContext``,
``prepareCompaction``, branch collection and shake detection under Bun on a session file.
Its answer is compared field by field with the engine under ``--rules omp`` (the same diff as
``test_omp_oracle.py``). Sessions:

* ``rebuild_rules_session``: the context rules the shipped goldens do not exercise (shaken
  results, reset boundary, retry-recovered and empty error turns, aborted turn with a result,
  dangling calls with redacted thinking, handoff and warned compactions, an image-bearing
  custom message, an excluded bash run);
* a session written through oh-my-pi's own ``SessionManager`` API by ``omp_api_writer.ts``
  (soft/handoff compactions, ``preserveData``, a dead-end ``warning``, a reset boundary,
  failed and retry-recovered turns, and a shake applied by oh-my-pi's own shake code);
* a copy of oh-my-pi's own ``omp-basic`` session after ``tui-compactor compact`` appended a
  compaction to it: oh-my-pi loads what we wrote, and its cut, context and budgets after our
  compaction are ours.

Skips with the reason when Bun or the installed reference is missing (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.engine.omp_golden import compare
from tests.engine.omp_sessions import rebuild_rules_session
from tests.support.omp_oracle import omp_golden, run_bun, skip_reason
from tui_compactor.session.reader import load_session

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"

SKIP = skip_reason()
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")


def _assert_matches(session_path: Path, golden: dict[str, Any]) -> int:
    checks, mismatches = compare(load_session(session_path), golden)
    shown = "\n".join(
        f"{where}: expected {exp!r}, got {got!r}" for where, exp, got in mismatches[:20]
    )
    assert not mismatches, f"{len(mismatches)} of {checks} differ:\n{shown}"
    return checks


def test_rebuild_rules_match_oh_my_pi_live(tmp_path: Path) -> None:
    path = rebuild_rules_session(tmp_path / "rules.jsonl")
    golden = omp_golden(path)
    checks = _assert_matches(path, golden)
    print(f"rebuild-rules session: {checks} of {checks} values match oh-my-pi")
    contexts = {row["why"]: row for row in golden["contexts"]}
    # the session really exercises the rules (oh-my-pi's own answer says so)
    leaf = contexts["leaf"]
    assert leaf["roles"] == ["user", "assistant", "toolResult"]  # reset boundary: only after it
    assert leaf["items"][1]["rewritten"]  # c9 dangles: stripped with the redacted thinking
    half = contexts["path 50%"]
    assert any(item.get("pruned") for item in half["items"])
    assert "developer" in half["llmRoles"]
    recovered = [row for why, row in contexts.items() if why.startswith("after failed")]
    assert recovered and all("aborted" not in json.dumps(row["roles"]) for row in recovered)


def test_a_session_written_through_oh_my_pis_api_matches(tmp_path: Path) -> None:
    written = run_bun(Path(__file__).with_name("omp_api_writer.ts"), str(tmp_path), timeout=120)
    assert written.returncode == 0, written.stderr[-2000:]
    path = Path(written.stdout.strip())
    text = path.read_text(encoding="utf-8")
    # what oh-my-pi persisted by rewriting the file is there
    assert "prunedAt" in text and "retryRecovery" in text and '"warning"' in text
    golden = omp_golden(path)
    checks = _assert_matches(path, golden)
    print(f"session written through oh-my-pi's API: {checks} of {checks} values match")
    quarter = next(row for row in golden["contexts"] if row["why"] == "path 25%")
    assert sum(1 for item in quarter["items"] if item.get("pruned")) == 2


def test_oh_my_pi_reloads_our_compaction_and_agrees(tmp_path: Path) -> None:
    from tui_compactor.cli import main

    path = tmp_path / "omp-basic.jsonl"
    shutil.copyfile(FIXTURES / "oracle-omp" / "sessions" / "omp-basic.jsonl", path)
    before = path.stat().st_size
    command = ["compact", str(path), "--rules", "omp", "--yes", "--provider", "offline"]
    assert main([*command, "--keep-recent", "2000", "--quiet-window", "0"]) == 0
    assert path.stat().st_size > before
    golden = omp_golden(path)
    ours = load_session(path)
    appended = ours.entries[-1]
    assert appended.type == "compaction"
    assert golden["entries"][-1]["type"] == "compaction"
    assert golden["entries"][-1]["id"] == appended.id
    assert golden["misc"]["latestCompactionOnBranch"]["id"] == appended.id
    checks = _assert_matches(path, golden)
    print(f"omp-basic + our compaction: {checks} of {checks} values match oh-my-pi")


@pytest.mark.parametrize(
    "session",
    [
        "oracle-omp/sessions/omp-basic.jsonl",
        "oracle-omp/sessions/omp-methods.jsonl",
        "oracle-omp/sessions/omp-tree.jsonl",
        "oracle/sessions/before-compaction.jsonl",
        "oracle/sessions/tree-branches.jsonl",
        "oracle/sessions/tree-compacted.jsonl",
    ],
)
def test_the_shared_sessions_match_oh_my_pi_run_now(session: str) -> None:
    """The six sessions of the shipped goldens, answered by oh-my-pi's code now (not the
    stored JSON): ``--rules omp`` with no other flag gives every value."""
    path = FIXTURES / session
    checks = _assert_matches(path, omp_golden(path))
    print(f"{path.name}: {checks} of {checks} values match oh-my-pi")


def _roles_and_empty_remote_session(path: Path) -> Path:
    """A chain where a ``smol`` model is set before the first assistant turn, then ``slow``,
    then ``smol`` again, ending in an OpenAI remote compaction whose replacement history is
    empty (still a remote compaction: an empty array is a JavaScript truth)."""

    def turn(role: str, text: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}],
                                   "timestamp": 1}  # fmt: skip
        if role == "assistant":
            cost = dict.fromkeys(("input", "output", "cacheRead", "cacheWrite", "total"), 0)
            usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                     "totalTokens": 15, "cost": cost}  # fmt: skip
            message.update(provider="p", model="m1", api="x", usage=usage, stopReason="stop")
        return {"type": "message", "message": message}

    remote = {"openaiRemoteCompaction": {"provider": "openai", "replacementHistory": []}}
    chain = [
        turn("user", "hi"),
        {"type": "model_change", "model": "p/small", "role": "smol"},
        turn("assistant", "a1"),
        {"type": "model_change", "model": "p/slow", "role": "slow"},
        turn("user", "more"),
        {"type": "model_change", "model": "p/small2", "role": "smol"},
        turn("assistant", "a2"),
        turn("user", "u3"),
        turn("assistant", "a3"),
        {"type": "compaction", "summary": "the summary", "firstKeptEntryId": "e4",
         "providerReplayThroughEntryId": "e7", "tokensBefore": 100, "preserveData": remote},
        turn("user", "after"),
    ]  # fmt: skip
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-02-03T09:00:00.000Z",
         "cwd": "/p"}
    ]  # fmt: skip
    parent = None
    for n, record in enumerate(chain):
        records.append({**record, "id": f"e{n}", "parentId": parent,
                        "timestamp": "2026-02-03T09:00:01.000Z"})  # fmt: skip
        parent = f"e{n}"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_model_roles_in_order_and_an_empty_remote_history_match_oh_my_pi(tmp_path: Path) -> None:
    """``models`` lists the roles in the order oh-my-pi's object does (first set first, the
    default where the first assistant turn set it), and a compaction with an empty remote
    replacement history keeps its provider payload and replays only what follows the replay id."""
    from tui_compactor.engine.context import build_context

    path = _roles_and_empty_remote_session(tmp_path / "roles.jsonl")
    golden = omp_golden(path)
    _assert_matches(path, golden)
    session = load_session(path)
    leaf = next(row for row in golden["contexts"] if row["leafId"] == "e10")
    assert list(leaf["models"]) == ["smol", "default", "slow"]  # oh-my-pi's own answer
    ctx = build_context(session, 10, rules="omp")
    for row in golden["contexts"]:
        at = build_context(session, row["leafIndex"], rules="omp")
        assert list(at.models.items()) == list(row["models"].items()), row["why"]
    assert leaf["entryIndices"] == [9, 8, 10]
    assert leaf["items"][0]["providerPayload"] == "openaiResponsesHistory"
    assert [item.entry_index for item in ctx.items] == [9, 8, 10]
    assert ctx.items[0].message["providerPayload"] == {"type": "openaiResponsesHistory"}
