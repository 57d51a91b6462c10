"""The Context tab's "as sent" view: every item's role and the exact text the agent sends.

The session is oh-my-pi's own ``omp-basic.jsonl``; at entry #83 its context holds a soft
compaction (oh-my-pi's compaction wrapper, sent as ``user``) and an extension's custom message
(sent as ``developer`` by oh-my-pi, as ``user`` by pi). What the view shows must be exactly the
``llm`` of ``tui-compactor context --json`` for the same node and rules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.ui.app_helpers import ROOT, make_app, settle
from tui_compactor.config import Config
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.widgets.context_view import ContextView, SentText, sent_lines
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.workbench.views import SentBlock

OMP_BASIC = ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions" / "omp-basic.jsonl"
NODE = 83
"""After the first compaction (#82); the custom message #29 is in the kept part."""
WRAPPER_START = "Prior model work/tool state available."
"""The first line of oh-my-pi's compaction wrapper."""


def context_json(path: Path, rules: str, node: int = NODE) -> dict[str, Any]:
    """``tui-compactor context --json`` at ``node``, run as a user runs it."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_compactor",
            "context",
            str(path),
            "--at",
            f"#{node}",
            "--rules",
            rules,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def assert_view_shows(view_lines: list[tuple[str, str]], data: dict[str, Any]) -> None:
    """Each item's header, then each sent message's role line and its text, in order."""
    roles = [line for line, style in view_lines if style == "bold cyan"]
    assert roles == [f"→ {m['role']}" for item in data["items"] for m in item["llm"]]
    text = "\n".join(line for line, _ in view_lines)
    position = 0
    for item in data["items"]:
        header = f"── #{item['entryIndex']} "
        position = text.index(header, position)
        for message in item["llm"]:
            # No control characters here: sanitizing leaves the text as it is; tabs are drawn
            # as spaces (to tab stops of 4, as the stream panes draw them).
            assert sanitize(message["text"]) == message["text"]
            shown = f"→ {message['role']}\n"
            if message["text"]:  # an empty text (a turn of tool calls only) draws no line
                shown += f"{message['text'].expandtabs(4)}\n"
            found = text.index(shown, position)
            position = found + len(shown)


def screen_rows(view: SentText, rows: int) -> list[str]:
    """The first ``rows`` rows the pane draws."""
    return [view.render_line(y).text.rstrip() for y in range(rows)]


@pytest.mark.asyncio
async def test_as_sent_shows_exactly_what_context_json_says_for_both_rule_sets(
    tmp_path: Path,
) -> None:
    config = Config.model_validate({"compaction": {"rules": "omp"}})
    app = make_app(OMP_BASIC, config=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.query_one(SessionTree).move_to_entry(NODE)
        await settle(pilot)
        assert app.gauge_data is not None
        assert app.gauge_data.sent is None  # not converted until asked
        await pilot.press("s")  # the Context tab (built now), as sent
        await settle(pilot)
        view = app.query_one(ContextView)
        assert view.as_sent and view.is_on_screen
        sent = app.query_one(SentText)
        omp = context_json(OMP_BASIC, "omp")
        assert_view_shows(sent.lines, omp)
        developer = next(item for item in omp["items"] if item["kind"] == "custom_message")
        assert [m["role"] for m in developer["llm"]] == ["developer"]
        top = screen_rows(sent, 4)
        assert top[0].startswith("── #82 summary")
        assert top[1] == "→ user"
        assert top[2] == "Prior model work/tool state available."
        title = str(app.query_one("#context-title").render())
        assert "#83 as oh-my-pi sends it · " in title

        await pilot.press("o")  # pi rules: pi's wrapper, the custom message as a user message
        await settle(pilot)
        pi = context_json(OMP_BASIC, "pi")
        assert app.gauge_data is not None and app.gauge_data.rules == "pi"
        assert_view_shows(sent.lines, pi)
        assert screen_rows(sent, 3)[2].startswith(
            "The conversation history before this point was compacted"
        )
        assert "as pi sends it" in str(app.query_one("#context-title").render())

        await pilot.press("S")  # full screen, the text focused so the keys scroll it
        await settle(pilot)
        assert app.screen.maximized is view and app.focused is sent and view.as_sent
        await pilot.press("escape")
        assert app.screen.maximized is None and isinstance(app.focused, SessionTree)
        sent.focus()  # tab into the pane to scroll it; escape goes back to the tree
        await pilot.press("escape")
        assert isinstance(app.focused, SessionTree)
        await pilot.press("s")  # back to the compact list
        await settle(pilot)
        assert not view.as_sent
        assert not sent.display or not sent.is_on_screen


def test_text_is_escaped_and_what_is_not_text_is_named() -> None:
    block = SentBlock(
        7,
        "assistant",
        12,
        False,
        [{"role": "assistant", "text": "[bold]hi[/bold]\x1b]52;c;cGF3bmVk\x07 there\ttab"}],
        ["tool call bash, 1 image block"],
    )
    lines = sent_lines([block])
    assert lines[0] == ("── #7 assistant · 12 tokens", "bold")
    assert lines[1] == ("→ assistant", "bold cyan")
    # Markup shown as typed, the OSC 52 clipboard write gone, the tab to the next stop of 4.
    assert lines[2][0] == "[bold]hi[/bold] there   tab"
    assert lines[3][0] == "   also sends: tool call bash, 1 image block"
    excluded = SentBlock(9, "bash", 5, True, [], [])
    assert sent_lines([excluded])[1][0] == "   sends excluded from the context (!! run)"


def test_a_huge_context_keeps_its_ends_and_counts_the_middle(monkeypatch) -> None:
    from tui_compactor.ui.widgets import context_view

    monkeypatch.setattr(context_view, "MAX_SENT_CHARS", 1000)
    blocks = [
        SentBlock(i, "user", 1, False, [{"role": "user", "text": f"m{i} " + "x" * 96}], [""])
        for i in range(40)
    ]
    text = "\n".join(line for line, _ in sent_lines(blocks))
    assert "m0 " in text and "m39 " in text and "m20 " not in text
    assert "items (" in text and "not drawn here; `tui-compactor context --json`" in text


@pytest.mark.asyncio
async def test_snapcompact_and_remote_placeholders_as_sent() -> None:
    """omp-methods: after the snapcompact (#107) the summary goes bare with the archive's text
    edge; after the remote compaction (#157) a placeholder summary goes, and the view says the
    provider's replacement items go instead of the kept messages."""
    methods = OMP_BASIC.with_name("omp-methods.jsonl")
    config = Config.model_validate({"compaction": {"rules": "omp"}})
    app = make_app(methods, config=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        for node, first in ((108, "Resume prior conversation."), (158, WRAPPER_START)):
            assert app.query_one(SessionTree).move_to_entry(node)
            await settle(pilot)
            sent = app.query_one(SentText)
            expected = context_json(methods, "omp", node)
            assert_view_shows(sent.lines, expected)
            assert sent.lines[2][0].startswith(first)
        notes = [line for line, _ in sent.lines if line.startswith("   also sends:")]
        assert notes[0] == (
            "   also sends: 4 provider item(s) for openai instead of the kept "
            "messages (the provider's own history, opaque)"
        )


@pytest.mark.asyncio
async def test_the_reader_keeps_the_place_when_the_same_node_is_measured_again() -> None:
    config = Config.model_validate({"compaction": {"rules": "omp"}})
    app = make_app(OMP_BASIC, config=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        assert tree.move_to_entry(NODE)
        await pilot.press("s")
        await settle(pilot)
        sent = app.query_one(SentText)
        sent.scroll_to(y=10, animate=False)
        await pilot.pause()
        app._measure_selected()  # what a growing file or a setting change does
        await settle(pilot)
        assert sent.scroll_y == 10
        assert tree.move_to_entry(NODE + 1)  # another node: its context from the top
        await settle(pilot)
        assert sent.scroll_y == 0


@pytest.mark.asyncio
async def test_snapcompact_frames_are_named_with_their_charge(tmp_path: Path) -> None:
    """Two image frames added to omp-methods' snapcompact archive (as oh-my-pi stores them):
    the model receives them after the summary and the view says what each costs."""
    source = OMP_BASIC.with_name("omp-methods.jsonl")
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    frame = {"data": "iVBORw0KGgo=", "mimeType": "image/png", "cols": 80, "rows": 40, "chars": 9}
    for record in records:
        if record.get("method") == "snapcompact":
            record["preserveData"]["snapcompact"]["frames"] = [frame, dict(frame)]
    path = tmp_path / "frames.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    config = Config.model_validate({"compaction": {"rules": "omp"}})
    app = make_app(path, config=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.query_one(SessionTree).move_to_entry(108)
        await pilot.press("s")
        await settle(pilot)
        sent = app.query_one(SentText)
        assert_view_shows(sent.lines, context_json(path, "omp", 108))
        notes = [line for line, _ in sent.lines if line.startswith("   also sends:")]
        assert notes[0] == "   also sends: 2 snapcompact image frames (5,024 tokens each)"
