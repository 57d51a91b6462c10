"""The headless engine commands, run as real processes on copies of real session files."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.cli import cli

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
ORACLE = TESTS / "fixtures" / "oracle"


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    target = tmp_path / "tree-compacted.jsonl"
    shutil.copyfile(ORACLE / "sessions" / "tree-compacted.jsonl", target)
    return target


@pytest.fixture
def branches(tmp_path: Path) -> Path:
    target = tmp_path / "tree-branches.jsonl"
    shutil.copyfile(ORACLE / "sessions" / "tree-branches.jsonl", target)
    return target


def golden(name: str) -> dict:
    return json.loads((ORACLE / "golden" / f"{name}.json").read_text(encoding="utf-8"))


def test_plan_json_matches_reference_for_every_keep_recent(compacted: Path) -> None:
    expected = golden("tree-compacted")["cutPoints"]
    keeps = ",".join(str(row["keepRecentTokens"]) for row in expected)
    before = compacted.read_bytes()
    result = cli("plan", str(compacted), "--keep-recent", keeps, "--tokens", "pi", "--json")
    assert result.returncode == 0, result.stderr
    assert compacted.read_bytes() == before  # planning never writes
    data = json.loads(result.stdout)
    assert data["rules"] == "pi" and data["tokens"] == "pi"
    assert len(data["plans"]) == len(expected)
    for plan, row in zip(data["plans"], expected, strict=True):
        for key in ("keepRecentTokens", "prepared", "boundaryStart", "previousCompactionIndex"):
            assert plan[key] == row[key], key
        if not row["prepared"]:
            assert plan["reason"]
            continue
        for key in (
            "firstKeptEntryId",
            "firstKeptEntryIndex",
            "turnStartIndex",
            "isSplitTurn",
            "tokensBefore",
        ):
            assert plan[key] == row[key], key
        assert plan["previousSummary"] is row["previousSummary"]["present"]
        for key in ("messagesToSummarize", "turnPrefixMessages"):
            assert plan[key]["count"] == row[key]["count"]
            assert plan[key]["entryIds"] == row[key]["entryIds"]["items"]
            assert plan[key]["tokens"] == row[key]["estimatedTokens"]
        assert plan["fileOps"]["readFiles"] == row["fileOps"]["readFiles"]
        assert plan["fileOps"]["modifiedFiles"] == row["fileOps"]["modifiedFiles"]
        assert set(plan["regionTokens"]) == {"summarize", "turnPrefix", "keep"}


def test_plan_text_and_threshold(compacted: Path) -> None:
    result = cli("plan", str(compacted), "--window", "32000", "--tokens", "pi")
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert "compact now: yes" in text
    assert "cut at" in text and "keep-recent 20000" in text


def test_manual_cut_refused_at_tool_result_with_nearest_points(compacted: Path) -> None:
    result = cli("plan", str(compacted), "--cut", "a3ce7fa6", "--json")
    assert result.returncode == 1
    plan = json.loads(result.stdout)["plans"][0]
    assert plan["prepared"] is False and "tool result" in plan["reason"]
    assert [row["entryId"] for row in plan["nearestCutPoints"]] == ["48c31ac5", "9f5ca3d3"]
    accepted = cli("plan", str(compacted), "--cut", "48c31ac5", "--json")
    assert accepted.returncode == 0
    plan = json.loads(accepted.stdout)["plans"][0]
    assert plan["prepared"] is True and plan["firstKeptEntryId"] == "48c31ac5"


def test_unknown_id_is_a_usage_error(compacted: Path) -> None:
    result = cli("plan", str(compacted), "--leaf", "no-such-id")
    assert result.returncode == 2
    assert b"no leaf with id" in result.stderr


def test_context_json_matches_reference(compacted: Path) -> None:
    expected = golden("tree-compacted")["context"]
    result = cli("context", str(compacted), "--tokens", "pi", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [item["role"] for item in data["items"]] == expected["roles"]
    assert [item["entryId"] for item in data["items"]] == [i["entryId"] for i in expected["items"]]
    assert data["thinkingLevel"] == expected["thinkingLevel"]
    assert data["model"] == expected["model"]
    assert data["contextTokens"]["tokens"] == expected["estimateContextTokens"]["tokens"]


def test_context_at_other_leaf(branches: Path) -> None:
    other = golden("tree-branches")["otherLeaves"][0]
    result = cli("context", str(branches), "--at", other["leafId"], "--tokens", "pi", "--json")
    data = json.loads(result.stdout)
    assert [item["role"] for item in data["items"]] == other["context"]["roles"]


@pytest.mark.parametrize("scope", ["context", "branch"])
def test_serialize_is_byte_exact(compacted: Path, scope: str) -> None:
    expected = golden("tree-compacted")["serialized"][scope]["sha256"]
    result = cli("serialize", str(compacted), "--scope", scope)
    assert result.returncode == 0, result.stderr
    assert hashlib.sha256(result.stdout).hexdigest() == expected


def test_serialize_native_escapes_boundary_tags(tmp_path: Path) -> None:
    session = tmp_path / "inject.jsonl"
    shutil.copyfile(TESTS / "fixtures" / "bad" / "prompt-injection-in-tool-output.jsonl", session)
    result = cli("serialize", str(session), "--scope", "branch", "--format", "native")
    assert result.returncode == 0, result.stderr
    assert b"</conversation>" not in result.stdout.lower()


def test_navigate_dry_run_matches_reference(branches: Path) -> None:
    before = branches.read_bytes()
    for row in golden("tree-branches")["branchSummary"]:
        budgets = ",".join(str(p["tokenBudget"]) for p in row["prepared"])
        result = cli(
            "navigate", str(branches), "--to", row["targetId"], "--dry-run",
            "--budget", budgets, "--tokens", "pi", "--json",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        assert data["newLeafId"] == row["navigateNewLeafId"]
        assert data["commonAncestorId"] == row["commonAncestorId"]
        assert data["entryIds"] == row["entryIds"]["items"]
        for got, want in zip(data["prepared"], row["prepared"], strict=True):
            assert got["entryIds"] == want["entryIds"]["items"]
            assert got["totalTokens"] == want["totalTokens"]
            assert got["fileOps"]["modifiedFiles"] == want["fileOps"]["modifiedFiles"]
    assert branches.read_bytes() == before


def test_export_markdown_and_json(compacted: Path, tmp_path: Path) -> None:
    out = tmp_path / "context.md"
    result = cli("export", str(compacted), "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Context at `9f5ca3d3`")
    assert text.count("\n## ") == 33
    again = cli("export", str(compacted), "-o", str(out))
    assert again.returncode == 2  # never overwrites without --force
    result = cli("export", str(compacted), "--format", "json")
    data = json.loads(result.stdout)
    assert len(data["items"]) == 33 and data["items"][1]["message"]["role"] == "user"


def test_export_to_a_place_it_cannot_write_says_why(compacted: Path, tmp_path: Path) -> None:
    """`-o` into a missing directory or onto a directory printed a Python traceback (exit 1);
    a hard link of the session with `--force` was replaced (only its path and symbolic links
    were refused). Each is now a wrong input (exit 2) named on stderr, and nothing changes."""
    before = compacted.read_bytes()
    link = tmp_path / "hard-link.jsonl"
    os.link(compacted, link)
    (tmp_path / "adir").mkdir()
    cases = [
        ([str(tmp_path / "no-such-dir" / "x.md")], "cannot write", "No such file or directory"),
        ([str(tmp_path / "adir"), "--force"], "is a directory", ""),
        ([str(link), "--force"], "refusing to write over the session file", ""),
        ([str(compacted)], "refusing to write over the session file", ""),
    ]
    for output, said, why in cases:
        result = cli("export", str(compacted), "-o", *output)
        err = result.stderr.decode()
        assert result.returncode == 2 and "Traceback" not in err, err
        assert err.startswith("tui-compactor: ") and said in err and why in err, err
    assert compacted.read_bytes() == before == link.read_bytes()
    assert not (tmp_path / "no-such-dir").exists() and not any((tmp_path / "adir").iterdir())


@pytest.mark.parametrize("rules", ["pi", "omp"])
def test_export_builds_the_context_once(
    compacted: Path, tmp_path: Path, rules: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export --format json`` is ``context --json`` with each item's message, made from one
    build of the context (the rows and the messages come from the same items)."""
    from tui_compactor.cli import main
    from tui_compactor.engine import context as engine_context
    from tui_compactor.engine.context import build_context
    from tui_compactor.session.reader import load_session

    built: list[str] = []
    for name in ("_pi_shape", "_build_context_omp"):  # where each rule set builds a context
        build = getattr(engine_context, name)
        monkeypatch.setattr(
            engine_context, name, lambda *a, _b=build, _n=name: built.append(_n) or _b(*a)
        )
    out = tmp_path / "context.json"
    argv = ["export", str(compacted), "--rules", rules, "--format", "json", "-o", str(out)]
    assert main(argv) == 0
    assert len(built) == 1, built
    data = json.loads(out.read_text(encoding="utf-8"))
    session = load_session(compacted)
    expected = build_context(session, session.leaf, rules=rules).messages
    assert [row["message"] for row in data["items"]] == json.loads(json.dumps(expected))
    context = cli("context", str(compacted), "--rules", rules, "--json")
    rows = json.loads(context.stdout)["items"]
    assert [{k: v for k, v in row.items() if k != "message"} for row in data["items"]] == rows


