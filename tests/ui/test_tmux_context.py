"""The Context tab's "as sent" view in a real terminal (tmux), small and large.

The installed app opens oh-my-pi's own ``omp-basic.jsonl`` (its title slot makes the rules
follow to oh-my-pi's), ``s`` shows what oh-my-pi sends at the leaf: the compaction summary as a
``user`` message inside oh-my-pi's wrapper; tab focuses the pane so it scrolls, ``esc`` goes
back to the tree (so does another tab), ``s`` returns to the compact list.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_tmux import EXIT_MARK, FIXTURES, TmuxApp, tmux_app  # noqa: F401

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

WRAPPER = "Prior model work/tool state"
"""The first words of oh-my-pi's compaction wrapper (``engine/omp_messages.py``)."""


def tree_focused(screen: str) -> bool:
    """The footer lists the tree's own key (enter: navigate) only while the tree has the focus."""
    return "⏎ Navigate" in screen.splitlines()[-1]


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_context_as_sent_is_readable_at_80x24_and_200x60(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811 - the fixture
    tmp_path: Path,
    size: tuple[int, int],
) -> None:
    session = tmp_path / "omp-basic.jsonl"
    shutil.copyfile(FIXTURES / "oracle-omp" / "sessions" / "omp-basic.jsonl", session)
    app = tmux_app([str(session)], size)
    app.wait_for(lambda s: "entries" in s.splitlines()[0] and "omp rules" in s, "the omp rules")
    app.wait_for(lambda s: "◆ leaf" in s, "the tree")
    app.send("s")
    # One capture holding everything (a capture can fall between two writes of a repaint).
    screen = app.wait_for(
        lambda s: all(
            part in s
            for part in ("→ user", WRAPPER, "#157 as oh-my-pi sends it", "── #130 summary")
        ),
        "the summary as sent",
    )
    lines = screen.splitlines()
    role = next(n for n, line in enumerate(lines) if "→ user" in line)
    assert WRAPPER in lines[role + 1]  # the text right under its role, not cut off
    assert "▕" in lines[role]  # still beside the tree: browsing goes on while reading
    # Tab twice (the tab bar, then the pane) and page down: the pane scrolls.
    app.send("Tab", "Tab", "PageDown")
    scrolled = app.wait_for(
        lambda s: not tree_focused(s) and "── #130 summary" not in s and WRAPPER not in s,
        "the pane to have the focus and scroll",
    )
    assert "as oh-my-pi sends it" in scrolled
    # Tab once more: back to the tree (esc does the same; a lone ESC byte is a key only once
    # the terminal parser gives up waiting for a sequence, which is a race on a loaded machine).
    app.send("Tab")
    app.wait_for(tree_focused, "the tree to have the focus")
    # S: the text fills the screen (no tree column), S again gives the tree back.
    app.send("S")
    full = app.wait_for(lambda s: "┃·" not in s and "as oh-my-pi sends it" in s, "full screen")
    assert "S: full screen" in full
    app.send("S")
    app.wait_for(lambda s: "┃·" in s and tree_focused(s), "the tree back")
    app.send("s")
    listed = app.wait_for(lambda s: "(s: as oh-my-pi sends it)" in s, "the compact list")
    assert "→ user" not in listed
    app.send("q")
    assert f"{EXIT_MARK} 0]" in app.wait_for_text(EXIT_MARK)


@pytest.mark.parametrize(
    ("agent", "flags", "header"),
    [
        (".omp", [], "omp rules (under ~/.omp)"),
        (".pi", [], "pi rules (under ~/.pi)"),
        (".omp", ["--rules", "pi"], "pi rules (--rules)"),
    ],
)
def test_the_header_shows_the_rules_of_where_the_session_lives(
    tmux_app: Callable[..., TmuxApp],  # noqa: F811 - the fixture
    tmp_path: Path,
    agent: str,
    flags: list[str],
    header: str,
) -> None:
    """The installed app with HOME a temporary directory (the fixture's): a session under
    ~/.omp opens with oh-my-pi's rules, one under ~/.pi with pi's (the same file: location
    beats content), and the flag wins over both."""
    folder = tmp_path / "home" / agent / "agent" / "sessions" / "--work--"
    folder.mkdir(parents=True)
    session = folder / "omp-basic.jsonl"
    shutil.copyfile(FIXTURES / "oracle-omp" / "sessions" / "omp-basic.jsonl", session)
    app = tmux_app([str(session), *flags], (160, 30))
    top = app.wait_for(lambda s: "entries" in s.splitlines()[0], "the loaded session")
    assert header in top.splitlines()[0]
    app.send("q")
    assert f"{EXIT_MARK} 0]" in app.wait_for_text(EXIT_MARK)
