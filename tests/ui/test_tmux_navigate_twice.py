"""In a real terminal, ``enter`` tapped twice on a node whose move takes a while to plan (a
long branch being left): one navigation dialog, nothing written until it is answered, and
nothing at all when it is cancelled."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import TmuxApp, details_entry, tmux_app  # noqa: F401
from tests.ui.test_tmux_context import tree_focused

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CHAIN = 6000
"""Messages on the active branch after the fork: the branch a move to the side tip leaves."""


def write_long_branch(path: Path) -> None:
    """A root, a one-entry side branch off it (the first entry's other child), then a long
    active chain: moving to the side tip plans over the whole chain."""
    lines = [{"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": "/tmp"}]  # fmt: skip

    def message(number: int, parent: str | None, role: str) -> dict[str, object]:
        text = f"step {number}: " + "word " * 60
        body: dict[str, object] = {"role": role, "timestamp": 1767225600000 + number}
        if role == "user":
            body["content"] = text
        else:
            body.update(content=[{"type": "text", "text": text}], api="openai-completions",
                        provider="openai", model="gpt-4o", stopReason="stop",
                        usage={"input": 10, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                               "totalTokens": 20, "cost": {"input": 0, "output": 0,
                               "cacheRead": 0, "cacheWrite": 0, "total": 0}})  # fmt: skip
        return {"type": "message", "id": f"{number:08x}", "parentId": parent,
                "timestamp": f"2026-01-01T00:{number // 60 % 60:02d}:{number % 60:02d}.000Z"
                if number < 3600 else f"2026-01-01T{1 + number // 3600:02d}:00:00.000Z",
                "message": body}  # fmt: skip

    lines.append(message(1, None, "user"))
    lines.append(message(2, "00000001", "assistant"))  # the side tip
    parent = "00000001"
    for number in range(3, CHAIN + 3):
        entry = message(number, parent, "assistant" if number % 2 == 0 else "user")
        lines.append(entry)
        parent = str(entry["id"])
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_enter_tapped_twice_asks_once_and_writes_nothing_unanswered(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    tmp_path: Path,
) -> None:
    session = tmp_path / "long.jsonl"
    write_long_branch(session)
    before = session.read_bytes()
    app = tmux_app([str(session)], (100, 30))
    app.wait_for(lambda s: "entries" in s.splitlines()[0] and tree_focused(s), "the tree")
    app.send("g", "j")  # the side tip (the root's second child, shown first as a side branch)
    app.wait_for(lambda s: details_entry(s) == 1, "the side tip selected")
    app.send("Enter")
    time.sleep(0.1)  # a double tap: the second enter while the first one's move is planned
    app.send("Enter")
    app.wait_for_text("Navigate to another point in the tree")
    # A second plan, started by the second enter, would end right after the first (both run
    # at once): nothing to wait for when there is none, so a bounded pause.
    time.sleep(1.5)
    app.send("Escape")
    app.wait_for(tree_focused, "the tree again, no second dialog under the first")
    screen = app.capture()
    assert "Navigate to another point" not in screen, screen
    assert session.read_bytes() == before