def test_refused_file_is_reported(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = cli("plan", str(empty))
    assert result.returncode == 2
    assert b"cannot use" in result.stderr


def test_navigate_without_dry_run_only_appends(compacted: Path) -> None:
    """The move goes through the summaries layer and the writer: one line appended, nothing else
    changed, and the new leaf is where the rule says."""
    before = compacted.read_bytes()
    unconfirmed = cli("navigate", str(compacted), "--to", "4068adac")
    assert unconfirmed.returncode == 1 and b"not confirmed" in unconfirmed.stderr
    assert compacted.read_bytes() == before
    result = cli("navigate", str(compacted), "--to", "4068adac", "--yes", "--quiet-window", "0")
    assert result.returncode == 0, result.stderr
    after = compacted.read_bytes()
    assert after.startswith(before)
    added = after[len(before) :].decode("utf-8").splitlines()
    assert len(added) == 1
    record = json.loads(added[0])
    assert record["parentId"] == "4068adac"
    plan = cli("context", str(compacted), "--json")
    assert json.loads(plan.stdout)["leafId"] == record["id"]


def test_navigate_with_offline_branch_summary(compacted: Path) -> None:
    """--summarize streams the branch summary to stderr and appends it at the new leaf, with
    the custom instructions recorded nowhere but in the prompt."""
    before = compacted.read_bytes()
    result = cli(
        "navigate", str(compacted), "--to", "4068adac", "--summarize", "--provider", "offline",
        "--instructions", "focus on the parser", "--yes", "--quiet-window", "0",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert b"branch summary" in result.stderr
    after = compacted.read_bytes()
    assert after.startswith(before)
    record = json.loads(after[len(before) :].decode("utf-8"))
    assert record["type"] == "branch_summary"
    assert record["parentId"] == record["fromId"] == "4068adac"
    assert record["summary"].strip()


@pytest.mark.parametrize(
    ("rules", "window", "threshold", "crossed"),
    [("pi", 32000, 15616, True), ("omp", 200000, 170000, False), ("omp", 16384, 13927, True)],
)
def test_context_threshold_per_rules(
    compacted: Path, rules: str, window: int, threshold: int, crossed: bool
) -> None:
    result = cli(
        "context", str(compacted), "--json", "--tokens", "pi",
        "--rules", rules, "--window", str(window),
    )  # fmt: skip
    data = json.loads(result.stdout)["threshold"]
    assert data["thresholdTokens"] == threshold
    assert data["shouldCompact"] is crossed


SAMPLE = ROOT / "tui_compactor" / "data" / "sample-session.jsonl"


@pytest.mark.parametrize(
    ("command", "primary", "alias"),
    [
        ("context", "--at", "--leaf"),
        ("serialize", "--at", "--leaf"),
        ("export", "--at", "--leaf"),
        ("plan", "--leaf", "--at"),
        ("navigate", "--leaf", "--at"),
    ],
)
def test_node_option_is_shown_in_help_under_both_names(
    command: str, primary: str, alias: str
) -> None:
    result = cli(command, "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.decode().split())
    assert f"[{primary} ID]" in text  # the usage line names the command's own spelling
    assert f"{primary} ID, {alias} ID" in text  # and the option list shows both


def test_at_and_leaf_are_the_same_switch(branches: Path) -> None:
    other = golden("tree-branches")["otherLeaves"][0]["leafId"]
    for command in ("context", "plan"):
        ids = {
            json.loads(cli(command, str(branches), flag, other, "--json").stdout)["leafId"]
            for flag in ("--at", "--leaf")
        }
        assert ids == {other}, command


def test_navigate_dry_run_text_lists_the_selected_entries(branches: Path) -> None:
    row = golden("tree-branches")["branchSummary"][0]
    args = (
        "navigate",
        str(branches),
        "--to",
        row["targetId"],
        "--dry-run",
        "--budget",
        "0,40",
        "--tokens",
        "pi",
    )
    data = json.loads(cli(*args, "--json").stdout)
    text = cli(*args).stdout.decode()
    blocks = text.split("\n  budget ")[1:]
    assert len(blocks) == len(data["prepared"]) == 2
    for block, prepared in zip(blocks, data["prepared"], strict=True):
        ids = prepared["entryIds"]
        listed = [
            line.split()[0]
            for line in block.splitlines()[1:]
            if line.startswith("    ") and not line.strip().startswith(("…", "(", "files"))
        ]
        if len(ids) <= 7:
            assert listed == ids
        else:
            assert listed == ids[:3] + ids[-3:]
            assert f"    … {len(ids) - 6} more" in block
    assert any(p["entryIds"] for p in data["prepared"])


@pytest.mark.parametrize("command", ["plan", "context", "navigate", "compact"])
def test_window_must_be_positive(compacted: Path, command: str) -> None:
    extra = ["--to", "4068adac", "--dry-run"] if command in ("navigate", "compact") else []
    if command == "compact":
        extra = ["--dry-run", "--provider", "offline"]
    result = cli(command, str(compacted), *extra, "--window", "0")
    assert result.returncode == 2
    assert b"--window: must be greater than 0" in result.stderr


@pytest.mark.parametrize(
    ("rules", "reserve_used", "threshold"), [("pi", 999999999, 0), ("omp", 150, 850)]
)
def test_reserve_not_below_window_warns_and_clamps(
    compacted: Path, rules: str, reserve_used: int, threshold: int
) -> None:
    result = cli(
        "plan",
        str(compacted),
        "--window",
        "1000",
        "--reserve",
        "999999999",
        "--rules",
        rules,
        "--json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)["threshold"]
    assert data["thresholdTokens"] == threshold >= 0
    assert data["budgetReserve"] == reserve_used
    assert b"warning: reserve 999999999 is not smaller than the context window 1000" in (
        result.stderr
    )
    fine = cli("plan", str(compacted), "--window", "200000", "--rules", rules)
    assert b"warning: reserve" not in fine.stderr


def test_cut_that_starts_a_turn_is_explained_not_called_a_prefix(tmp_path: Path) -> None:
    session = tmp_path / "sample.jsonl"
    shutil.copyfile(SAMPLE, session)
    plan = json.loads(cli("plan", str(session), "--json").stdout)["plans"][0]
    # The JSON stays pi-exact: a cut at a bash execution is a "split turn" starting at the cut.
    assert plan["isSplitTurn"] is True
    assert plan["turnStartIndex"] == plan["firstKeptEntryIndex"]
    assert plan["turnPrefixMessages"]["count"] == 0
    text = cli("plan", str(session)).stdout.decode()
    assert "cut at a bash execution that starts a turn: no turn prefix to summarize" in text
    assert "turn prefix  0 messages" not in text
    assert f"turn starts at branch index {plan['firstKeptEntryIndex']}" not in text


def test_real_split_turn_note_names_the_turn_start(tmp_path: Path) -> None:
    session = tmp_path / "sample.jsonl"
    shutil.copyfile(SAMPLE, session)
    plans = json.loads(cli("plan", str(session), "--keep-recent", "30000", "--json").stdout)[
        "plans"
    ]
    plan = plans[0]
    assert plan["isSplitTurn"] and plan["turnStartIndex"] < plan["firstKeptEntryIndex"]
    text = cli("plan", str(session), "--keep-recent", "30000").stdout.decode()
    count = plan["turnPrefixMessages"]["count"]
    assert (
        f"split turn: it starts at branch index {plan['turnStartIndex']} (user message); "
        f"its {count} messages before the cut are summarized as the turn prefix"
    ) in text
    assert f"turn prefix  {count} messages" in text


def test_a_one_message_turn_prefix_is_named_in_the_singular(tmp_path: Path) -> None:
    """A turn cut right after its user message: ``its 1 message before the cut is summarized``."""
    words = " ".join(f"word{n}" for n in range(3000))
    records: list[dict[str, object]] = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-12T09:00:00.000Z",
         "cwd": "/tmp"},
    ]  # fmt: skip
    parent = None
    for number, role in enumerate(["user", "assistant", "user", "assistant"]):
        message: dict[str, object] = {"role": role, "timestamp": 1768208400000}
        message["content"] = [{"type": "text", "text": f"{role} {number} {words}"}]
        records.append({"type": "message", "id": f"m{number}", "parentId": parent,
                        "timestamp": "2026-01-12T09:00:00.000Z", "message": message})  # fmt: skip
        parent = f"m{number}"
    session = tmp_path / "one-prefix.jsonl"
    session.write_text("".join(json.dumps(record) + "\n" for record in records))
    result = cli("plan", str(session), "--keep-recent", "100", "--tokens", "pi")
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert "its 1 message before the cut is summarized as the turn prefix" in text, text
