"""``llm`` under pi rules is what pi itself sends: pi's ``convertToLlm`` run by Node on every
message of pi's own context (``tests/support/pi_session_probe.mjs``), compared with
``context --json`` (and so with the app's Context tab, which shows the same ``item_llm``).

Compared at each file's leaf; the files hold compactions, branch summaries, bash runs (an
``!!`` excluded one too), custom messages and tool results. Skips with the reason when Node or
the pi package is missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.pi_probe import pi_sees
from tui_compactor.commands.context import context_json
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = [
    ROOT / "tests" / "fixtures" / "oracle" / "sessions" / name
    for name in ("before-compaction.jsonl", "tree-branches.jsonl", "tree-compacted.jsonl")
] + sorted((ROOT / "tests" / "engine" / "data" / "oracle" / "sessions").glob("*.jsonl"))


@pytest.mark.parametrize("path", SESSIONS, ids=lambda path: path.stem)
def test_llm_under_pi_rules_is_what_pi_sends(path: Path, tmp_path: Path) -> None:
    # pi's SessionManager.open rewrites a file it migrates (before-compaction is version 1):
    # both sides read a copy, never the fixture.
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    session = load_session(copy)
    seen = pi_sees(copy)
    ours = context_json(session, session.leaf, get_counter("pi"), "pi")
    if session.version >= 3:  # pi gives a migrated file new ids
        assert ours["leafId"] == seen["leafId"]
    assert [item["llm"] for item in ours["items"]] == seen["llm"]
    assert ours["llmMessageCount"] == sum(len(sent) for sent in seen["llm"])
