"""The offline summarizer reports outcomes, resolves fixed failures and honours focus terms."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.engine.plan import prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.summarize.base import SummaryRequest
from tui_compactor.summarize.compaction import CompactionJob, PartStarted
from tui_compactor.summarize.offline import OfflineSummarizer, offline_text, parse_sections
from tui_compactor.summarize.outcomes import command_core, command_kind

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def call(call_id: str, name: str, text: str = "", **arguments: Any) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
    return {"role": "assistant", "content": content}


def result(call_id: str, text: str, error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "x",
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def summarize(messages: list[dict[str, Any]], kind: str = "summary", **extra: Any) -> str:
    return offline_text(
        SummaryRequest(
            kind=kind,
            system="",
            prompt="",  # type: ignore[arg-type]
            max_tokens=extra.pop("max_tokens", 4000),
            messages=messages,
            **extra,
        )
    )


FIXED = [
    user("Fix the crash in src/app/loader.py when the path is None."),
    call("r1", "read", path="src/app/loader.py"),
    result("r1", "def load(path):\n    return open(path).read()\n"),
    call(
        "e1",
        "edit",
        "The crash comes from open(None); a guard fixes it.",
        path="src/app/loader.py",
        oldText="def load(path):",
        newText="def load(path=None):",
    ),
    result("e1", "Successfully replaced text in src/app/loader.py."),
    call("t1", "bash", command="cd /repo && pytest -q tests/test_loader.py 2>&1 | tail -5"),
    result("t1", "F.\nE   TypeError: expected str, got NoneType\n1 failed, 1 passed in 0.1s", True),
    call(
        "e2",
        "edit",
        path="src/app/loader.py",
        oldText="    return open(path).read()",
        newText="    return '' if path is None else open(path).read()",
    ),
    result("e2", "Successfully replaced text in src/app/loader.py."),
    call("t2", "bash", command="cd /repo && pytest -q"),
    result("t2", "..........\n10 passed in 0.3s"),
    call("g1", "bash", command='git commit -am "Guard load() against a None path"'),
    result("g1", "[main 1a2b3c4] Guard load() against a None path"),
    call("l1", "bash", command="grep -rn load src/"),
    result("l1", "src/app/loader.py:1:def load(path=None):"),
]


def test_done_lists_what_changed_and_which_check_passes_not_each_tool_call() -> None:
    sections = parse_sections(summarize(FIXED))
    done = sections["Done"]
    assert done[0] == (
        "- [x] `src/app/loader.py`: 2 edits "
        "(`return open(path).read()` → "
        "`return '' if path is None else open(path).read()`; "
        "defines `load`) — The crash comes from open(None); a guard fixes it."
    )
    assert (
        "- [x] `pytest -q` passes: 10 passed in 0.3s (after 1 failed run; first of "
        "`pytest -q tests/test_loader.py`: E TypeError: expected str, got NoneType) — ran as "
        "`cd /repo && pytest -q`"
    ) in done
    assert "- [x] Committed: “Guard load() against a None path”" in done
    # No log of tool calls: no reads, no searches, no raw tool results.
    assert not any(line.startswith("- [x] read") or "grep" in line for line in done)
    assert not any("Successfully replaced" in line for line in done)
    assert "Looked around: 1 file read, 1 search or listing (not listed)." in " ".join(
        sections["Critical Context"]
    )


def test_a_failure_a_later_run_fixed_is_not_blocked() -> None:
    text = summarize(FIXED)
    sections = parse_sections(text)
    assert "Blocked" not in sections
    assert not any("Fix:" in line for line in sections["Next Steps"])
    assert any(
        line.startswith(
            "- Failed, then fixed: `pytest -q tests/test_loader.py`: "
            "E TypeError: expected str, got NoneType"
        )
        for line in sections["Additional Notes"]
    )


def test_a_failure_nothing_fixed_stays_blocked_and_is_the_next_step() -> None:
    messages = [
        *FIXED[:7],
        call("n1", "bash", command="npm run lint"),  # another check passing fixes nothing
        result("n1", "0 problems"),
    ]
    sections = parse_sections(summarize(messages))
    assert sections["Blocked"] == [
        "- `pytest -q tests/test_loader.py` still fails: E TypeError: expected str, got NoneType"
    ]
    assert "Fix: `pytest -q tests/test_loader.py` (under Blocked)" in sections["Next Steps"][0]


def test_an_update_drops_a_previous_blocker_the_new_part_fixed() -> None:
    previous = (
        "## Goal\nShip it\n\n### Blocked\n"
        "- `pytest -q tests/test_loader.py` still fails: TypeError\n"
        "- `make docs` still fails: missing sphinx\n"
    )
    text = summarize(
        [user("go on"), call("t", "bash", command="pytest -q"), result("t", "12 passed in 1.0s")],
        previous_summary=previous,
    )
    blocked = parse_sections(text)["Blocked"]
    assert blocked == ["- `make docs` still fails: missing sphinx"]


def test_short_summary_says_what_changed_and_how_checks_stand_not_the_request() -> None:
    short = summarize(FIXED, kind="short")
    assert "Fix the crash" not in short and "worked on" not in short
    assert short.startswith("Changed 1 file: loader.py. `pytest -q` passes.")
    failing = summarize(FIXED[:7], kind="short")
    assert "`pytest -q tests/test_loader.py` still fails: E TypeError" in failing


def test_focus_on_a_number_keeps_the_lines_that_carry_it() -> None:
    listing = "\n".join(f"{i}\tvalue_{i} = {i * 3}" for i in range(1, 60))
    messages = [
        user("Tune the cache."),
        call("r", "read", path="cache.py"),
        result("r", listing),
        say("Read it."),
    ]
    text = summarize(messages, focus="focus on 37")
    critical = parse_sections(text)["Critical Context"]
    assert "- Focus requested: focus on 37" in critical
    assert any("only matched" in line and "“37”" in line for line in critical)
    assert "- “37” in result of read `cache.py`: 37\tvalue_37 = 111" in critical
    # 37 as a whole number only: not 137, not 370.
    assert not any("value_12 = 36" in line for line in critical)


def test_focus_items_survive_the_budget_and_come_first() -> None:
    messages = [user("Refactor everything.")]
    for i in range(120):
        messages += [
            call(f"e{i}", "edit", path=f"src/module_{i:03d}.py", oldText="a", newText="b"),
            result(f"e{i}", "ok"),
        ]
    plain = summarize(messages, max_tokens=700)
    assert "module_002.py" not in plain  # old items are cut to fit
    focused = summarize(messages, max_tokens=700, focus="Keep src/module_002.py")
    done = [line for line in parse_sections(focused)["Done"] if line.startswith("- [x]")]
    assert done[0].startswith("- [x] `src/module_002.py`: 1 edit")


def test_an_instruction_with_nothing_to_match_says_it_cannot_be_followed_offline() -> None:
    text = summarize(FIXED, focus="?!")
    assert "cannot be followed offline" in text and "model profile" in text
    missing = summarize(FIXED, focus="mention the websocket reconnect")
    assert "- Not found in this part of the session: “websocket”, “reconnect”" in missing


def _plan(path: Path, keep_recent: int) -> tuple[Any, Any, CompactionSettings]:
    session = load_session(path)
    settings = CompactionSettings(keep_recent_tokens=keep_recent)
    return session, prepare_compaction(session, None, settings, get_counter("cl100k")), settings


def test_compaction_of_a_fixture_with_focus_on_37_keeps_37() -> None:
    """Both parts of a split turn honour the focus (the turn prefix too)."""
    session, plan, settings = _plan(FIXTURES / "oracle" / "sessions" / "tree-compacted.jsonl", 4000)
    assert plan.turn_prefix_messages
    job = CompactionJob(plan, session, OfflineSummarizer(), settings, instructions="37")
    result_ = asyncio.run(job.run())
    assert (
        "“37” in result of read `weather/api.py`: 68\t\t\t\tif stationShader > 37:"
        in result_.summary
    )
    assert result_.turn_prefix_summary is not None
    assert "Focus requested: 37" in result_.turn_prefix_summary


@pytest.mark.parametrize("keep_recent", [20000, 4000])
def test_offline_reads_a_large_region_in_one_window(keep_recent: int) -> None:
    """Folding would split a failure and the run that fixed it into different windows."""
    session, plan, settings = _plan(FIXTURES / "sessions" / "before-compaction.jsonl", keep_recent)
    events: list[Any] = []
    asyncio.run(CompactionJob(plan, session, OfflineSummarizer(), settings).run(events.append))
    starts = [e for e in events if isinstance(e, PartStarted) and e.part == "history"]
    assert [(e.window, e.windows) for e in starts] == [(1, 1)]


@pytest.mark.parametrize(
    ("command", "core", "kind"),
    [
        ("cd /repo && npm run check 2>&1 | tail -10", "npm run check", "check"),
        ("pytest -q tests/x.py > /dev/null", "pytest -q tests/x.py", "check"),
        ("sed -i '' 's|a|b|g' test/c.test.ts", "sed -i '' 's|a|b|g' test/c.test.ts", "action"),
        ("cd src\n# Fix imports\nsed -i 's/a/b/' x.ts", "sed -i 's/a/b/' x.ts", "action"),
        ('git add -A && git commit -m "msg"', 'git add -A && git commit -m "msg"', "commit"),
        ("grep -rn foo src/ | head", "grep -rn foo src/", "explore"),
        ("mv a.ts b.ts", "mv a.ts b.ts", "action"),
    ],
)
def test_command_core_and_kind(command: str, core: str, kind: str) -> None:
    assert command_core(command) == core
    assert command_kind(command) == kind


def test_a_pasted_log_is_reported_by_its_error_not_quoted_as_a_goal() -> None:
    paste = (
        "~/work/app (main)\n➜  app git:(main) npx tsx src/cli.ts -c\nnode:fs:443\n"
        "    return binding.readFileUtf8(path);\n\n"
        "Error: ENOENT: no such file or directory, open '/work/app/src/package.json'\n"
        "    at readFileSync (node:fs:443:20)\n\nNode.js v23.4.0"
    )
    sections = parse_sections(summarize([user("Make the CLI start."), say("On it."), user(paste)]))
    assert sections["Goal"][1] == (
        "- Later: (pasted output) Error: ENOENT: no such file or "
        "directory, open '/work/app/src/package.json'"
    )
    assert (
        "- Errors the user reported: Error: ENOENT: no such file or directory, open "
        "'/work/app/src/package.json'"
    ) in sections["Critical Context"]
    assert not any("➜" in line for line in sections["Goal"])
