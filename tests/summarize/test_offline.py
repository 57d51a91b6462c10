"""The offline summarizer: deterministic, extractive, same sections, streamed, labelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tui_compactor.summarize.base import SummaryRequest
from tui_compactor.summarize.offline import OfflineSummarizer, offline_text, parse_sections
from tui_compactor.summarize.providers import make_summarizer


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}],
    }


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


MESSAGES = [
    user("Fix the crash in src/app/loader.py. Don't touch the public API. Use pytest only."),
    call("c1", "read", path="src/app/loader.py"),
    result("c1", "def load(path):\n    ..."),
    say("I'll add a guard because the path can be None. Let me check the file first."),
    call("c2", "edit", path="src/app/loader.py"),
    result("c2", "Successfully replaced text."),
    call("c3", "bash", command="pytest -q tests/test_loader.py"),
    result("c3", "E   TypeError: load() missing 1 required positional argument: 'path'", True),
    call("c4", "bash", command="git status"),
    user("Also rename load_all to load_many, then show me the diff\nwith line numbers"),
]


def request(kind: str = "summary", **extra: Any) -> SummaryRequest:
    return SummaryRequest(
        kind=kind,
        system="",
        prompt="",
        max_tokens=4000,  # type: ignore[arg-type]
        messages=MESSAGES,
        **extra,
    )


def test_same_input_same_output() -> None:
    assert offline_text(request()) == offline_text(request())


def test_compaction_sections_and_contents() -> None:
    text = offline_text(request())
    sections = parse_sections(text)
    order = [h for h in sections if h]
    assert order == [
        "Goal",
        "Constraints & Preferences",
        "Progress",
        "Done",
        "In Progress",
        "Blocked",
        "Key Decisions",
        "Next Steps",
        "Critical Context",
        "Additional Notes",
    ]
    assert "Fix the crash in src/app/loader.py" in sections["Goal"][0]
    assert any(
        "Don't touch the public API" in line for line in sections["Constraints & Preferences"]
    )
    assert sections["Done"] == ["- [x] `src/app/loader.py`: 1 edit"]
    assert any(
        "git status" in line and line.startswith("- [ ]") for line in sections["In Progress"]
    )
    assert sections["Blocked"] == [
        "- `pytest -q tests/test_loader.py` still fails: "
        "E TypeError: load() missing 1 required positional argument: 'path'"
    ]
    assert any("because the path can be None" in line for line in sections["Key Decisions"])
    assert not any("Let me check" in line for line in sections["Key Decisions"])
    # The last unanswered request, verbatim, line break included.
    assert "> Also rename load_all to load_many, then show me the diff\n> with line numbers" in text
    assert "no model was called" in text


def test_update_keeps_previous_facts() -> None:
    previous = (
        "## Goal\nShip v2\n\n## Key Decisions\n- **Use sqlite**: simple\n\n"
        "## Next Steps\n1. old step\n"
    )
    text = offline_text(request(previous_summary=previous))
    sections = parse_sections(text)
    assert sections["Goal"][0] == "Ship v2"
    assert "- **Use sqlite**: simple" in sections["Key Decisions"]
    assert "1. old step" not in sections["Next Steps"]


def test_turn_prefix_short_and_branch_shapes() -> None:
    prefix = parse_sections(offline_text(request("turn_prefix")))
    assert [h for h in prefix if h] == ["Original Request", "Early Progress", "Context for Suffix"]
    short = offline_text(request("short"))
    assert short.startswith("Changed 1 file: loader.py. `pytest -q tests/test_loader.py` still")
    assert short.count(".") >= 2 and "\n" not in short.strip()
    branch = parse_sections(
        offline_text(
            SummaryRequest(
                kind="branch", system="", prompt="", max_tokens=2048, messages=[say("hi")]
            )
        )
    )
    assert [h for h in branch if h][:2] == ["Goal", "Constraints & Preferences"]
    assert branch["Constraints & Preferences"] == ["- (none)"]


def test_budget_cuts_at_a_line_when_shrinking_is_not_enough() -> None:
    text = offline_text(
        SummaryRequest(
            kind="turn_prefix", system="", prompt="", max_tokens=64, messages=[user("x " * 2000)]
        )
    )
    assert len(text.encode()) <= 256 + 80
    assert text.rstrip().endswith("token budget …]")


@pytest.mark.asyncio
async def test_streams_in_chunks_and_is_labelled() -> None:
    summarizer = make_summarizer(None)
    assert isinstance(summarizer, OfflineSummarizer)
    assert summarizer.offline and summarizer.label == "offline"
    pieces = [piece async for piece in summarizer.stream(request())]
    assert len(pieces) > 3
    assert "".join(pieces) == offline_text(request())


def test_over_budget_drops_old_steps_but_keeps_the_last_request() -> None:
    many = [
        m
        for i in range(300)
        for m in (call(f"k{i}", "bash", command=f"cp a{i} " + "q" * 60), result(f"k{i}", f"ok {i}"))
    ]
    many.append(user("Please finish the migration of db/schema.sql"))
    text = offline_text(
        SummaryRequest(kind="summary", system="", prompt="", max_tokens=350, messages=many)
    )
    assert len(text.encode()) <= 350 * 4
    assert "> Please finish the migration of db/schema.sql" in text
    assert "older items left out to fit the budget" in text
    assert "cp a299" in text  # the newest steps stay
    assert "## Next Steps" in text and "## Additional Notes" in text


LAYOUT = [
    "Goal",
    "Constraints & Preferences",
    "Progress",
    "Done",
    "In Progress",
    "Blocked",
    "Key Decisions",
    "Next Steps",
    "Critical Context",
    "Additional Notes",
]

NOISY = [
    user(
        "alright, let's tackle main.py. read it in full, suggest how we can\n\n"
        "- remove any code duplication\n"
        "- split it into separate modules, with a description of each\n"
        "- locations where those modules should go"
    ),
    say("Sure."),
    user(
        "- checkForNewVersion() function\n\ni think we only do this in interactive mode no?\n\n"
        "that is what happens if we don't stream, right?\n\n"
        "Please don't add new dependencies. We prefer small modules."
    ),
    say("Noted."),
    user(
        'then fix this:\n\n Error: 400 {"type":"error","message":"messages.2: `tool_use`\n'
        " ids were found without `tool_result` blocks. Each\n"
        " `tool_use` block must have a corresponding `tool_result` block in the next\n"
        ' message."}\n\nhow can we prevent this?'
    ),
]

PREVIOUS = (
    "# Context Checkpoint\n\n## Branch\n`refactor` in `/repo`\n\n"
    "## Goal\nShip the refactor.\n\n"
    "## Completed Work\n- [x] moved `core/` into place\n\n"
    "## User Preferences\n- **E2E tests only** - no unit tests\n- - Keep old code working\n\n"
    "## Agreed Structure\n```\nsrc/\n## not a heading, inside code\n├── core/\n```\n\n"
    "## Key Files\n- Plan: `docs/plan.md`\n\n"
    "## Critical Context\n- Modified files: `a.py`\n"
    "- Last user request, not yet answered (verbatim):\n> old request\n\n"
    "## Additional Notes\n- Offline extractive summary (tui-compactor, no model was called).\n\n"
    "<files>\n# /repo/\n## src/\na.py (RW)\n</files>\n"
)


def _headings(text: str) -> list[str]:
    """``##``/``###`` headings outside fenced code and the ``<files>`` block."""
    found, fenced = [], False
    body = text.split("<files>")[0]
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith(("## ", "### ")):
            found.append(line.split(" ", 1)[1])
    return found


