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


def _bun_env() -> dict[str, str]:
    """The environment a Bun process of the reference runs in (skips the test when oh-my-pi
    cannot run here)."""
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    kit = kit_dir()
    assert kit is not None
    return {**os.environ, "OMP_REF": str(reference_dir()), "OMP_ORACLE_DIR": str(kit)}


def run_bun(
    script: Path, *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with the reference's Bun (skips the test when oh-my-pi cannot run)."""
    env = _bun_env()
    return subprocess.run(
        [str(bun_path()), str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=str(cwd) if cwd is not None else None,
        env=env,
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


PROBE = ROOT / "tests" / "engine" / "omp_open_probe.ts"


def omp_open_verdicts(
    paths: list[Path], step_seconds: float = 4.0, start_seconds: float = 240.0
) -> dict[str, dict[str, Any]]:
    """What oh-my-pi does when it opens each file (``omp_open_probe.ts``): per path,
    ``refuses`` (``open`` or the context at the leaf throws; ``error`` says what),
    ``treeHangs`` (``getTree`` never returns) and ``navigationHangs`` (the branch-summary walk
    from the leaf to some entry never returns; ``hangsOn`` names the step).

    A step that outlasts ``step_seconds`` is taken as a hang: the loops it can fall into grow
    its memory by about 100 MB a second, so the process is killed (every step on these files
    takes milliseconds otherwise), and the remaining files go on in a new process.
    """
    import select
    import time

    env = _bun_env()
    verdicts: dict[str, dict[str, Any]] = {}
    queue: list[tuple[list[str], bool]] = [([str(path) for path in paths], False)]
    while queue:
        files, skip_tree = queue.pop(0)
        argv = [str(bun_path()), str(PROBE), *(["--skip-tree"] if skip_tree else []), *files]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        assert process.stdout is not None
        buffer = b""
        current: str | None = None
        step: str | None = None
        deadline = time.monotonic() + start_seconds
        done: set[str] = set()
        hung = False
        while True:
            wait = deadline - time.monotonic()
            ready, _, _ = select.select([process.stdout], [], [], max(wait, 0))
            if not ready:
                process.kill()
                hung = True
                break
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                if line.startswith("file "):
                    current, step = line[5:], None
                elif line.startswith("step "):
                    step = line[5:]
                elif line.startswith("{") and current is not None:
                    result = json.loads(line)
                    verdict = verdicts.setdefault(current, _verdict())
                    if not result["opened"]:
                        verdict.update(refuses=True, error=result.get("error"))
                    done.add(current)
                    current = None
                deadline = time.monotonic() + step_seconds
        process.wait()
        stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
        process.stderr and process.stderr.close()
        process.stdout.close()
        if not hung:
            missing = [name for name in files if name not in done]
            assert not missing, f"the probe stopped before {missing}: {stderr[-2000:]}"
            continue
        assert current is not None and step is not None, f"the probe did not start: {stderr}"
        verdict = verdicts.setdefault(current, _verdict())
        verdict.setdefault("hangsOn", []).append(step)
        if step == "tree":
            verdict["treeHangs"] = True
            queue.append(([current], True))  # and the navigation walks?
        elif step.startswith("navigate"):
            verdict["navigationHangs"] = True
        else:
            verdict.update(refuses=True, error=f"{step} never returns")
        rest = files[files.index(current) + 1 :]
        if rest:
            queue.append((rest, skip_tree))
    return verdicts


def _verdict() -> dict[str, Any]:
    return {"refuses": False, "error": None, "treeHangs": False, "navigationHangs": False}
