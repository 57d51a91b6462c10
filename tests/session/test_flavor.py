"""Rules that follow the session: ~/.omp -> oh-my-pi, ~/.pi -> pi, else what is in the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

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


# What oh-my-pi 18.2.3's loader reports for these corpus files (its golden `load` fields, run
# with ../shared/oracle-omp/omp_oracle.ts): malformedRecords 4 / 1 / 0 / 0, migrated only v2.
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("invalid-json-middle.jsonl", "4 malformed lines"),
        ("truncated-last-line.jsonl", "1 malformed line "),
        ("v2-hookMessage.jsonl", "version 2 file"),
        ("not-utf8.jsonl", None),
        ("crlf-lines.jsonl", None),
    ],
)
def test_lint_warns_when_oh_my_pis_next_append_rewrites_the_file(name, expected, capsys) -> None:
    from tui_compactor.cli import main

    path = Path(__file__).resolve().parents[1] / "fixtures" / "bad" / name
    before = path.read_bytes()
    main(["lint", str(path), "--json"])
    report = json.loads(capsys.readouterr().out)
    if expected is None:
        assert report["ompRewritesOnAppend"] is None
    else:
        assert expected in report["ompRewritesOnAppend"]
        main(["lint", str(path)])
        assert "[omp-rewrite]" in capsys.readouterr().out
    assert path.read_bytes() == before
