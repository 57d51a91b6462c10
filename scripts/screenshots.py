"""Regenerate ``screenshots/``: the real app on the bundled sample session, as the demo runs.

Runs the app headless (Textual's ``run_test``) with the demo's configuration (the offline
summarizer) at a fixed size, pressing the keys a user would, and saves SVG screenshots of:

* ``main.svg`` — tree, gauge, chart and entry details;
* ``plan.svg`` — the compaction plan for the leaf (regions marked, tokens per region);
* ``compaction.svg`` — the review of a finished compaction at the default cut: summaries, short
  summary, fidelity audit (the offline summarizer, as the demo runs it: no model anywhere);
* ``navigate.svg`` — the navigation dialog on a node of another branch;
* ``sweep.svg`` — the plan pane's sweep over every valid cut (kept tokens, dependencies);
* ``breakdown.svg`` — the Window tab: what fills the context window at the leaf;
* ``timeline.svg`` — every compaction and branch summary with its hindsight score.

PNG copies are written too, by ``rsvg-convert`` (Debian ``librsvg2-bin``; with ``fonts-dejavu``
and ``fonts-symbola`` every glyph is drawn; this librsvg draws ``fonts-noto-color-emoji`` glyphs
a few pixels tall, so leave that font out) or else ``cairosvg`` (the ``screenshots`` extra; emoji
come out as boxes); with neither, only SVG.
Usage: ``python scripts/screenshots.py [--out DIR] [--size 140x40]``.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FALLBACK_SAMPLE = ROOT / "tests" / "fixtures" / "sessions" / "refactor-session-v3.jsonl"


def sample_session() -> Path:
    """The bundled demo sample, or a small branched fixture when the sample is not built."""
    from tui_compactor.commands.demo import sample_path

    sample = sample_path()
    if sample.is_file():
        return sample
    print(f"note: {sample} is missing; using {FALLBACK_SAMPLE.name}", file=sys.stderr)
    return FALLBACK_SAMPLE


async def _until(pilot: Any, condition: Callable[[], bool], what: str, seconds: float = 30) -> None:
    """Let the app run until ``condition`` holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"screenshots: timed out waiting for {what}")
        await pilot.pause(0.02)


async def _settle(pilot: Any) -> None:
    """Wait until no worker is pending or running and their messages are handled."""
    from textual.worker import WorkerState

    app = pilot.app

    def idle() -> bool:
        return not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers)

    from tui_compactor.ui.widgets.redraw import SHRINK_AFTER

    for _ in range(50):
        await _until(pilot, idle, "workers to finish")
        await pilot.pause()
        if idle():
            # Rows a pane kept for content to come are given back once it has settled.
            await pilot.pause(SHRINK_AFTER + 0.1)
            return


PNG_WIDTH = 1600
PNG_FONT = "DejaVu Sans Mono"
"""An installed monospace font for the PNGs (Rich's SVG asks for Fira Code from a CDN, which
an SVG renderer outside a browser cannot fetch: it then falls back to a proportional font)."""


def svg_for_png(svg_text: str) -> str:
    """Rich's SVG made to render outside a browser exactly as the terminal showed it.

    * The web font is replaced by an installed monospace one (``PNG_FONT``): with a proportional
      fallback, bold digits overflow their cells and glue ``#1005`` to ``assistant``.
    * ``xml:space="preserve"``: each text run starts or ends with no-break spaces that renderers
      otherwise drop (``432of``, ``183ktokens``).
    * Runs with wide characters get a ``textLength`` of their cells (see ``_cell_length``).
    """
    text = re.sub(
        r"font-family:\s*Fira Code,\s*monospace;",
        f'font-family: "{PNG_FONT}", monospace;',
        svg_text,
    )
    text = text.replace(
        '<svg class="rich-terminal"', '<svg xml:space="preserve" class="rich-terminal"', 1
    )
    return _TEXT_RUN.sub(_cell_length, text)


_TEXT_RUN = re.compile(r'(<text [^>]*?textLength=")([\d.]+)("[^>]*>)([^<]*)(</text>)')


def _cell_length(match: re.Match[str]) -> str:
    """A text run's ``textLength`` in terminal cells: Rich counts characters, so a run with a
    wide character (an emoji takes two cells) was squeezed into too little room."""
    from rich.cells import cell_len

    content = html.unescape(match.group(4))
    if cell_len(content) <= len(content):
        return match.group(0)
    width = float(match.group(2)) / len(content) * cell_len(content)
    return f"{match.group(1)}{width:g}{match.group(3)}{match.group(4)}{match.group(5)}"


def svg_to_png(svg: Path, png: Path, width: int = PNG_WIDTH) -> str | None:
    """Render ``svg`` to ``png``; returns the renderer used, or None when none is installed.

    ``rsvg-convert`` (librsvg, Debian ``librsvg2-bin``) is preferred: through Pango it falls
    back per glyph, so an emoji (with ``fonts-symbola``) is drawn instead of a box. ``cairosvg``
    (the ``screenshots`` extra) has no glyph fallback.
    """
    prepared = svg_for_png(svg.read_text(encoding="utf-8")).encode("utf-8")
    rsvg = shutil.which("rsvg-convert")
    if rsvg:
        subprocess.run([rsvg, "-w", str(width), "-o", str(png)], input=prepared, check=True)
        return "rsvg-convert"
    try:
        import cairosvg  # type: ignore[import-untyped]
    except (ImportError, OSError):
        return None
    cairosvg.svg2png(bytestring=prepared, write_to=str(png), output_width=width)
    return "cairosvg"


