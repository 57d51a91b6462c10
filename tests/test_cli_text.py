"""The commands' text output says what it counts: lists that are cut say so, figures say where
they come from, one error is printed once, separate trees are separated, counts have plurals."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.summarize.helpers import SessionBuilder
from tui_compactor.cli import main
from tui_compactor.wording import count_of

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def many_files_session(path: Path) -> Path:
    """Nine files read and one changed, with usage reports far below the local counts."""
    builder = SessionBuilder()
    builder.user("Survey the parsers and fix the one that fails. " + "context " * 400)
    for i in range(9):
        builder.assistant(
            f"Reading parser {i}.", tool="read", arguments={"path": f"src/parsers/p{i}.py"}
        )
        builder.result(f"def parse_{i}(text):\n" + "    pass\n" * 300, tool="read")
    builder.assistant("Fixing p3.", tool="edit", arguments={"path": "src/parsers/p3.py"})
    builder.result("Successfully replaced text.", tool="edit")
    builder.user("Now run the tests.")
    builder.assistant("Done.")
    return builder.write(path)


def test_plan_says_how_many_files_it_did_not_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = many_files_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "plan", str(session), "--keep-recent", "50")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.strip().startswith("files read"))
    assert line.strip().startswith("files read   9: src/parsers/p0.py, ")
    assert line.count("src/parsers/") == 8 and line.endswith(" and 1 more")


def test_plan_labels_usage_based_and_local_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = many_files_session(tmp_path / "s.jsonl")
    code, out, _ = run(capsys, "plan", str(session), "--keep-recent", "50")
    assert code == 0
    before = re.search(r"tokens       before (\d+) \(usage-based: the last assistant usage", out)
    assert before is not None
    prefix = re.search(r"turn prefix  (\d+) messages, ~(\d+) tokens by local cl100k count", out)
    assert prefix is not None
    # The local count of the turn prefix alone exceeds the stale usage-based figure: the
    # output says why instead of leaving a part that looks bigger than the whole.
    assert int(prefix.group(2)) > int(before.group(1))
    assert "the local counts add up to" in out and "more than the usage-based" in out
    assert " 1 messages" not in out and "msgs" not in out


def test_lint_prints_a_refused_files_error_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(FIXTURES / "bad" / "empty-file.jsonl"))
    assert code == 2
    assert out.count("empty file (0 bytes), not a pi session") == 1


@pytest.mark.parametrize("name", ["empty-file.jsonl", "whitespace-only.jsonl"])
def test_session_commands_name_a_refused_file_by_the_same_error(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = FIXTURES / "bad" / name
    errors = {}
    for command in ("lint", "tree", "inspect"):
        code, out, _ = run(capsys, command, str(path), "--json")
        report = json.loads(out)
        assert (code, report["verdict"]) == (2, "refuse")
        errors[command] = report["error"]
        _, _, err = run(capsys, command, str(path))
        if command != "lint":
            assert err == f"tui-compactor: {report['error']}\n"
    assert errors["tree"] == errors["inspect"] == errors["lint"]


def test_tree_separates_a_second_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = shutil.copyfile(FIXTURES / "bad" / "two-roots.jsonl", tmp_path / "two.jsonl")
    code, out, _ = run(capsys, "tree", str(session))
    assert code == 0
    lines = out.splitlines()
    rule = lines.index("── root 2 of 2: a separate tree, not connected to the rows above ──")
    assert "e0000006" in lines[rule - 1] and "e0000007" in lines[rule + 1]
    # A branch point's main line continuing below its side branches is not a new root.
    _, branched, _ = run(
        capsys, "tree", str(FIXTURES / "oracle" / "sessions" / "tree-branches.jsonl")
    )
    assert "root 2 of" not in branched


def test_missing_parent_starts_a_separate_tree(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "tree", str(FIXTURES / "bad" / "missing-parent.jsonl"))
    lines = out.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("── root 2 of 2"))
    assert "(missing deadbeef) e0000004" in lines[rule + 1]


def _hidden_root_session(path: Path) -> Path:
    """A hidden root (a model change) with two user messages under it, and a second root."""
    import json

    def message(ident: str, parent: str | None, text: str) -> dict[str, object]:
        return {
            "type": "message",
            "id": ident,
            "parentId": parent,
            "timestamp": "2025-12-03T14:00:01.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        }

    records: list[dict[str, object]] = [
        {
            "type": "session",
            "version": 3,
            "id": "s",
            "timestamp": "2025-12-03T14:00:00.000Z",
            "cwd": "/p",
        },
        {
            "type": "model_change",
            "id": "m0",
            "parentId": None,
            "timestamp": "2025-12-03T14:00:00.500Z",
            "provider": "x",
            "modelId": "y",
        },
        message("u1", "m0", "first"),
        message("u2", "m0", "second"),
        message("u3", None, "another root"),
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


@pytest.mark.parametrize("view", ["default", "all", "user-only"])
def test_tree_numbers_every_separate_tree_up_to_its_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], view: str
) -> None:
    # Hiding the root lifts its two messages into two trees: the count in "root N of M" and
    # the rules printed come from the same walk, so they always end at M.
    session = _hidden_root_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "tree", str(session), "--filter", view)
    assert code == 0, err
    rules = re.findall(r"^── root (\d+) of (\d+): ", out, flags=re.MULTILINE)
    total = 2 if view == "all" else 3
    assert rules == [(str(n), str(total)) for n in range(2, total + 1)]


@pytest.mark.parametrize(
    ("n", "one", "text"),
    [
        (1, "message", "1 message"),
        (2, "message", "2 messages"),
        (0, "entry", "0 entries"),
        (1, "entry", "1 entry"),
        (3, "msg", "3 msgs"),
    ],
)
def test_count_of(n: int, one: str, text: str) -> None:
    assert count_of(n, one) == text


def test_plan_pane_counts_one_message_in_the_singular() -> None:
    from tests.summarize.helpers import plan_for
    from tui_compactor.ui.widgets.plan_view import plan_summary

    session, plan, _ = plan_for(
        FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl", keep_recent=300, rules="omp"
    )
    assert len(plan.recent_messages) == 1
    text = plan_summary(plan, session, {}).plain
    assert "kept verbatim: 1 msg," in text and "1 msgs" not in text


def test_navigate_dry_run_says_what_each_entry_is(capsys: pytest.CaptureFixture[str]) -> None:
    session = FIXTURES / "oracle" / "sessions" / "tree-branches.jsonl"
    code, out, err = run(
        capsys, "navigate", str(session), "--to", "2afc4f95", "--dry-run", "--budget", "300"
    )
    assert code == 0, err
    assert (
        "target           2afc4f95 (#26) user: Actually, try a token bucket instead of a "
        "fixed window."
    ) in out
    assert "old leaf         20aec973 (#42) assistant: Added a Fixed entry to CHANGELOG.md." in out
    assert "    c2cbc958 assistant: Fixed: the window now starts at the first hit per key" in out
    assert "    … 2 more" in out
    assert "(8 entries not sent: tool results, and what did not fit the budget)" in out


def test_one_entry_and_one_message_are_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builder = SessionBuilder()
    builder.user("hello")
    session = str(builder.write(tmp_path / "one.jsonl"))
    _, lint, _ = run(capsys, "lint", session)
    assert "version 3, 1 entry: message 1" in lint and "active path 1 entry" in lint
    _, context, _ = run(capsys, "context", session)
    assert "; 1 message, 1 sent" in context


@pytest.mark.parametrize("command", ["plan", "context"])
def test_threshold_uses_the_window_of_the_sessions_model(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --window: the window of the session's own model, as the app's gauge uses, said so."""
    session = str(FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl")
    code, out, err = run(capsys, command, session)
    assert code == 0, err
    assert "200000 (the window of claude-opus-4-5, the session's model)" in out
    assert "threshold 183616 = window − reserve 16384" in out
    _, data, _ = run(capsys, command, session, "--json")
    import json

    threshold = json.loads(data)["threshold"]
    assert threshold["window"] == 200000 and threshold["thresholdTokens"] == 183616
    assert threshold["windowSource"] == "model claude-opus-4-5"
    _, flagged, _ = run(capsys, command, session, "--window", "32000")
    assert "32000 (from --window)" in flagged


def test_an_unknown_model_says_the_window_is_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = many_files_session(tmp_path / "s.jsonl")  # model "test-model": no known window
    _, out, _ = run(capsys, "plan", str(session))
    assert "(assumed: the session's model has no known window; pass --window N)" in out


def test_navigate_dry_run_explains_its_default_budget(capsys: pytest.CaptureFixture[str]) -> None:
    """window − reserve, with the window the app uses (the session model's, here gpt-5.1)."""
    session = FIXTURES / "oracle" / "sessions" / "tree-branches.jsonl"
    _, out, _ = run(capsys, "navigate", str(session), "--to", "2afc4f95", "--dry-run")
    assert (
        "budget 383616 = window 400000 (the window of gpt-5.1-codex, the session's model) "
        "− reserve 16384: the most of the branch a summary reads"
    ) in out
    assert "  budget 383616: " in out
    _, explicit, _ = run(
        capsys, "navigate", str(session), "--to", "2afc4f95", "--dry-run", "--budget", "300"
    )
    assert "window − reserve" not in explicit and "= window" not in explicit


def test_compact_prints_the_plan_as_plan_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    session = str(many_files_session(tmp_path / "s.jsonl"))
    _, planned, _ = run(capsys, "plan", session, "--keep-recent", "50")
    code, compacted, err = run(
        capsys, "compact", session, "--keep-recent", "50", "--dry-run", "--provider", "offline"
    )
    assert code == 0, err
    block = [
        line
        for line in planned.splitlines()
        if line[:2] == "  " and line[2] != " " and not line.startswith("  cannot run")
    ]
    assert block and all(line in compacted.splitlines() for line in block)
    assert "the local counts add up to" in compacted and "kept ~" not in compacted


def test_one_compaction_is_singular(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "audit", str(FIXTURES / "bad" / "compaction-firstKept-missing.jsonl"))
    assert "1 compaction; worst score" in out
