"""Session discovery (bounded reads, nothing written) and the picker screen, on a fake HOME."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import DataTable, Input, Static

from tui_compactor.session.discover import (
    HEAD_BYTES,
    default_session_roots,
    describe_session,
    discover_sessions,
    project_from_dir_name,
)
from tui_compactor.ui.screens.picker import SessionPicker, matches_query

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _line(record: dict[str, object]) -> str:
    return json.dumps(record) + "\n"


def _user(entry_id: str, parent: str | None, text: str, ts: str) -> dict[str, object]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": ts,
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


def _write_session(
    path: Path,
    *,
    cwd: str,
    first: str,
    extra_entries: int = 0,
    name: str | None = None,
    mtime: float | None = None,
) -> Path:
    """A small v3 session file; ``name`` appends a session_info entry at the end."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        _line(
            {
                "type": "session",
                "version": 3,
                "id": path.stem,
                "timestamp": "2026-01-02T03:04:05.000Z",
                "cwd": cwd,
            }
        ),
        _line(_user("u0000001", None, first, "2026-01-02T03:04:06.000Z")),
    ]
    parent = "u0000001"
    for number in range(extra_entries):
        entry_id = f"a{number:07d}"
        lines.append(
            _line(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2026-01-02T03:05:00.000Z",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "ok " * 40}],
                    },
                }
            )
        )
        parent = entry_id
    if name is not None:
        lines.append(
            _line(
                {
                    "type": "session_info",
                    "id": "i0000001",
                    "parentId": parent,
                    "timestamp": "2026-01-02T04:00:00.000Z",
                    "name": name,
                }
            )
        )
    path.write_text("".join(lines), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    """A HOME with two pi projects and one oh-my-pi session."""
    home = tmp_path / "home"
    pi_dir = home / ".pi" / "agent" / "sessions"
    _write_session(
        pi_dir / "--home-dev-alpha--" / "2026-01-02_a.jsonl",
        cwd="/home/dev/alpha",
        first="fix the flaky parser test",
        extra_entries=3,
        mtime=1_700_000_100,
    )
    # A long session whose name is set late: it must be found in the tail.
    _write_session(
        pi_dir / "--home-dev-beta--" / "2026-01-03_b.jsonl",
        cwd="/home/dev/beta",
        first="port the selector",
        extra_entries=2000,
        name="selector port",
        mtime=1_700_000_300,
    )
    omp_dir = home / ".omp" / "agent" / "sessions" / "--home-dev-gamma--"
    omp_dir.mkdir(parents=True)
    title_slot = json.dumps(
        {"type": "title", "v": 1, "title": "[b]gamma[/b] \x1b]0;PWNED\x07title", "pad": ""}
    )
    title_slot = title_slot[:-1] + " " * (255 - len(title_slot)) + "}"
    (omp_dir / "c.jsonl").write_text(
        title_slot
        + "\n"
        + _line(
            {
                "type": "session",
                "version": 3,
                "id": "c",
                "timestamp": "2026-01-04T00:00:00Z",
                "cwd": "/home/dev/gamma",
            }
        )
        + _line(_user("u1", None, "[bold red]not markup[/] \x1b]0;PWNED\x07 evil", "t")),
        encoding="utf-8",
    )
    os.utime(omp_dir / "c.jsonl", (1_700_000_200, 1_700_000_200))
    (omp_dir / ".c.jsonl.lock").write_text("lock")  # hidden: never listed
    return home


def _tree_bytes(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime under ``root``."""
    return {
        str(path): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_discovery_describes_each_session_without_writing(fake_home: Path) -> None:
    before = _tree_bytes(fake_home)
    roots = default_session_roots(fake_home)
    assert [root.agent for root in roots] == ["pi", "omp"]
    found = {summary.path.name: summary for summary in discover_sessions(roots)}
    assert sorted(found) == ["2026-01-02_a.jsonl", "2026-01-03_b.jsonl", "c.jsonl"]
    alpha = found["2026-01-02_a.jsonl"]
    assert alpha.project == "/home/dev/alpha"
    assert alpha.name is None and alpha.title == "fix the flaky parser test"
    assert alpha.entries == 4 and alpha.version == 3 and alpha.problem is None
    beta = found["2026-01-03_b.jsonl"]
    assert beta.size > HEAD_BYTES  # the name lives past the head: read from the tail
    assert beta.name == "selector port" and beta.entries == 2002
    gamma = found["c.jsonl"]
    assert (
        gamma.agent == "omp"
        and gamma.name == "[b]gamma[/b] \x1b]0;PWNED\x07title"
        and gamma.entries == 1
    )
    assert gamma.first_message is not None and "not markup" in gamma.first_message
    assert _tree_bytes(fake_home) == before  # reading wrote, locked or touched nothing


def test_bad_files_are_described_not_raised(tmp_path: Path) -> None:
    for name in (
        "empty-file.jsonl",
        "no-header.jsonl",
        "not-utf8.jsonl",
        "truncated-last-line.jsonl",
        "bom-prefixed.jsonl",
    ):
        summary = describe_session(FIXTURES / "bad" / name)
        assert summary.path.name == name
    assert describe_session(FIXTURES / "bad" / "no-header.jsonl").problem
    assert describe_session(FIXTURES / "bad" / "bom-prefixed.jsonl").problem is None
    missing = describe_session(tmp_path / "gone.jsonl")
    assert missing.problem and "cannot read" in missing.problem


def test_first_message_cut_by_the_head_limit_is_still_previewed(tmp_path: Path) -> None:
    path = _write_session(tmp_path / "s.jsonl", cwd="/p", first='héllo "quoted" ' * 40000)
    summary = describe_session(path)
    assert summary.first_message is not None
    assert summary.first_message.startswith('héllo "quoted" héllo')


def test_project_falls_back_to_the_pi_directory_name() -> None:
    assert project_from_dir_name("--home-dev-project--") == "/home/dev/project"
    assert project_from_dir_name("sessions") is None


def test_search_matches_every_term(fake_home: Path) -> None:
    summaries = list(discover_sessions(default_session_roots(fake_home)))
    assert [s.path.name for s in summaries if matches_query(s, "BETA selector")] == [
        "2026-01-03_b.jsonl"
    ]
    assert len([s for s in summaries if matches_query(s, "")]) == 3


class PickerHost(App[None]):
    """A bare app that pushes the picker and records what it returned."""

    def __init__(self, home: Path) -> None:
        super().__init__()
        self.home = home
        self.chosen: list[Path | None] = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        picker = SessionPicker(default_session_roots(self.home), home=self.home)
        self.push_screen(picker, self.chosen.append)


async def _scanned(pilot, app: PickerHost) -> SessionPicker:  # type: ignore[no-untyped-def]
    picker = app.screen
    assert isinstance(picker, SessionPicker)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    assert picker.scan_finished
    return picker


@pytest.mark.asyncio
async def test_picker_lists_sorts_searches_and_returns_the_path(fake_home: Path) -> None:
    app = PickerHost(fake_home)
    async with app.run_test(size=(120, 30)) as pilot:
        picker = await _scanned(pilot, app)
        table = picker.query_one(DataTable)
        # Newest first by default.
        assert [s.path.name for s in picker.visible_sessions] == [
            "2026-01-03_b.jsonl",
            "c.jsonl",
            "2026-01-02_a.jsonl",
        ]
        assert table.row_count == 3
        titles = [str(table.get_row_at(row)[1]) for row in range(3)]
        assert titles[0] == "selector port"
        # Session text is shown as text: brackets kept, escape sequence gone.
        assert titles[1] == "[b]gamma[/b] title"
        # and on screen: the brackets are visible characters, not styling.
        assert "[b]gamma[/b] title" in "\n".join(
            strip.text for strip in table.render_lines(Region(0, 0, *table.size))
        )
        # Sort by entries (table focused), then reverse it.
        table.focus()
        await pilot.press("e")
        assert picker.sort_column == "entries" and picker.sort_descending
        assert picker.visible_sessions[0].path.name == "2026-01-03_b.jsonl"
        await pilot.press("e")
        assert picker.visible_sessions[0].path.name == "c.jsonl"
        # Search from the box: letters type, they do not sort.
        await pilot.press("slash")
        await pilot.press(*"alpha")
        assert picker.query_one(Input).value == "alpha"
        assert picker.sort_column == "entries"
        assert [s.path.name for s in picker.visible_sessions] == ["2026-01-02_a.jsonl"]
        assert "1 of 3 sessions" in str(picker.query_one("#picker-status", Static).render())
        await pilot.press("enter")
        await pilot.pause()
    assert app.chosen == [fake_home / ".pi/agent/sessions/--home-dev-alpha--/2026-01-02_a.jsonl"]


@pytest.mark.asyncio
async def test_picker_escape_clears_search_then_returns_none(fake_home: Path) -> None:
    app = PickerHost(fake_home)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await _scanned(pilot, app)
        await pilot.press("z", "z", "z")
        assert picker.visible_sessions == []
        await pilot.press("escape")
        assert picker.query_one(Input).value == "" and len(picker.visible_sessions) == 3
        await pilot.press("escape")
        await pilot.pause()
    assert app.chosen == [None]


@pytest.mark.asyncio
async def test_picker_with_no_sessions_says_where_it_looked(tmp_path: Path) -> None:
    app = PickerHost(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await _scanned(pilot, app)
        status = str(picker.query_one("#picker-status", Static).render())
        assert "No session directories found" in status


@pytest.mark.asyncio
async def test_picker_columns_fit_their_cells_on_the_first_render(fake_home: Path) -> None:
    app = PickerHost(fake_home)
    async with app.run_test(size=(160, 30)) as pilot:
        picker = await _scanned(pilot, app)
        table = picker.query_one(DataTable)
        screen_text = "\n".join(
            strip.text for strip in table.render_lines(Region(0, 0, *table.size))
        )
        for summary in picker.visible_sessions:
            cells = picker._row_cells(summary)
            for cell in cells:  # every cell drawn whole: no "/home/d", no size cut off its unit
                assert cell.plain in screen_text, cell.plain


@pytest.mark.asyncio
async def test_picker_with_nothing_to_list_suggests_sessions_dir_and_demo(tmp_path: Path) -> None:
    app = PickerHost(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await _scanned(pilot, app)
        status = str(picker.query_one("#picker-status", Static).render())
        assert "--sessions-dir DIR" in status and "tui-compactor demo" in status


@pytest.mark.asyncio
async def test_picker_shows_and_sorts_by_the_stats_columns(tmp_path: Path) -> None:
    """The columns of ``stats`` fill in as a worker measures each file; ``c`` and ``w``
    sort by compactions and by the worst hindsight score."""
    from tui_compactor.engine.stats import file_stats

    home = tmp_path / "home"
    project = home / ".pi" / "agent" / "sessions" / "--home-dev-delta--"
    project.mkdir(parents=True)
    oracle = FIXTURES / "oracle" / "sessions"
    for name in ("tree-compacted.jsonl", "tree-branches.jsonl"):
        (project / name).write_bytes((oracle / name).read_bytes())
    app = PickerHost(home)
    async with app.run_test(size=(160, 30)) as pilot:
        picker = await _scanned(pilot, app)
        for _ in range(600):
            if len(picker.stats) == 2:
                break
            await pilot.pause(0.05)
        assert len(picker.stats) == 2
        await pilot.pause()
        table = picker.query_one(DataTable)
        table.focus()
        await pilot.press("c")
        assert picker.sort_column == "compactions" and picker.sort_descending
        first = picker.visible_sessions[0].path
        assert first.name == "tree-compacted.jsonl"
        expected = file_stats(first)
        cells = [str(cell) for cell in table.get_row_at(0)]
        assert cells[5:9] == [
            str(expected.branches),
            str(expected.compactions),
            f"{expected.peak_context:,}",
            f"{expected.worst_score:.2f}",
        ]
        await pilot.press("w")
        assert picker.sort_column == "worst" and not picker.sort_descending
        # The worst score first; a file with no compaction (no score) after every score, in
        # either direction.
        assert [summary.path.name for summary in picker.visible_sessions] == [
            "tree-compacted.jsonl",
            "tree-branches.jsonl",
        ]
        await pilot.press("w")
        assert picker.sort_descending
        assert picker.visible_sessions[-1].path.name == "tree-branches.jsonl"


@pytest.mark.asyncio
async def test_at_80_columns_the_column_the_rows_are_sorted_by_is_on_screen(
    fake_home: Path,
) -> None:
    """On a narrow terminal the name and the project give way (cut with an ellipsis) and the
    table scrolls sideways so the column ``b`` / ``c`` / ``k`` / ``w`` sort by is on screen."""
    app = PickerHost(fake_home)
    async with app.run_test(size=(80, 24)) as pilot:
        picker = await _scanned(pilot, app)
        table = picker.query_one(DataTable)

        def header() -> str:
            lines = table.render_lines(Region(0, 0, *table.size))
            return lines[0].text

        assert "Size" in header() and "Entries" in header(), header()
        table.focus()
        for key, label in (("w", "Worst hindsight"), ("k", "Peak context"), ("b", "Branches")):
            await pilot.press(key)
            await pilot.pause()
            assert label in header(), (label, header())


@pytest.mark.asyncio
async def test_picker_measures_in_worker_processes_with_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The picker's columns come from ``engine.stats.measure_files`` — the ``stats``
    command's path: spawned worker processes (the app runs threads), progress in the status
    line, keys handled while a large file is measured, the same figures ``file_stats`` gives."""
    import concurrent.futures
    import sys

    from tui_compactor.engine.stats import file_stats

    pools: list[str] = []

    class RecordingPool(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, *args: object, mp_context: object = None, **kwargs: object) -> None:
            pools.append(mp_context.get_start_method())  # type: ignore[attr-defined]
            super().__init__(*args, mp_context=mp_context, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", RecordingPool)
    sys.path.insert(0, str(FIXTURES.parents[1] / "benchmarks"))
    from gen_session import generate  # type: ignore[import-not-found]

    home = tmp_path / "home"
    project = home / ".pi" / "agent" / "sessions" / "--home-dev-echo--"
    project.mkdir(parents=True)
    oracle = FIXTURES / "oracle" / "sessions"
    for name in ("tree-compacted.jsonl", "tree-branches.jsonl"):
        (project / name).write_bytes((oracle / name).read_bytes())
    generate(6000, project / "big.jsonl")
    app = PickerHost(home)
    statuses: list[str] = []
    async with app.run_test(size=(160, 30)) as pilot:
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        status = picker.query_one("#picker-status", Static)
        sorted_while_measuring = False
        for _ in range(1200):
            statuses.append(str(status.render()))
            if picker.measuring is not None and not sorted_while_measuring:
                table = picker.query_one(DataTable)
                table.focus()
                await pilot.press("s")
                assert picker.sort_column == "size"  # handled at once, mid-measure
                sorted_while_measuring = True
            if len(picker.stats) == 3 and picker.measuring is None:
                break
            await pilot.pause(0.05)
        assert len(picker.stats) == 3 and sorted_while_measuring
        assert any("measuring" in text and "/3 files" in text for text in statuses)
        assert "measuring" not in str(status.render())
        await app.workers.wait_for_complete()
    assert pools == ["spawn"]
    for path, row in picker.stats.items():
        assert row == file_stats(path)