def _save(app: Any, out_dir: Path, name: str, pngs: list[Path]) -> Path:
    """Save an SVG screenshot and its PNG (when a renderer is installed)."""
    svg = out_dir / f"{name}.svg"
    app.save_screenshot(filename=svg.name, path=str(out_dir))
    png = svg.with_suffix(".png")
    renderer = svg_to_png(svg, png)
    if renderer is not None:
        pngs.append(png)
    return svg


def _other_branch_node(session: Any) -> int | None:
    """A message off the active path (near the tip of another branch), for the dialog."""
    active = set(session.path_to(session.leaf)) if session.leaf is not None else set()
    for leaf in session.leaves:
        if leaf in active:
            continue
        for index in reversed(session.path_to(leaf)):
            if index in active:
                break
            if session.entries[index].type == "message" and session.entries[index].role in (
                "assistant",
                "user",
            ):
                return int(index)
    return None


async def _shoot(session_path: Path, out_dir: Path, size: tuple[int, int]) -> list[Path]:
    """Drive the app as a user runs the demo and save each view.

    The demo's configuration (the offline summarizer, no model anywhere), the default cut: what
    ``tui-compactor demo`` shows on a fresh machine.
    """
    from tui_compactor.commands.demo import demo_config
    from tui_compactor.ui.app import CompactorApp

    saved: list[Path] = []
    pngs: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="tuic-shots-") as tmp:
        copy = Path(tmp) / session_path.name
        shutil.copyfile(session_path, copy)
        app = CompactorApp(copy, config=demo_config(), profile_name="offline", follow=False)
        app.gauge_debounce = 0
        app.settings_debounce = 0
        async with app.run_test(size=size) as pilot:
            await _settle(pilot)
            session = app.session
            # Main: cursor a few rows up from the leaf so the gauge shows a mid-session node.
            await pilot.press("k", "k", "k")
            await _settle(pilot)
            saved.append(_save(app, out_dir, "main", pngs))
            # Plan for the leaf, at the default cut.
            await pilot.press("G", "c")
            await _settle(pilot)
            await _until(pilot, lambda: getattr(app, "plan", None) is not None, "the plan")
            saved.append(_save(app, out_dir, "plan", pngs))
            saved.extend(await _analysis_shots(app, pilot, out_dir, pngs))
            # Back to the default cut (the analysis shots moved it), then compact with the
            # offline summarizer and show the finished review: summaries, short summary, audit.
            await pilot.press("escape")
            await _settle(pilot)
            await pilot.press("G", "c")
            await _settle(pilot)
            await _until(pilot, lambda: getattr(app, "plan", None) is not None, "the plan")
            panel = await _start_compaction(app, pilot)
            await _until(pilot, lambda: not panel.running, "the offline compaction")
            await _settle(pilot)
            for view in panel.candidates:  # read from the top, as a reviewer scrolls back up
                for pane in view.panes.values():
                    pane.scroll_home(animate=False)
            await _settle(pilot)
            saved.append(_save(app, out_dir, "compaction", pngs))
            await pilot.press("d")  # discard: nothing is written
            await _settle(pilot)
            # Navigation dialog on another branch.
            await _open_navigation(app, pilot, session)
            saved.append(_save(app, out_dir, "navigate", pngs))
            await pilot.press("escape")
    return saved + pngs


async def _analysis_shots(app: Any, pilot: Any, out_dir: Path, pngs: list[Path]) -> list[Path]:
    """The analysis views: the sweep under the plan (scrolled into view), what fills the
    window at the leaf (tab 6), and the compaction timeline (T). Leaves the plan tab showing."""
    from tui_compactor.ui.widgets.plan_view import PlanView

    saved = []
    for _ in range(10):  # back to a cut that facts cross, so the list below the chart shows
        await pilot.press("left_square_bracket")
        await _settle(pilot)
    app.query_one(PlanView).scroll_to_widget(app.query_one("#plan-sweep"), animate=False)
    await _settle(pilot)
    saved.append(_save(app, out_dir, "sweep", pngs))
    await pilot.press("6")
    await _settle(pilot)
    saved.append(_save(app, out_dir, "breakdown", pngs))
    await pilot.press("T")
    await _settle(pilot)
    from textual.widgets import DataTable

    def timeline_filled() -> bool:
        tables = app.screen.query(DataTable)
        return bool(tables) and tables.first().row_count > 0

    await _until(pilot, timeline_filled, "the timeline's rows")
    # The table widens its columns to their cells on the frames after the rows arrive.
    await pilot.pause(0.2)
    saved.append(_save(app, out_dir, "timeline", pngs))
    await pilot.press("escape", "3")
    await _settle(pilot)
    return saved


async def _start_compaction(app: Any, pilot: Any) -> Any:
    """Press the app's compact key and return the compaction panel it shows."""
    from tui_compactor.ui.widgets.compaction import CompactionPanel

    await pilot.press("r")
    await _until(pilot, lambda: bool(app.screen.query(CompactionPanel)), "the compaction panel")
    return app.screen.query(CompactionPanel).first()


async def _open_navigation(app: Any, pilot: Any, session: Any) -> None:
    """Select a node on another branch and press enter: the app's navigation dialog."""
    from tui_compactor.ui.screens.navigate import NavigateDialog

    target = _other_branch_node(session)
    if target is None:
        target = max(0, (session.leaf or 0) - 5)
    app.query_one("#tree").move_to_entry(target)
    await _settle(pilot)
    await pilot.press("enter")
    await _until(pilot, lambda: isinstance(app.screen, NavigateDialog), "the navigation dialog")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, take the screenshots, print what was written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--size", default="140x40", help="terminal size, COLSxROWS")
    parser.add_argument("--session", type=Path, help="session file (default: the demo sample)")
    args = parser.parse_args(argv)
    columns, rows = (int(part) for part in args.size.lower().split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    session = args.session or sample_session()
    written = asyncio.run(_shoot(session, args.out, (columns, rows)))
    for path in written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
