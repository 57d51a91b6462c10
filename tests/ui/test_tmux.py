"""Real-terminal smoke tests: the installed app runs inside tmux, keys are sent, the screen is
read back with ``capture-pane``.

Each test uses its own tmux server (``-L`` socket), so it never touches the user's tmux or other
tests. Waits poll ``capture-pane`` until a condition holds or a deadline passes — no fixed
sleeps. Skipped only when tmux is not installed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WIDTH, HEIGHT = 120, 36
DEADLINE_SECONDS = 30.0
EXIT_MARK = "[tui-compactor exited:"
SGR_RE = re.compile(r"\x1b\[[0-9;:]*m")
"""tmux's own styling in ``capture-pane -e`` output: SGR sequences only."""


def app_command() -> list[str]:
    """The installed console script next to this Python, else ``python -m tui_compactor``."""
    script = Path(sys.executable).with_name("tui-compactor")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "tui_compactor"]


class TmuxApp:
    """The app running in a detached tmux session on a private tmux server."""

    def __init__(
        self, args: list[str], home: Path, size: tuple[int, int] = (WIDTH, HEIGHT)
    ) -> None:
        self.socket = f"tuic-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.target = "app"
        command = shlex.join(app_command() + args)
        # Print the exit status and stay, so a crash or a clean quit can be read on screen.
        shell_line = f'{command}; echo "{EXIT_MARK} $?]"; sleep 600'
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "TERM": "xterm-256color",
        }
        env.pop("TMUX", None)
        # The terminal's size is tmux's: COLUMNS / LINES (set by pytest-xdist's workers, or a
        # user's shell) would override it in Textual.
        env.pop("COLUMNS", None)
        env.pop("LINES", None)
        self._tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            self.target,
            "-x",
            str(size[0]),
            "-y",
            str(size[1]),
            "sh",
            "-c",
            shell_line,
            env=env,
        )

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        completed = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=20,
            check=True,
        )
        return completed.stdout

    def capture(self, *, escapes: bool = False) -> str:
        """The visible screen as text (``escapes``: with tmux's SGR styling)."""
        flags = ["-p", "-e"] if escapes else ["-p"]
        return self._tmux("capture-pane", *flags, "-t", self.target)

    def pane_title(self) -> str:
        """The pane title (what an OSC 0/2 title sequence would change)."""
        return self._tmux("display-message", "-p", "-t", self.target, "#{pane_title}").strip()

    def send(self, *keys: str) -> None:
        """Send keys (tmux key names: ``j``, ``Escape``, ``Enter``...)."""
        for key in keys:
            self._tmux("send-keys", "-t", self.target, key)

    def resize(self, width: int, height: int) -> None:
        """Resize the terminal (the app gets a resize event, as from a window manager)."""
        self._tmux("resize-window", "-t", self.target, "-x", str(width), "-y", str(height))

    def wait_for(self, condition: Callable[[str], bool], what: str) -> str:
        """Poll the screen until ``condition(screen)`` holds; fail after the deadline."""
        deadline = time.monotonic() + DEADLINE_SECONDS
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if condition(screen):
                return screen
            time.sleep(0.05)  # polling interval, not a wait for work
        raise AssertionError(f"timed out waiting for {what}; screen was:\n{screen}")

    def wait_for_text(self, *texts: str) -> str:
        """Poll until every one of ``texts`` is on screen in the same capture (a capture can
        fall between two writes of a repaint: what is asserted of a screen is waited for)."""
        return self.wait_for(
            lambda screen: all(text in screen for text in texts), " and ".join(map(repr, texts))
        )

    def wait_for_change(self, before: str, what: str) -> str:
        """Poll until the screen differs from ``before``."""
        return self.wait_for(lambda screen: screen != before, what)

    def close(self) -> None:
        """Kill this test's private tmux server (and the app in it)."""
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=20, check=False
        )


