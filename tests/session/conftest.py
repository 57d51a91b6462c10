"""Shared fixtures for the session tests: corpus paths and the generated big files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "bad"
SESSIONS = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
BIG_FILES = ("huge-single-line-5mb.jsonl", "very-deep-chain-50k.jsonl")


@pytest.fixture(scope="session")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two generated corpus files (make_big.py), built once into a temp directory."""
    out = tmp_path_factory.mktemp("big-corpus")
    existing = [CORPUS / name for name in BIG_FILES]
    if all(path.exists() for path in existing):
        for path in existing:
            shutil.copy2(path, out / path.name)
    else:
        subprocess.run(
            [sys.executable, str(CORPUS / "make_big.py"), str(out)],
            check=True,
            capture_output=True,
        )
    return out
