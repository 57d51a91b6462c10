"""What a user runs under ``--rules omp``, held to the shipped oh-my-pi goldens.

``test_omp_oracle.py`` compares the engine with every golden value; this module checks that
the commands print those same answers (one place: the command shows what the engine computes)
on the six shipped goldens, in-process and without Bun:

* ``inspect --json --tokens bytes``: the tree (parents, depths, labels, roots, leaves, the
  leaf) and each message's tokens;
* ``plan --json`` at the oracle's eight keep-recent values: the cut, the region, the
  calibration, the three message lists, ``tokensBefore``, the previous summary, the file
  operations; the same at a manual ``--cut`` on oh-my-pi's cut; along the keep-recent sweep;
  at the other leaves (``--leaf``); and with ``--window`` the thresholds of ``misc.windows``;
* ``context --json --at`` every node the golden records a context for: the entries, what is
  sent for each (roles, text hashes and lengths, images, tool-call ids, where the summary sits
  in its wrapper), the context tokens (usage anchor, trailing and local estimate), models,
  thinking level and mode;
* ``context --breakdown --json``: its parts add up to oh-my-pi's local count at every
  recorded node;
* ``navigate --dry-run --json`` to every navigation target at the six budgets: the new leaf,
  the common ancestor, the collected entries and, per budget, the kept entries, their tokens
  and file operations;
* ``compact --dry-run --json`` (offline summarizer) where oh-my-pi prepares a compaction: the
  summary ends with oh-my-pi's ``<files>`` block (``formatFileOperations``), and
  ``--show-requests`` sends exactly the messages oh-my-pi summarizes.

Ids are compared by entry index (v1 files get fresh ids on every load). Which test holds
which golden field: ``docs/oracles.md``.
"""

from __future__ import annotations

import json
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.engine.omp_golden import sha
from tui_compactor.cli import main
from tui_compactor.engine.jstext import utf16_len
from tui_compactor.session.reader import load_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GOLDEN = FIXTURES / "oracle-omp" / "golden"
NAMES = sorted(path.stem for path in GOLDEN.glob("*.json"))

PLAN_FIELDS = (
    "keepRecentTokens",
    "effectiveKeepRecentTokens",
    "calibration",
    "prepared",
    "boundaryStart",
    "boundaryEnd",
    "previousCompactionIndex",
    "resetBoundaryIndex",
    "regionMessageCount",
    "firstKeptEntryId",
    "firstKeptEntryIndex",
    "firstKeptEntryEntriesIndex",
    "turnStartIndex",
    "turnStartEntryId",
    "isSplitTurn",
    "tokensBefore",
    "previousPreserveDataKeys",
    "fileOps",
)
"""``plan --json`` fields printed under the golden's own names (prepared rows)."""
LIST_FIELDS = ("count", "firstEntryId", "lastEntryId", "tokens", "entryIds", "entryIndices")
"""Fields of ``messagesToSummarize`` / ``turnPrefixMessages`` / ``recentMessages``."""
SWEEP_ROWS = 100
"""About how many of a golden's keep-recent sweep rows ``plan`` is run at (one process)."""
CONTEXT_TOKEN_FIELDS = (
    "tokens",
    "usageTokens",
    "trailingTokens",
    "lastUsageIndex",
    "localEstimate",
)


def _session_path(name: str) -> Path:
    if name.startswith("pi-"):
        return FIXTURES / "oracle" / "sessions" / f"{name[3:]}.jsonl"
    return FIXTURES / "oracle-omp" / "sessions" / f"{name}.jsonl"