@pytest.fixture
def tmux_app(tmp_path: Path) -> Iterator[Callable[..., TmuxApp]]:
    """Start the app with some arguments in tmux; every started app is killed afterwards."""
    started: list[TmuxApp] = []
    home = tmp_path / "home"
    home.mkdir()

    def start(args: list[str], size: tuple[int, int] = (WIDTH, HEIGHT)) -> TmuxApp:
        app = TmuxApp(args, home, size)
        started.append(app)
        return app

    yield start
    for app in started:
        app.close()


def _details_header(screen: str) -> str:
    """The details pane's header line (``kind  #N  line L ...``) of the selected entry."""
    for line in screen.splitlines():
        if re.search(r"#\d+  line \d+", line):
            return line
    return ""


def details_entry(screen: str) -> int | None:
    """The entry the details pane shows (the ``#N`` of its header), None when none is shown.

    Wait on this, not on the header line changing: the header also changes on its own when the
    entry's token count arrives (``… 18 tokens``), and a wait satisfied by that gets ahead of
    the keys (two moves then land in one frame, and the change waited for never comes)."""
    found = re.search(r"#(\d+)  line \d+", _details_header(screen))
    return int(found.group(1)) if found else None


def test_demo_browse_plan_help_quit(tmux_app: Callable[[list[str]], TmuxApp]) -> None:
    app = tmux_app(["demo"])
    first = app.wait_for_text("sample-session.jsonl")
    app.wait_for(lambda screen: "entries" in screen.splitlines()[0], "the loaded tree")
    first = app.wait_for(
        lambda screen: "q Quit" in screen and details_entry(screen) is not None, "the details"
    )
    # Move in the tree: the details pane follows the cursor to another entry.
    app.send("k", "k", "k")
    app.wait_for(
        lambda screen: details_entry(screen) not in (None, details_entry(first)),
        "the cursor to move",
    )
    # The plan for the selected leaf: regions with their tokens, the cut point.
    app.send("G", "c")
    app.wait_for_text("Plan for leaf", "kept verbatim", "summarized", "cut before #")
    # Help lists every binding, the ones the footer hides too.
    app.send("?")
    app.wait_for_text("Jump to leaf", "Previous filter", "Search", "Quit")
    app.send("?")
    app.send("q")
    done = app.wait_for_text(EXIT_MARK)
    assert f"{EXIT_MARK} 0]" in done, done


def test_control_characters_cannot_damage_the_terminal(
    tmux_app: Callable[[list[str]], TmuxApp], tmp_path: Path
) -> None:
    source = FIXTURES / "bad" / "control-characters-and-ansi-escapes.jsonl"
    session = tmp_path / source.name
    shutil.copyfile(source, session)
    original = session.read_bytes()
    app = tmux_app([str(session)])
    title_before = app.pane_title()
    app.wait_for(
        lambda screen: source.name in screen and "entries" in screen, "the bad file to load"
    )
    # Walk over every row (the tool output full of escapes included) and back.
    app.send("g")
    app.wait_for_text("#0  line")
    app.send("j", "j")
    # The tool result full of escape sequences: its text is shown as text around the removed
    # sequences, and a bare CR cannot overwrite the line.
    app.wait_for_text(
        "tool  #2  line", "red bold-underline", "hyperlink:innocent text", "SAFE␍EVIL"
    )
    # Down to the leaf (#7; #5 and #6 are not rows under the default filter), back up: each
    # key waits for the entry it lands on.
    for key, entry in [("j", 3), ("j", 4), ("j", 7), ("k", 4), ("k", 3)]:
        app.send(key)
        app.wait_for(lambda s, n=entry: details_entry(s) == n, f"{key} to move to #{entry}")
    screen = app.capture()
    # The status line is still on top (no clear screen, no cursor move, no alternate reset).
    assert source.name in screen.splitlines()[0]
    # No title change, no escape sequence beyond tmux's own SGR styling.
    assert app.pane_title() == title_before
    styled = app.capture(escapes=True)
    leftover = SGR_RE.sub("", styled)
    assert "\x1b" not in leftover, repr(leftover[leftover.index("\x1b") - 20 :][:80])
    assert "\x07" not in styled and "\x9b" not in styled
    # The text around the escapes is shown as text.
    assert "PWNED" not in screen
    app.send("q")
    done = app.wait_for_text(EXIT_MARK)
    assert f"{EXIT_MARK} 0]" in done
    assert session.read_bytes() == original  # looking wrote nothing


