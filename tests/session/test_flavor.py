"""Rules that follow the session: ~/.omp -> oh-my-pi, ~/.pi -> pi, else what is in the file."""

from __future__ import annotations

import shutil
from pathlib import Path

from tui_compactor.session.flavor import detect_flavor
from tui_compactor.session.reader import load_session

ROOT = Path(__file__).resolve().parents[2]
OMP = ROOT / "tests" / "fixtures" / "oracle-omp" / "sessions"
PI = ROOT / "tests" / "fixtures" / "oracle" / "sessions"


def place(source: Path, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / source.name
    shutil.copyfile(source, target)
    return target


def test_location_decides_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    omp_dir = home / ".omp" / "agent" / "sessions" / "--work--"
    pi_dir = home / ".pi" / "agent" / "sessions" / "--work--"
    # A pi file under ~/.omp is continued by oh-my-pi, and the other way round.
    in_omp = detect_flavor(load_session(place(PI / "tree-branches.jsonl", omp_dir)), home)
    assert (in_omp.rules, in_omp.reason) == ("omp", "under ~/.omp")
    in_pi = detect_flavor(load_session(place(OMP / "omp-methods.jsonl", pi_dir)), home)
    assert (in_pi.rules, in_pi.reason) == ("pi", "under ~/.pi")


def test_a_symlink_into_omp_counts_as_omp(tmp_path: Path) -> None:
    home = tmp_path / "home"
    real = place(PI / "tree-branches.jsonl", home / ".omp" / "agent" / "sessions" / "x")
    link = tmp_path / "elsewhere.jsonl"
    link.symlink_to(real)
    assert detect_flavor(load_session(link), home).rules == "omp"


def test_content_decides_elsewhere(tmp_path: Path) -> None:
    home = tmp_path / "home"
    titled = detect_flavor(load_session(OMP / "omp-methods.jsonl"), home)
    assert titled.rules == "omp" and titled.reason == "omp title slot"
    assert detect_flavor(load_session(OMP / "omp-tree.jsonl"), home).rules == "omp"
    pi = detect_flavor(load_session(PI / "tree-compacted.jsonl"), home)
    assert (pi.rules, pi.reason) == ("pi", "no omp content")
    # No title slot: an oh-my-pi compaction field is enough.
    lines = (OMP / "omp-methods.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    untitled = tmp_path / "untitled.jsonl"
    untitled.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = detect_flavor(load_session(untitled), home)
    assert found.rules == "omp" and found.reason.startswith("omp compaction")