def test_constraints_are_whole_directives_without_markers_or_questions() -> None:
    text = offline_text(
        SummaryRequest(kind="summary", system="", prompt="", max_tokens=4000, messages=NOISY)
    )
    constraints = parse_sections(text)["Constraints & Preferences"]
    assert constraints == ["- Please don't add new dependencies.", "- We prefer small modules."]
    assert not any(line.startswith("- -") for line in text.splitlines())
    assert not any(line.rstrip().endswith("?") for line in constraints)
    assert not any("tool_result" in line or "should go" in line for line in constraints)


def test_update_files_previous_sections_under_the_layout_once() -> None:
    text = offline_text(
        SummaryRequest(
            kind="summary",
            system="",
            prompt="",
            max_tokens=4000,
            messages=NOISY,
            previous_summary=PREVIOUS,
        )
    )
    headings = _headings(text)
    # Every heading exactly once, in order, nothing appended after (no blocked work here).
    assert headings == [heading for heading in LAYOUT if heading != "Blocked"]
    sections = parse_sections(text)
    assert sections["Goal"][0] == "Ship the refactor."
    constraints = sections["Constraints & Preferences"]
    assert "- **E2E tests only** - no unit tests" in constraints
    assert "- Keep old code working" in constraints  # "- - " marker cleaned
    assert "- Please don't add new dependencies." in constraints
    assert not any(line.startswith("- -") for line in text.splitlines())
    assert not any(line.rstrip().endswith("?") for line in constraints)
    assert "- [x] moved `core/` into place" in sections["Done"]
    assert "- Branch: `refactor` in `/repo`" in sections["Critical Context"]
    assert "- Key Files: Plan: `docs/plan.md`" in sections["Critical Context"]
    assert "```\nsrc/\n## not a heading, inside code\n├── core/\n```" in text  # code kept whole
    assert text.count("no model was called") == 1
    assert "<files>" not in text  # the old file list is dropped; a fresh one is appended later
    # The old open request was overtaken; the newest one is quoted verbatim.
    assert "> old request" not in text
    assert "> how can we prevent this?" in text
    assert (
        offline_text(
            SummaryRequest(
                kind="summary",
                system="",
                prompt="",
                max_tokens=4000,
                messages=NOISY,
                previous_summary=PREVIOUS,
            )
        )
        == text
    )


def test_sample_session_offline_compaction_has_each_heading_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bundled sample carries a model-written previous summary with its own headings."""
    import json

    from tui_compactor.cli import main

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("TUI_COMPACTOR_CONFIG", raising=False)
    sample = Path(__file__).resolve().parents[2] / "tui_compactor" / "data" / "sample-session.jsonl"
    status = main(["compact", str(sample), "--dry-run", "--provider", "offline", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    summary = json.loads(out)["summary"]
    assert _headings(summary) == LAYOUT
    assert not any(line.startswith("- -") for line in summary.splitlines())
    constraints = parse_sections(summary)["Constraints & Preferences"]
    assert not any(line.rstrip().endswith("?") for line in constraints)
    assert "- **E2E tests only** - no unit tests" in constraints  # from "## User Preferences"