def _sessions_dir(tmp_path: Path) -> Path:
    """A directory outside HOME with one session in it."""
    directory = tmp_path / "elsewhere" / "sessions"
    directory.mkdir(parents=True)
    shutil.copyfile(
        FIXTURES / "oracle" / "sessions" / "tree-branches.jsonl", directory / "tree-branches.jsonl"
    )
    return directory


@pytest.mark.parametrize("form", ["--sessions-dir", "positional"])
def test_the_picker_opens_on_a_directory_as_the_readme_says(
    tmux_app: Callable[[list[str]], TmuxApp], tmp_path: Path, form: str
) -> None:
    directory = _sessions_dir(tmp_path)
    args = ["--sessions-dir", str(directory)] if form == "--sessions-dir" else [str(directory)]
    app = tmux_app(args)
    screen = app.wait_for_text("Open a session")
    screen = app.wait_for(lambda s: "1 sessions" in s or "1 session " in s, "the scan")
    assert "error" not in screen.lower() and "no such file" not in screen
    app.send("Down", "Enter")
    app.wait_for(
        lambda s: "tree-branches.jsonl" in s and "entries" in s.splitlines()[0],
        "the chosen session",
    )
    app.send("q")
    assert f"{EXIT_MARK} 0]" in app.wait_for_text(EXIT_MARK)


def test_with_no_session_directories_the_picker_suggests_what_to_do(
    tmux_app: Callable[[list[str]], TmuxApp],
) -> None:
    app = tmux_app([])
    screen = app.wait_for_text("No session directories found")
    assert "--sessions-dir" in screen and "demo" in screen


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_the_review_is_readable_at_80x24_and_200x60(
    tmux_app: Callable[..., TmuxApp], size: tuple[int, int]
) -> None:
    app = tmux_app(["demo"], size)
    app.wait_for(lambda screen: "entries" in screen.splitlines()[0], "the loaded tree")
    browsing = app.wait_for_text("r Compact")  # the footer keeps the key that matters
    assert "c Plan" in browsing.splitlines()[-1]
    app.send("c")
    app.wait_for_text("Plan for leaf")
    app.send("r")
    review = app.wait_for(
        lambda s: "d Discard" in s.splitlines()[-1] and "Short summary · done" in s, "the review"
    )
    footer = review.splitlines()[-1]
    for key in ("a Accept", "d Discard", "g Regenerate", "G Keep missing", "z Zoom"):
        assert key in footer
    lines = review.splitlines()
    top = next(n for n, line in enumerate(lines) if "History summary" in line)
    bottom = next(n for n, line in enumerate(lines) if "Short summary" in line)
    assert bottom - top - 1 >= (5 if size[1] < 30 else 20)  # rows of the history summary
    if size[0] < 120:  # the review fills a small screen: no tree column beside it
        assert "◆ leaf" not in review
    else:
        assert "◆ leaf" in review or "┃" in review
    assert "ile-processor.ts" not in review.replace("file-processor.ts", "")  # no lost "f"
    app.send("d")
    after = app.wait_for(
        lambda s: "Accept a" not in s and "r Compact" in s.splitlines()[-1], "the review to close"
    )
    assert "discarded" in after  # the note may wrap at 80 columns
    app.send("q")
    assert f"{EXIT_MARK} 0]" in app.wait_for_text(EXIT_MARK)
