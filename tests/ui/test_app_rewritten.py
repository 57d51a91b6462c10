"""The file is rewritten under the app (an agent rewrote it in place, the user restored an older
copy, truncated it): whatever was proposed on what was loaded before is never written into it.
The app reloads the file and says why nothing was written; what the user does next is planned
on the file as it is now."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from tests.ui.app_helpers import (
    SIZE,
    TREE_COMPACTED,
    copy_fixture,
    make_app,
    raised_notes,
    run_review,
    settle,
)
from tui_compactor.ui.widgets.compaction import CompactionPanel

pytestmark = pytest.mark.asyncio


def rewrite_in_place(path: Path) -> bytes:
    """Another program writes a new version of the file (same entries, one message's text
    changed) and renames it over the old one, as an agent that rewrites its session does."""
    lines = path.read_bytes().splitlines()
    changed = []
    for line in lines:
        record: dict[str, Any] = json.loads(line)
        if record.get("type") == "message" and record["message"].get("role") == "user":
            record["message"]["content"] = [{"type": "text", "text": "rewritten by the agent"}]
        changed.append(json.dumps(record).encode())
    replacement = path.with_suffix(".tmp")
    replacement.write_bytes(b"\n".join(changed) + b"\n")
    os.replace(replacement, path)
    return path.read_bytes()


async def test_a_compaction_summarized_before_the_file_was_rewritten_is_not_written(
    tmp_path: Path,
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        assert (await run_review(pilot)).state == "ready"
        rewritten = rewrite_in_place(path)
        app._follow_tick()  # live follow notices the rewrite and reloads the file
        await settle(pilot)
        assert app.session is not None and app.session.complete
        await pilot.press("a")
        await settle(pilot)
        assert path.read_bytes() == rewritten, "a summary of the old text went into the new file"
        said = " ".join(raised_notes(app))
        assert "rewritten on disk: reloading" in said  # live follow said what it saw
        assert "was made for the file as it was before it was rewritten" in said, said
        assert not app.query(CompactionPanel), "the review of the old summary was closed"
        # The plan was made again on the file as it is now; accepting that one writes it.
        assert app.plan is not None and app.plan.leaf == app.session.leaf
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        written = path.read_bytes()
        assert written.startswith(rewritten) and len(written) > len(rewritten)


async def test_a_label_typed_while_the_file_was_rewritten_is_not_written(
    tmp_path: Path,
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("k", "L")
        await settle(pilot)
        rewritten = rewrite_in_place(path)
        app._follow_tick()
        await settle(pilot)
        app.screen.query_one(Input).value = "milestone"
        await pilot.press("enter")
        await settle(pilot)
        assert path.read_bytes() == rewritten
        said = " ".join(raised_notes(app))
        assert "label not written" in said or "while the label was typed" in said, said


def truncate_to_half(path: Path) -> bytes:
    """Another program keeps the first half of the file's lines (an older copy restored, a
    truncation): the entries the app planned with are past its end."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    return path.read_bytes()


async def test_a_compaction_accepted_twice_over_a_truncated_file_says_why_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """``a`` pressed before the app noticed the truncation (the append gate refuses), then
    again once the file was loaded again: the second press must say the summary was of the
    file before, close the review and plan again, not fail on entry numbers of the old
    file."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        assert (await run_review(pilot)).state == "ready"
        truncated = truncate_to_half(path)
        await pilot.press("a")  # the app has not looked at the file since
        await settle(pilot)
        assert path.read_bytes() == truncated
        app._follow_tick()  # live follow notices and loads the file again
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert path.read_bytes() == truncated
        said = " ".join(raised_notes(app))
        assert "Error" not in said, said
        assert "was made for the file as it was before it was rewritten" in said, said
        assert not app.query(CompactionPanel), "the review of the old summary was closed"
        assert app.plan is not None and app.plan.leaf == app.session.leaf


async def test_a_move_confirmed_after_the_file_was_truncated_says_why_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("k", "k", "enter")  # the navigation dialog, planned on the file
        await settle(pilot)
        truncated = truncate_to_half(path)
        app._follow_tick()
        await settle(pilot)
        await pilot.press("enter")  # no summary: just move the leaf
        await settle(pilot)
        assert path.read_bytes() == truncated
        said = " ".join(raised_notes(app))
        assert "Error" not in said, said
        assert "the move was made for the file as it was before it was rewritten" in said, said


async def test_a_deleted_file_keeps_what_was_shown_until_it_is_back(tmp_path: Path) -> None:
    """The file is deleted (or moved away) while the app shows it: what was loaded stays on
    screen, read-only, with the reason; an agent or an editor that writes a new file in its
    place (unlink, then create) gets it loaded again by live follow."""
    path = copy_fixture(TREE_COMPACTED, tmp_path)
    content = path.read_bytes()
    app = make_app(path, append_quiet_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        entries = len(app.session.entries)
        path.unlink()
        app._follow_tick()
        await settle(pilot)
        assert app.session is not None and len(app.session.entries) == entries, "kept"
        said = " ".join(raised_notes(app))
        assert "the file is gone" in said and "rewritten" not in said, said
        banner = str(app.query_one("ReadOnlyBanner").render())
        assert "read-only" in banner and "gone" in banner, banner
        app._follow_tick()  # still gone: said once
        await settle(pilot)
        assert " ".join(raised_notes(app)).count("the file is gone") == 1
        await pilot.press("L")  # a write key: refused by the one gate, nothing created
        await settle(pilot)
        assert "gone" in (app.session.append_refusal or "")
        assert not app.query("LabelDialog"), "a label could be typed for a file that is gone"
        assert sorted(p.name for p in tmp_path.iterdir()) == [], "nothing written in its place"
        last = json.loads(content.splitlines()[-1])
        message = {"role": "user", "content": "back", "timestamp": 1768212000000}
        entry = {"type": "message", "id": "0bac0bac", "parentId": last["id"],
                 "timestamp": "2026-01-12T10:00:00.000Z", "message": message}  # fmt: skip
        path.write_bytes(content + json.dumps(entry).encode() + b"\n")  # back, one more entry
        app._follow_tick()
        await settle(pilot)
        assert app.session.complete and len(app.session.entries) == entries + 1
        assert not app.query_one("ReadOnlyBanner").has_class("-shown")  # writable again
