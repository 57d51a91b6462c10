"""The headless packages never import Textual or Rich (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import importlib, pkgutil, sys
import tui_compactor
names = []
for package in ("session", "engine", "summarize", "workbench"):
    module = importlib.import_module(f"tui_compactor.{package}")
    names.append(module.__name__)
    for info in pkgutil.walk_packages(module.__path__, prefix=module.__name__ + "."):
        importlib.import_module(info.name)
        names.append(info.name)
bad = sorted(name for name in sys.modules if name.split(".")[0] in ("textual", "rich"))
print(len(names))
print(",".join(bad))
"""


def test_headless_packages_import_no_textual_or_rich() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    count_line, bad_line = result.stdout.splitlines()[-2:]
    assert int(count_line) >= 8  # the engine alone has more modules than that
    assert bad_line == "", f"UI libraries imported by headless packages: {bad_line}"
