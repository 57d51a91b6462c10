"""The program as a user runs it: ``python -m tui_compactor ARGS`` in a child process, from
the repository root, with no terminal on stdin (a question it asks is answered "no")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = [sys.executable, "-m", "tui_compactor"]


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """Run the program with ``args``; its output is captured, its exit status is not checked."""
    return subprocess.run([*PROGRAM, *args], cwd=ROOT, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, check=False)  # fmt: skip


def cli_json(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
    """Run the program with ``args`` and ``--json``; asserts it succeeded, returns the JSON."""
    result = cli(*args, "--json", env=env, timeout=timeout)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)
