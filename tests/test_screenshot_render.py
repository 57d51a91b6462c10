"""The screenshots' PNGs show the terminal's text as it was: no space lost or doubled where the
style changes, an emoji drawn rather than a box. Rendered with the script's own converter."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    script = ROOT / "scripts" / "screenshots.py"
    spec = importlib.util.spec_from_file_location("screenshots", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _has_renderer() -> bool:
    if shutil.which("rsvg-convert"):
        return True
    return importlib.util.find_spec("cairosvg") is not None


pytestmark = pytest.mark.skipif(
    not _has_renderer(), reason="no SVG renderer (rsvg-convert or cairosvg) installed"
)


def _svg(tmp_path: Path, text: Text, name: str) -> Path:
    console = Console(
        record=True,
        width=40,
        force_terminal=True,
        color_system="truecolor",
        file=open("/dev/null", "w"),
    )  # noqa: SIM115 - recorded, not shown
    console.print(text)
    path = tmp_path / f"{name}.svg"
    path.write_text(console.export_svg(title="t"), encoding="utf-8")
    return path


def _ink_columns(png: Path) -> list[bool]:
    """Per pixel column of the text row: does any pixel differ from the background?"""
    from PIL import Image

    image = Image.open(png).convert("RGB")
    width, height = image.size
    # The one text line sits below the window title bar; sample its band.
    band = image.crop((0, int(height * 0.55), width, int(height * 0.9)))
    background = band.getpixel((width - 30, 2))
    pixels = band.load()
    return [
        any(
            sum(abs(a - b) for a, b in zip(pixels[x, y], background, strict=True)) > 60
            for y in range(band.size[1])
        )
        for x in range(width)
    ]


def test_a_space_at_a_style_change_stays_a_space(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    script = _script()
    styled = Text.assemble(
        ("#1005 ", "bold"), ("assistant ", "bold cyan"), ("432", "bold"), (" of 987", "")
    )
    plain = Text("#1005 assistant 432 of 987", style="bold")
    pngs = []
    for name, text in (("styled", styled), ("plain", plain)):
        png = tmp_path / f"{name}.png"
        assert script.svg_to_png(_svg(tmp_path, text, name), png, width=800) is not None
        pngs.append(_ink_columns(png))
    styled_ink, plain_ink = pngs

    # The gaps between words fall in the same columns whether or not the style changes there
    # (before, the style change dropped the space: "#1005assistant", "432of").
    def gaps(ink: list[bool]) -> list[int]:
        runs, start = [], None
        for x, inked in enumerate(ink):
            if not inked and start is None:
                start = x
            elif inked and start is not None:
                if x - start >= 15:  # a space, not the room between two letters
                    runs.append((start + x) // 2)
                start = None
        return runs

    styled_gaps, plain_gaps = gaps(styled_ink), gaps(plain_ink)
    assert len(styled_gaps) == len(plain_gaps) >= 4
    assert all(abs(a - b) <= 6 for a, b in zip(styled_gaps, plain_gaps, strict=True))


def _font_with_thumbs_up() -> bool:
    if not shutil.which("fc-list"):
        return False
    found = subprocess.run(
        ["fc-list", ":charset=1f44d", "family"], capture_output=True, text=True
    ).stdout
    return bool(found.strip())


@pytest.mark.skipif(
    not (shutil.which("rsvg-convert") and _font_with_thumbs_up()),
    reason="needs rsvg-convert and a font with U+1F44D (fonts-symbola)",
)
def test_an_emoji_is_drawn_not_as_a_box(tmp_path: Path) -> None:
    """The thumbs-up the sample session's assistant replies with: rendered through the
    script's converter it differs from a character no font has (which is drawn as a box)."""
    pytest.importorskip("PIL")
    script = _script()
    inks = []
    for name, char in (("emoji", "👍"), ("missing", "\U000f0000")):
        png = tmp_path / f"{name}.png"
        script.svg_to_png(_svg(tmp_path, Text(f"ok {char} !"), name), png, width=800)
        inks.append(_ink_columns(png))
    emoji, missing = inks
    assert any(emoji) and emoji != missing
