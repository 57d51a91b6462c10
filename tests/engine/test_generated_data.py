"""The generated oracle sessions are reproducible, and their goldens come from the reference."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "oracle"
ROOT = HERE.parents[1]
PI_HOME = Path("/tmp/pi-oracle")


def _pi_package() -> Path | None:
    """The pi 0.73.1 package: $PI_CODING_AGENT_DIR (as .ci/run sets it), else /tmp/pi-oracle."""
    env = os.environ.get("PI_CODING_AGENT_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(PI_HOME / "node_modules" / "@mariozechner" / "pi-coding-agent")
    return next((path for path in candidates if (path / "package.json").is_file()), None)


def test_generator_reproduces_the_committed_sessions(tmp_path: Path) -> None:
    from tests.engine import gen_sessions

    assert gen_sessions.main([str(tmp_path)]) == 0
    made = sorted(path.name for path in tmp_path.glob("*.jsonl"))
    assert made == sorted(path.name for path in (DATA / "sessions").glob("*.jsonl"))
    for name in made:
        assert (tmp_path / name).read_bytes() == (DATA / "sessions" / name).read_bytes(), name


@pytest.mark.node
@pytest.mark.skipif(
    shutil.which("node") is None or _pi_package() is None,
    reason="node or the pi 0.73.1 package is not installed",
)
def test_one_golden_regenerates_identically() -> None:
    """Re-running the oracle on a generated session reproduces its committed golden."""
    session = DATA / "sessions" / "gen-setting-changes.jsonl"
    result = subprocess.run(
        ["node", str(ROOT / "tools" / "oracle" / "pi_oracle.mjs"), str(session)],
        env={**os.environ, "PI_CODING_AGENT_DIR": str(_pi_package())},
        capture_output=True,
        timeout=300,
        check=True,
    )
    fresh = json.loads(result.stdout)
    committed = json.loads((DATA / "golden" / "gen-setting-changes.json").read_text("utf-8"))
    assert fresh == committed
    assert fresh["notes"] == []
