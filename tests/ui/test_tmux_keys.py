"""In a real terminal, keys pressed wherever the focus happens to be, and the rules switched while
a plan is shown:

* letters that are app keys elsewhere (``q`` quit, ``o`` rules, ``r`` compact, ``u`` undo,
  ``a`` accept, digits for tabs) typed into the label dialog and the search box are text: the
  label written is exactly what was typed, nothing else happens;
* keys sent in one burst with ``/`` or ``e`` land in the search box / the keep field, even
  though those are built or focused only after the keys arrived (``q`` does not quit);
* with a config file and ``TUI_COMPACTOR_*`` variables set together, ``o`` switches pi /
  oh-my-pi rules with the plan on screen, and the app's plan cuts where ``plan --rules X`` cuts
  under the same file and variables, both ways (by construction: one planner, one settings
  resolution).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import EXIT_MARK, FIXTURES, TmuxApp, app_command, tmux_app  # noqa: F401
from tests.ui.test_tmux_context import tree_focused
from tests.ui.test_tmux_growth import FIXTURE, records

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    target = tmp_path / "keys.jsonl"
    shutil.copyfile(FIXTURE, target)
    return target


def test_app_keys_typed_into_the_label_dialog_and_the_search_box_are_text(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    session: Path,
) -> None:
    app = tmux_app([str(session)], (80, 24))
    first = app.wait_for(lambda s: "entries" in s.splitlines()[0] and tree_focused(s), "the tree")
    rules = "omp rules" if "omp rules" in first.splitlines()[0] else "pi rules"
    count = len(records(session))
    app.send("k", "L")
    app.wait_for_text("Label of")
    app.send("quota", "Space", "rules", "Space", "2", "Space", "undo", "Enter")
    app.wait_for_text("label “quota rules 2 undo” set")
    added = records(session)[count:]
    assert [(r["type"], r["label"]) for r in added] == [("label", "quota rules 2 undo")]
    app.send("/")
    app.wait_for_text("search entries")
    app.send("q", "o", "r", "u", "a", "3")
    app.wait_for(lambda s: "qorua3" in s, "the typed search")
    screen = app.capture()
    assert EXIT_MARK not in screen and rules in screen.splitlines()[0]
    assert len(records(session)) == count + 1, "nothing else was written"


def _plan_cut(session: Path, config: Path, rules: str) -> int:
    done = subprocess.run(
        [*app_command(), "plan", str(session), "--config", str(config), "--rules", rules, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout)["plans"][0]["firstKeptEntryEntriesIndex"])


def test_rules_switched_with_the_plan_shown_cut_where_plan_cuts_under_file_and_variables(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = tmp_path / "tree-branches.jsonl"
    shutil.copyfile(FIXTURES / "oracle" / "sessions" / session.name, session)
    config = tmp_path / "config.toml"
    config.write_text('[compaction]\nkeep_recent_tokens = 9000\nrules = "omp"\n')
    monkeypatch.setenv("TUI_COMPACTOR_RULES", "pi")  # beats the file's omp
    monkeypatch.setenv("TUI_COMPACTOR_KEEP_RECENT_TOKENS", "2000")  # beats the file's 9000
    pi_cut, omp_cut = _plan_cut(session, config, "pi"), _plan_cut(session, config, "omp")
    assert pi_cut != omp_cut, "the rules must disagree here for the test to mean anything"
    app = tmux_app([str(session), "--config", str(config)], (200, 60))
    top = app.wait_for(lambda s: "entries" in s.splitlines()[0] and tree_focused(s), "the tree")
    assert "pi rules (TUI_COMPACTOR_RULES)" in top.splitlines()[0]
    app.send("G", "c")
    app.wait_for_text(f"cut before #{pi_cut} ")
    app.send("o")
    # The plan form fills a row a frame: wait for its keep row, then read the whole pane.
    switched = app.wait_for_text(f"cut before #{omp_cut} ", "keep  ")
    assert "omp rules (app)" in switched.splitlines()[0]
    assert "keep  2000" in switched  # the variable's keep-recent survives the switch
    app.send("o")
    back = app.wait_for_text(f"cut before #{pi_cut} ")
    assert "pi rules (app)" in back.splitlines()[0]


def test_at_80_columns_the_header_keeps_the_rules_and_their_source(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    session: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long session name gives way (shortened with an ellipsis, or left out) to what the user
    needs to read: which rules plan it and why (and running jobs, a pending reload); made wide
    again the whole name is back. The name is the one oh-my-pi gives the file: its header's
    title (it reads no ``session_info``)."""
    monkeypatch.setenv("TUI_COMPACTOR_RULES", "omp")
    lines = records(session)
    lines[0]["title"] = "weather-cli: caching layer"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    app = tmux_app([str(session)], (80, 24))
    top = app.wait_for(lambda s: "entries" in s.splitlines()[0] and "q Quit" in s, "the tree")
    assert "omp rules (TUI_COMPACTOR_RULES)" in top.splitlines()[0], top.splitlines()[0]
    app.resize(200, 24)
    app.wait_for(lambda s: "“weather-cli: caching layer”" in s.splitlines()[0], "the whole name")


def test_at_80_columns_a_chinese_session_name_gives_way_to_the_rules(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    tmp_path: Path,
) -> None:
    """A session file named in Chinese, its session name too: each character takes two columns,
    and the session name is shortened by columns (not characters), so the rules and why stay
    whole on the line; made wide again the whole name is back."""
    name = "天气命令行工具缓存层的设计实现与测试"
    target = tmp_path / "天气.jsonl"
    lines = []
    for record in records(FIXTURE):
        if record.get("type") == "session_info":
            record["name"] = name
        lines.append(json.dumps(record, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    app = tmux_app([str(target)], (80, 24))
    top = app.wait_for(lambda s: "entries" in s.splitlines()[0] and "q Quit" in s, "the tree")
    header = top.splitlines()[0]
    assert header.startswith(" 天气.jsonl"), header
    assert header.endswith("  pi rules (no omp content)"), header  # the rules, and why
    assert "“天气命令行工…”" in header, header  # shortened, by columns, to make room
    app.resize(200, 24)
    app.wait_for(lambda s: f"“{name}”" in s.splitlines()[0], "the whole name")


def test_keys_sent_with_the_key_that_opens_an_input_land_in_it(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    session: Path,
) -> None:
    app = tmux_app([str(session)], (80, 24))
    app.wait_for(lambda s: tree_focused(s), "the tree")
    count = len(records(session))
    app.send("/q7")  # one send-keys call: the terminal delivers the keys as one burst
    app.wait_for(lambda s: "q7" in s, "q7 typed into the search box")
    assert EXIT_MARK not in app.capture(), "the q typed right after / quit the app"
    app.send("Escape")
    app.wait_for(lambda s: "q7" not in s and tree_focused(s), "the tree again")
    app.send("eq3k")
    app.wait_for(lambda s: "keep     3k" in s, "3k typed into the keep field")
    screen = app.capture()
    assert EXIT_MARK not in screen, "the q typed right after e quit the app"
    assert len(records(session)) == count, "nothing was written"
