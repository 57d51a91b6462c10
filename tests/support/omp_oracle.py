"""Run oh-my-pi's own code (the shared oracle kit, under Bun) on a session file.

``omp_golden(path)`` returns the oracle's golden JSON for ``path``, or calls ``pytest.skip``
with the reason when Bun, the oh-my-pi install or the kit is missing. Where to look:
``OMP_REF`` (the install, default ``~/.cache/tuic-bars/ompref``) and ``OMP_ORACLE_DIR`` (the
kit holding ``omp_oracle.ts``, default ``../shared/oracle-omp`` next to the checkout or the
worktree directory).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _reference() -> Path:
    configured = os.environ.get("OMP_REF")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "tuic-bars" / "ompref"


def _kit() -> Path | None:
    configured = os.environ.get("OMP_ORACLE_DIR")
    candidates = [Path(configured)] if configured else []
    candidates += [parent / "shared" / "oracle-omp" for parent in ROOT.parents]
    for candidate in candidates:
        if (candidate / "omp_oracle.ts").is_file():
            return candidate
    return None


def omp_golden(path: Path, *extra: str) -> dict[str, Any]:
    """oh-my-pi's answers for the session at ``path`` (skips the test when it cannot run)."""
    reference = _reference()
    bun = reference / "node_modules" / ".bin" / "bun"
    if not bun.exists():
        pytest.skip(f"bun not found at {bun}: oh-my-pi oracle test skipped (set OMP_REF)")
    kit = _kit()
    if kit is None:
        pytest.skip("omp_oracle.ts not found: oh-my-pi oracle test skipped (set OMP_ORACLE_DIR)")
    result = subprocess.run(
        [str(bun), str(kit / "omp_oracle.ts"), str(path), *extra],
        capture_output=True, text=True, timeout=300, cwd=str(path.parent),
        env={**os.environ, "OMP_REF": str(reference)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    golden: dict[str, Any] = json.loads(result.stdout)
    return golden