@cache
def _golden(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


class Ids:
    """Ids as entry indices on both sides (``#N``), so v1 files compare too."""

    def __init__(self, name: str) -> None:
        session = load_session(_session_path(name))
        self.session = session
        self.ours = {entry.id: entry.index for entry in session.entries}
        self.theirs = {row["id"]: row["index"] for row in _golden(name)["entries"]}

    def norm(self, value: Any, ids: dict[str, int]) -> Any:
        if isinstance(value, dict):
            if set(value) == {"items", "total", "truncated"}:
                return self.norm(value["items"], ids)
            return {key: self.norm(item, ids) for key, item in value.items()}
        if isinstance(value, list):
            return [self.norm(item, ids) for item in value]
        if isinstance(value, str) and value in ids:
            return f"#{ids[value]}"
        return value

    def same(self, theirs: Any, ours: Any) -> bool:
        return self.norm(theirs, self.theirs) == self.norm(ours, self.ours)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(list(argv)) == 0, capsys.readouterr().err[-2000:]
    out = capsys.readouterr().out
    return json.loads(out[out.index("{") :])


def _plan_differences(ids: Ids, theirs: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Where one ``plan --json`` row differs from the golden's cut row."""
    where = f"K={theirs['keepRecentTokens']}"
    fields = PLAN_FIELDS if theirs["prepared"] else PLAN_FIELDS[:9]
    differ = [
        f"{where} {field}: {ours.get(field, '<missing>')!r} != {theirs[field]!r}"
        for field in fields
        if field not in ours or not ids.same(theirs[field], ours[field])
    ]
    if not theirs["prepared"]:
        return differ
    if ours["previousSummary"] is not theirs["previousSummary"]["present"]:
        differ.append(f"{where} previousSummary")
    for part in ("messagesToSummarize", "turnPrefixMessages", "recentMessages"):
        for field in LIST_FIELDS:
            if not ids.same(theirs[part][field], ours[part].get(field, "<missing>")):
                differ.append(f"{where} {part}.{field}")
    return differ


@pytest.mark.parametrize("name", NAMES)
def test_inspect_prints_oh_my_pis_tree_and_counts(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``inspect --json --tokens bytes`` (oh-my-pi's counter): every entry's place in the tree,
    its message's tokens and label, the leaf, roots and leaves, as oh-my-pi loads them."""
    golden, ids = _golden(name), Ids(name)
    data = _json(capsys, "inspect", str(_session_path(name)), "--json", "--tokens", "bytes")
    fields = ("index", "id", "parentId", "type", "role", "depth", "label")
    differ = [
        f"#{theirs['index']} {field}: {ours.get(field)!r} != {theirs[field]!r}"
        for ours, theirs in zip(data["entries"], golden["entries"], strict=True)
        for field in fields
        if not ids.same(theirs[field], ours.get(field, "<missing>"))
    ]
    differ += [
        f"#{theirs['index']} tokens: {ours['tokens']} != {theirs['tokens']}"
        for ours, theirs in zip(data["entries"], golden["entries"], strict=True)
        if theirs["type"] == "message" and ours["tokens"] != theirs["tokens"]
    ]
    differ += [
        field for field in ("leafId", "roots", "leaves") if not ids.same(golden[field], data[field])
    ]
    assert not differ, "\n".join(differ[:30])


@pytest.mark.parametrize("name", NAMES)
def test_plan_prints_oh_my_pis_cut_rows(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    golden, ids = _golden(name), Ids(name)
    keeps = ",".join(str(k) for k in golden["oracle"]["keepRecentTokens"])
    data = _json(capsys, "plan", str(_session_path(name)), "--rules", "omp", "--json",
                 "--keep-recent", keeps)  # fmt: skip
    assert data["tokens"] == "bytes" and ids.same(golden["leafId"], data["leafId"])
    differ: list[str] = []
    for ours, theirs in zip(data["plans"], golden["cutPoints"], strict=True):
        differ += _plan_differences(ids, theirs, ours)
    assert not differ, "\n".join(differ[:30])


@pytest.mark.parametrize("name", NAMES)
def test_a_manual_cut_at_oh_my_pis_cut_prepares_what_oh_my_pi_prepares(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``plan --cut`` (ours: oh-my-pi has no manual cut) at the entry oh-my-pi cuts at gives
    oh-my-pi's own preparation: the manual path decides usage, calibration and the region
    as the automatic one does."""
    golden, ids = _golden(name), Ids(name)
    differ: list[str] = []
    for theirs in (row for row in golden["cutPoints"] if row["prepared"]):
        ours = _json(capsys, "plan", str(_session_path(name)), "--rules", "omp", "--json",
                     "--keep-recent", str(theirs["keepRecentTokens"]),
                     "--cut", f"#{theirs['firstKeptEntryEntriesIndex']}")["plans"][0]  # fmt: skip
        assert ours["manualCut"]
        differ += _plan_differences(ids, theirs, ours)
    assert not differ, "\n".join(differ[:30])


@pytest.mark.parametrize("name", NAMES)
def test_plan_follows_oh_my_pis_keep_recent_sweep(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``plan --keep-recent`` at every keep-recent value of the golden's sweep (where the
    answer can change; at most about ``SWEEP_ROWS`` of them, evenly: the engine is held to
    every row by ``test_omp_oracle``): the cut, the split turn and the count summarized, row by
    row (for a row oh-my-pi does not prepare: that it does not, at that effective
    keep-recent)."""
    sweep = _golden(name)["cutPointSweep"]
    rows = sweep["rows"][:: 1 + len(sweep["rows"]) // SWEEP_ROWS]
    keeps = ",".join(str(row[0]) for row in rows)
    data = _json(capsys, "plan", str(_session_path(name)), "--rules", "omp", "--json",
                 "--keep-recent", keeps)  # fmt: skip
    differ = []
    for ours, row in zip(data["plans"], rows, strict=True):
        got = [ours["keepRecentTokens"], ours["effectiveKeepRecentTokens"], int(ours["prepared"])]
        if ours["prepared"]:
            got += [
                ours["firstKeptEntryIndex"],
                ours["turnStartIndex"],
                int(ours["isSplitTurn"]),
                ours["messagesToSummarize"]["count"],
            ]
        else:  # the plan prints no cut it would not make (the golden has the raw walk's)
            row = row[:3]
        if got != row:
            differ.append(f"{got} != {row}")
    assert not differ, "\n".join([str(sweep["columns"]), *differ[:30]])


@pytest.mark.parametrize("name", NAMES)
def test_plan_at_other_leaves_prints_oh_my_pis_cut_rows(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, ids = _golden(name), Ids(name)
    keeps = ",".join(str(k) for k in golden["oracle"]["keepRecentTokens"])
    differ: list[str] = []
    for leaf in golden["otherLeaves"]:
        data = _json(capsys, "plan", str(_session_path(name)), "--rules", "omp", "--json",
                     "--keep-recent", keeps, "--leaf", f"#{leaf['leafIndex']}")  # fmt: skip
        for ours, theirs in zip(data["plans"], leaf["cutPoints"], strict=True):
            where = f"leaf #{leaf['leafIndex']} K={theirs['keepRecentTokens']}"
            if ours["branchLength"] != leaf["branchLength"]:
                differ.append(f"{where}: branchLength")
            fields = ["effectiveKeepRecentTokens", "prepared", "boundaryStart"]
            if theirs["prepared"]:
                fields += ["firstKeptEntryId", "firstKeptEntryIndex", "turnStartIndex"]
                fields += ["isSplitTurn", "tokensBefore", "previousSummary"]
                got = {
                    "messagesToSummarizeIds": ours["messagesToSummarize"]["entryIds"],
                    "turnPrefixMessagesIds": ours["turnPrefixMessages"]["entryIds"],
                    "readFiles": ours["fileOps"]["readFiles"],
                    "modifiedFiles": ours["fileOps"]["modifiedFiles"],
                }
                differ += [
                    f"{where}: {key}"
                    for key, value in got.items()
                    if not ids.same(theirs[key], value)
                ]
            differ += [
                f"{where}: {field} {ours.get(field)!r} != {theirs[field]!r}"
                for field in fields
                if not ids.same(theirs[field], ours.get(field, "<missing>"))
            ]
    assert not differ, "\n".join(differ[:30])


@pytest.mark.parametrize("name", NAMES)
def test_plan_thresholds_are_oh_my_pis_per_window(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = _golden(name)
    for theirs in golden["misc"]["windows"]:
        data = _json(capsys, "plan", str(_session_path(name)), "--rules", "omp", "--json",
                     "--window", str(theirs["window"]))  # fmt: skip
        ours = data["threshold"]
        assert (
            ours["window"],
            ours["effectiveReserve"],
            ours["budgetReserve"],
            ours["thresholdTokens"],
            ours["contextTokens"],
            ours["shouldCompact"],
        ) == (
            theirs["window"],
            theirs["effectiveReserveTokens"],
            theirs["budgetReserveTokens"],
            theirs["thresholdTokens"],
            theirs["contextTokens"],
            theirs["shouldCompact"],
        )
        assert data["contextTokens"] == golden["contexts"][0]["contextTokens"]


def _llm_view(message: dict[str, Any]) -> dict[str, Any]:
    """The golden's view of one sent message, from what ``context --json`` prints."""
    text = message["text"]
    view = {
        "role": message["role"],
        "textSha256": sha(text),
        "textLength": utf16_len(text),
        "utf8Bytes": len(text.encode("utf-8", "surrogatepass")),
        "images": message.get("images", 0),
    }
    if message["role"] == "assistant":
        view["toolCallIds"] = message["toolCallIds"]
    return view


def _without_offset(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The golden's views minus ``summaryOffset`` (where the summary sits in its wrapper: given
    by the text, whose hash is compared)."""
    return [{key: value for key, value in view.items() if key != "summaryOffset"} for view in views]


@pytest.mark.parametrize("name", NAMES)
def test_context_prints_what_oh_my_pi_builds_at_every_recorded_node(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, ids = _golden(name), Ids(name)
    differ: list[str] = []
    for theirs in golden["contexts"]:
        at = f"#{theirs['leafIndex']}"
        ours = _json(capsys, "context", str(_session_path(name)), "--rules", "omp", "--json",
                     "--at", at)  # fmt: skip
        where = f"{theirs['why']} {at}"
        items = ours["items"]
        if [item["entryIndex"] for item in items] != theirs["entryIndices"]:
            differ.append(f"{where}: entries")
            continue
        for mine, item in zip(items, theirs["items"], strict=True):
            got = (mine["role"], mine["kind"], mine["tokens"], [_llm_view(m) for m in mine["llm"]])
            if got != (item["role"], item["kind"], item["tokens"], _without_offset(item["llm"])):
                differ.append(f"{where}: item #{item['entryIndex']}: {got} != {item}")
        tokens = {field: ours["contextTokens"][field] for field in CONTEXT_TOKEN_FIELDS}
        if tokens != theirs["contextTokens"]:
            differ.append(f"{where}: contextTokens {tokens} != {theirs['contextTokens']}")
        for field in ("llmMessageCount", "thinkingLevel", "models", "mode"):
            if not ids.same(theirs[field], ours.get(field, "<missing>")):
                differ.append(f"{where}: {field} {ours.get(field)!r} != {theirs[field]!r}")
    assert not differ, "\n".join(differ[:30])


@pytest.mark.parametrize("name", NAMES)
def test_context_breakdown_adds_up_to_oh_my_pis_estimates(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``context --breakdown``: its parts add up to oh-my-pi's local count of what is sent
    (``countMessages``, rewritten turns counted as sent) and its context size is
    ``estimateTranscriptTokens``, at every recorded node."""
    differ: list[str] = []
    for theirs in _golden(name)["contexts"]:
        ours = _json(capsys, "context", str(_session_path(name)), "--rules", "omp", "--json",
                     "--breakdown", "--at", f"#{theirs['leafIndex']}")  # fmt: skip
        tokens = theirs["contextTokens"]
        usage = tokens["usageTokens"] if tokens["lastUsageIndex"] is not None else None
        got = (ours["total"], ours["contextTokens"], ours["usageTokens"])
        if got != (tokens["localEstimate"], tokens["tokens"], usage):
            differ.append(f"#{theirs['leafIndex']}: {got} != {tokens}")
    assert not differ, "\n".join(differ[:30])


BRANCH_ROW_FIELDS = ("tokenBudget", "messageCount", "totalTokens", "entryIds", "fileOps")
"""What ``navigate --dry-run`` shows per budget and oh-my-pi's golden holds, field by field."""


@pytest.mark.parametrize("name", NAMES)
def test_navigate_dry_run_prints_oh_my_pis_branch_summary_preparation(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, ids = _golden(name), Ids(name)
    budgets = ",".join(str(budget) for budget in golden["oracle"]["branchBudgets"])
    differ: list[str] = []
    for theirs in golden["branchSummary"]:
        ours = _json(capsys, "navigate", str(_session_path(name)), "--rules", "omp",
                     "--dry-run", "--json", "--to", f"#{theirs['targetIndex']}",
                     "--budget", budgets)  # fmt: skip
        where = f"{theirs['why']} #{theirs['targetIndex']}"
        pairs = [
            ("newLeafIndex", "navigateNewLeafIndex"),
            ("commonAncestorIndex", "commonAncestorIndex"),
            ("entryCount", "entryCount"),
            ("entryIds", "entryIds"),
        ]
        for mine, their in pairs:
            if not ids.same(theirs[their], ours.get(mine, "<missing>")):
                differ.append(f"{where}: {mine} {ours.get(mine)!r} != {theirs[their]!r}")
        for mine_row, row in zip(ours["prepared"], theirs["prepared"], strict=True):
            for field in BRANCH_ROW_FIELDS:
                if not ids.same(row[field], mine_row.get(field, "<missing>")):
                    differ.append(f"{where} budget {row['tokenBudget']}: {field}")
    assert not differ, "\n".join(differ[:30])


@pytest.mark.parametrize("name", NAMES)
def test_navigate_default_budget_is_oh_my_pis(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without ``--budget`` the branch summary reads what oh-my-pi's ``generateBranchSummary``
    reads by default: window - 16384 (the golden's 111616 row for a 128000 window)."""
    golden, ids = _golden(name), Ids(name)
    theirs = golden["branchSummary"][0]
    row = next(row for row in theirs["prepared"] if row["tokenBudget"] == 111616)
    ours = _json(capsys, "navigate", str(_session_path(name)), "--rules", "omp", "--dry-run",
                 "--json", "--to", f"#{theirs['targetIndex']}", "--window", "128000")  # fmt: skip
    (mine,) = ours["prepared"]
    for field in BRANCH_ROW_FIELDS:
        assert ids.same(row[field], mine[field]), field


@pytest.mark.parametrize("name", [name for name in NAMES if name != "pi-before-compaction"])
def test_navigate_summarize_writes_the_branch_summary_oh_my_pi_would(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``navigate --summarize`` (offline summarizer) appends what oh-my-pi's ``navigateTree``
    appends after ``generateBranchSummary`` at its default budget: a ``branch_summary`` at the
    new leaf (``fromId`` the same, or ``"root"``), ``details`` = the file lists of the
    selection, the summary ending with their ``<files>`` block. (Not the v1 file: read-only.)"""
    golden, ids = _golden(name), Ids(name)
    path = tmp_path / _session_path(name).name
    shutil.copyfile(_session_path(name), path)
    theirs = next(
        target
        for target in golden["branchSummary"]
        if any(row["messageCount"] for row in target["prepared"])
    )
    row = next(row for row in theirs["prepared"] if row["tokenBudget"] == 111616)
    to = f"#{theirs['targetIndex']}"
    assert main(["navigate", str(path), "--rules", "omp", "--to", to, "--summarize", "--yes",
                 "--provider", "offline", "--window", "128000", "--quiet-window", "0",
                 "--ignore-agent"]) == 0, capsys.readouterr().err  # fmt: skip
    written = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    new_leaf = theirs["navigateNewLeafId"]
    assert written["type"] == "branch_summary"
    assert ids.same(new_leaf, written["parentId"])
    assert ids.same(new_leaf or "root", written["fromId"])
    lists = {key: row["fileOps"][key] for key in ("readFiles", "modifiedFiles")}
    assert written["details"] == lists
    assert ("<files>" in written["summary"]) == any(lists.values())
    assert written["summary"].rstrip().endswith("</files>") == any(lists.values())


def _conversation(prompt: str) -> str:
    found = re.search(r"<conversation>\n(.*?)\n</conversation>", prompt, re.S)
    assert found, prompt[:300]
    return found.group(1)


@pytest.mark.parametrize("name", NAMES)
def test_compact_dry_run_runs_what_oh_my_pi_prepares(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The offline summary ends with oh-my-pi's ``<files>`` block, and the history and
    turn-prefix requests carry exactly the messages oh-my-pi summarizes (our transcript of
    them: the prompts are our own)."""
    from tui_compactor.engine.messages import message_from_entry
    from tui_compactor.summarize.runner import serialize_messages

    golden, ids = _golden(name), Ids(name)
    session, path = ids.session, str(_session_path(name))
    rows = [row for row in golden["cutPoints"] if row["prepared"]]
    assert rows
    for row in (rows[0], rows[-1]):
        keep = str(row["keepRecentTokens"])
        common = ("compact", path, "--rules", "omp", "--dry-run", "--json", "--provider",
                  "offline", "--keep-recent", keep)  # fmt: skip
        done = _json(capsys, *common)
        assert ids.same(row["firstKeptEntryId"], done["plan"]["firstKeptEntryId"])
        summary = done["summary"] if "summary" in done else done["summaries"]["summary"]
        files = row["formatFileOperations"]["text"]
        assert summary.endswith(files) if files else "<files>" not in summary, keep
        requests = _json(capsys, *common, "--show-requests")["requests"]
        for part, field in (
            ("history", "messagesToSummarize"),
            ("turn_prefix", "turnPrefixMessages"),
        ):
            indices = row[field]["entryIndices"]["items"]
            sent = [request for request in requests if request["part"] == part]
            if not indices:
                assert not sent, (keep, part)
                continue
            messages = [message_from_entry(session.entries[index]) for index in indices]
            assert _conversation(sent[0]["prompt"]) == serialize_messages(messages), (keep, part)


def test_the_plan_comparison_notices_a_wrong_value(capsys: pytest.CaptureFixture[str]) -> None:
    """Not vacuous: a changed golden value in a cut row is reported by field."""
    golden, ids = _golden("omp-basic"), Ids("omp-basic")
    row = json.loads(json.dumps(golden["cutPoints"][3]))
    row["firstKeptEntryIndex"] += 1
    row["messagesToSummarize"]["entryIndices"]["items"][0] += 1
    row["previousSummary"]["present"] = not row["previousSummary"]["present"]
    data = _json(capsys, "plan", str(_session_path("omp-basic")), "--rules", "omp", "--json",
                 "--keep-recent", str(row["keepRecentTokens"]))  # fmt: skip
    differ = _plan_differences(ids, row, data["plans"][0])
    assert [line.split(":")[0] for line in differ] == [
        "K=2000 firstKeptEntryIndex",
        "K=2000 previousSummary",
        "K=2000 messagesToSummarize.entryIndices",
    ]
