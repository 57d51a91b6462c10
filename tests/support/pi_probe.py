"""pi itself on a session file, for the interop tests: ``pi_session_probe.mjs`` (what pi sees)
and ``pi_agent.mjs`` (pi appending as a running agent), both under Node. A test skips, with the
reason, only when Node or the pi package is missing."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "tests" / "support"
PROBE = SUPPORT / "pi_session_probe.mjs"
AGENT = SUPPORT / "pi_agent.mjs"
PACKAGE_MISSING = 3
"""The scripts' exit status when pi's package is not found (``pi_package.mjs``)."""
SKIP_PACKAGE = "@mariozechner/pi-coding-agent not found (set PI_CODING_AGENT_DIR): pi test skipped"


def node_or_skip() -> str:
    """The ``node`` executable; skips the test when there is none."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: pi test skipped")
    return node


def pi_sees(path: Path) -> dict[str, Any]:
    """What pi's ``SessionManager`` makes of ``path``: its version, leaf id, entry count,
    active branch ids, context messages and what it sends for each (``llm``)."""
    done = subprocess.run(
        [node_or_skip(), str(PROBE), str(path)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    if done.returncode == PACKAGE_MISSING:
        pytest.skip(SKIP_PACKAGE)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@contextmanager
def start_pi_agent(
    path: Path, count: int, max_pause_ms: int | str, seed: int = 1
) -> Iterator[subprocess.Popen[str]]:
    """pi appending ``count`` messages to ``path`` with pauses (see ``pi_agent.mjs``), entered
    once it has said it is ready. On leaving, an agent still running is killed; it is waited
    for and its pipes are closed (a pipe left open is a ``ResourceWarning`` when the ``Popen``
    is collected, in whichever test runs then)."""
    argv = [node_or_skip(), str(AGENT), str(path), str(count), str(max_pause_ms), str(seed)]
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT,
    ) as process:  # fmt: skip
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if process.poll() == PACKAGE_MISSING or not line:
                process.wait(timeout=10)
                pytest.skip(SKIP_PACKAGE)
            assert line.strip() == "ready"
            yield process
        finally:
            if process.poll() is None:
                process.kill()
