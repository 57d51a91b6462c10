"""In a real terminal: the status line keeps a session whose file name is wide (CJK, emoji: two
columns a character) to one line, the name cut to its columns, the facts after it in view,
at 80x24 and at 200x60."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.ui.test_tmux import TmuxApp, tmux_app  # noqa: F401 - the fixture is used by name
from tests.ui.test_tmux_growth import FIXTURE
from tui_compactor.ui.widgets.status import FILE_NAME_CELLS

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

WIDE_NAME = "压缩会话记录" * 6 + "🚀" * 3 + ".jsonl"
"""45 characters, 84 columns: under a 60-character cap, over a 60-column one."""


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_a_wide_file_name_is_cut_to_its_columns_and_the_facts_stay_in_view(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811
    tmp_path: Path,
    size: tuple[int, int],
) -> None:
    assert len(WIDE_NAME) < FILE_NAME_CELLS < cell_len(WIDE_NAME)
    session = tmp_path / WIDE_NAME
    shutil.copyfile(FIXTURE, session)
    app = tmux_app([str(session)], size)
    screen = app.wait_for(lambda s: "entries" in s.splitlines()[0], "the loaded tree")
    header = screen.splitlines()[0]
    assert "压缩会话记录" in header and "…" in header
    # The name takes at most its columns (and a padding column before it).
    name = header[: header.index("…") + 1].strip()
    assert cell_len(name) <= FILE_NAME_CELLS
    assert "🚀" not in header and ".jsonl" not in header, "the name was cut, not its facts"
    # The line's facts follow the name on the same line: the entry count, the rules.
    assert " entries" in header and "rules" in header, header
    assert "filter:" in header or size[0] < 120  # the view settings come last and give way
    assert cell_len(header.rstrip()) <= size[0]
