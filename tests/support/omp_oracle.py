"""Run oh-my-pi's own code (the shared oracle kit, under Bun) on a session file.

The one place the tests find and run the oh-my-pi reference:

* ``skip_reason()``: why the live oh-my-pi tests cannot run here (None when they can), for a
  module-level ``skipif``;
* ``run_bun(script, *args)``: a TypeScript file run by the reference's Bun, with ``OMP_REF``
  and ``OMP_ORACLE_DIR`` set (``omp_api_writer.ts`` writes sessions through oh-my-pi's API);
* ``omp_golden(path)``: the oracle's golden JSON for ``path``; it skips the test with the
  reason when Bun, the install or the kit is missing, and checks that oh-my-pi accepted the
  file and left it untouched.

Where to look: ``OMP_REF`` (the install, default ``~/.cache/tuic-bars/ompref``) and
``OMP_ORACLE_DIR`` (the kit holding ``omp_oracle.ts``, default ``shared/oracle-omp`` next to
the checkout or the worktree directory). ``.ci/run`` installs both.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def reference_dir() -> Path:
    """The oh-my-pi install (``OMP_REF``, else the shared cache)."""
    configured = os.environ.get("OMP_REF")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "tuic-bars" / "ompref"


def kit_dir() -> Path | None:
    """The oracle kit holding ``omp_oracle.ts``, or None."""
    configured = os.environ.get("OMP_ORACLE_DIR")
    candidates = [Path(configured)] if configured else []
    candidates += [parent / "shared" / "oracle-omp" for parent in ROOT.parents]
    for candidate in candidates:
        if (candidate / "omp_oracle.ts").is_file():
            return candidate
    return None


def bun_path() -> Path:
    """Bun as the oh-my-pi install ships it."""
    return reference_dir() / "node_modules" / ".bin" / "bun"


def skip_reason() -> str | None:
    """Why oh-my-pi cannot run here, or None when it can."""
    if kit_dir() is None:
        return (
            "the oh-my-pi oracle kit (shared/oracle-omp/omp_oracle.ts) is not next to the "
            "repository: set OMP_ORACLE_DIR"
        )
    bun = bun_path()
    if not bun.exists():
        return (
            f"Bun and the oh-my-pi reference are not installed ({bun}): set OMP_REF or run .ci/run"
        )
    return None


def run_bun(
    script: Path, *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with the reference's Bun (skips the test when oh-my-pi cannot run)."""
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    kit = kit_dir()
    assert kit is not None
    return subprocess.run(
        [str(bun_path()), str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=str(cwd) if cwd is not None else None,
        env={**os.environ, "OMP_REF": str(reference_dir()), "OMP_ORACLE_DIR": str(kit)},
    )


def omp_golden(path: Path, *extra: str) -> dict[str, Any]:
    """oh-my-pi's answers for the session at ``path``: it loads the file (never writing it:
    the kit works on a copy), accepts it, and notes nothing it could not answer."""
    before = path.read_bytes()
    kit = kit_dir()
    path = path.absolute()  # the kit runs in the session's folder
    done = run_bun((kit or Path()) / "omp_oracle.ts", str(path), *extra, cwd=path.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert path.read_bytes() == before
    golden: dict[str, Any] = json.loads(done.stdout)
    assert golden["load"]["accepted"], golden["load"]
    assert golden["notes"] == []
    return golden
