"""The prompt templates ship inside the wheel and are found there (not only in a checkout)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tui_compactor.summarize.prompts import PROMPT_NAMES

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_ships_prompts_and_the_loader_finds_them(tmp_path: Path) -> None:
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if build.returncode != 0 and "No module named" in build.stderr:
        pytest.skip(f"cannot build a wheel here: {build.stderr.strip()[-200:]}")
    assert build.returncode == 0, build.stderr
    (wheel,) = (tmp_path / "dist").glob("tui_compactor-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in PROMPT_NAMES:
            assert f"tui_compactor/prompts/{name}.md" in names
        archive.extractall(site)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from tui_compactor.summarize.prompts import prompts_dir, load_prompt\n"
            "print(prompts_dir()); print(len(load_prompt('system')))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert probe.returncode == 0, probe.stderr
    found, length = probe.stdout.split()
    assert Path(found) == site / "tui_compactor" / "prompts"
    assert int(length) > 100
