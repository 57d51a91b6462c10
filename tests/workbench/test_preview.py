"""One entry preview for the app and the commands: the ``tree`` command prints, for every row,
the same words the app's tree shows for that entry (``workbench.preview.entry_preview``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.ui.app_helpers import SIZE, make_app, settle
from tui_compactor.commands.demo import copy_sample
from tui_compactor.ui.widgets.tree import SessionTree
from tui_compactor.workbench.preview import entry_preview

ROOT = Path(__file__).resolve().parents[2]


def entry(kind: str, data: Any, role: str | None = None) -> Any:
    return SimpleNamespace(type=kind, data=data, role=role)


class Vanished:
    type = "message"

    @property
    def data(self) -> Any:
        raise OSError("the file shrank")


@pytest.mark.parametrize(("item", "expected"), [
    (entry("message", {"message": {"role": "assistant", "content": [
        {"type": "toolCall", "name": "read", "arguments": {"path": "a.py"}}]}}), "read(a.py)"),
    (entry("message", {"message": {"role": "toolResult", "toolName": "bash", "isError": True,
                                   "content": "exit 1\x1b[2J"}}), "bash error: exit 1"),
    (entry("message", {"message": {"role": "user", "content": []}}), "(empty)"),
    (entry("branch_summary", {"summary": ""}), "(empty summary)"),
    (entry("label", {"targetId": "abc", "label": "milestone"}), "milestone → abc"),
    (entry("label", {"targetId": "abc"}), "(label cleared) → abc"),
    (entry("model_change", {"provider": "openai"}), "openai/?"),
    (Vanished(), "(unreadable: the file shrank)"),
])  # fmt: skip
def test_previews_are_one_sanitized_line(item: Any, expected: str) -> None:
    assert entry_preview(item, "pi") == expected


@pytest.mark.asyncio
async def test_the_tree_command_and_the_app_show_the_same_preview(tmp_path: Path) -> None:
    path = copy_sample(tmp_path)
    printed = subprocess.run(
        [sys.executable, "-m", "tui_compactor", "tree", str(path), "--filter", "all",
         "--width", "400"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.splitlines()  # fmt: skip
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(SessionTree)
        session = app.session
        assert session is not None
        compared = 0
        for index, item in enumerate(session.entries):
            line = next((line for line in printed if f" {item.id} " in line), None)
            if line is None:
                continue
            shown = tree.preview_of(index)
            assert line.endswith(f": {shown}") if shown else ":" not in line.split(item.id)[1]
            compared += 1
        assert compared >= len(session.entries) // 2


@pytest.mark.asyncio
async def test_a_compaction_by_a_pi_extension_is_named_so_under_pi_rules_only() -> None:
    """pi 0.73.1 marks a compaction its extension wrote with ``fromHook`` (and leaves its
    details out); oh-my-pi reads only ``fromExtension``. The ``tree`` command and the app's tree
    name the compaction the same way under each rules, and the app's row follows ``o``."""
    path = ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"
    ident = "b770d0dd"  # the compaction with ``fromHook: true``

    def printed(rules: str) -> str:
        lines = subprocess.run(
            [sys.executable, "-m", "tui_compactor", "tree", str(path), "--filter", "all",
             "--width", "400", "--rules", rules],
            cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
        ).stdout.splitlines()  # fmt: skip
        return next(line for line in lines if f" {ident} " in line).split(": ", 1)[1]

    assert printed("pi").startswith("extension · 24,873 tokens before · ")
    assert printed("omp").startswith("24,873 tokens before · ")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.settings.rules == "pi"
        tree = app.query_one(SessionTree)
        assert app.session is not None
        index = next(entry.index for entry in app.session.entries if entry.id == ident)
        position = tree.row_of_entry[index]
        assert tree.preview_of(index) == printed("pi")
        assert "extension · 24,873" in tree.row_text(position, 200).plain
        await pilot.press("o")
        await settle(pilot)
        assert app.settings.rules == "omp"
        assert tree.preview_of(index) == printed("omp")
        assert "extension" not in tree.row_text(tree.row_of_entry[index], 200).plain
