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


def _flavor_by_reading_every_record(session, home: Path) -> tuple[str, str]:
    """The rule spelled out the slow way (every entry, then the newest 50 compaction records
    re-read): the indexer's noted facts must decide exactly the same."""
    from tui_compactor.session.flavor import (
        MAX_COMPACTIONS_READ,
        OMP_ONLY_COMPACTION_FIELDS,
        OMP_ONLY_TYPES,
    )

    path = session.path
    for candidate in (path.absolute(), path.resolve()):
        for root, rules in ((".omp", "omp"), (".pi", "pi")):
            if candidate.is_relative_to(home / root):
                return rules, f"under ~/{root}"
    if session.title_slot is not None:
        return "omp", "omp title slot"
    compactions = []
    for entry in session.entries:
        if entry.type in OMP_ONLY_TYPES:
            return "omp", f"omp {entry.type} entry"
        if entry.type == "compaction":
            compactions.append(entry)
    for entry in compactions[-MAX_COMPACTIONS_READ:]:
        generator = entry.data.get("generator")
        ours = isinstance(generator, dict) and generator.get("name") == "tui-compactor"
        for name in ("method",) if ours else OMP_ONLY_COMPACTION_FIELDS:
            value = entry.data.get(name)
            if value is not None:
                detail = f" {value}" if name == "method" and isinstance(value, str) else ""
                return "omp", f"omp compaction {name}{detail}"
    return "pi", "no omp content"


CORPUS = sorted((ROOT / "tests" / "fixtures").rglob("*.jsonl"))


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_the_noted_facts_decide_as_reading_every_record(path: Path, tmp_path: Path) -> None:
    session = load_session(path)
    found = detect_flavor(session, tmp_path)
    assert (found.rules, found.reason) == _flavor_by_reading_every_record(session, tmp_path)


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _chain(n: int, first: int = 0) -> list[dict]:
    return [
        {"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}" if i else None,
         "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": f"hello {i}", "timestamp": 0}}
        for i in range(first, first + n)
    ]  # fmt: skip


HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z",
          "cwd": "/w"}  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True])
def test_far_into_a_file_and_only_the_newest_compactions(tmp_path: Path, lazy: bool) -> None:
    home = tmp_path / "home"
    # An oh-my-pi-only entry type 5000 entries in decides, whatever comes after it.
    records = [HEADER, *_chain(5000)]
    records.append({"type": "mode_change", "id": "x1", "parentId": "m4999",
                    "timestamp": "2026-01-01T00:00:00.000Z", "mode": "plan"})  # fmt: skip
    found = detect_flavor(load_session(_write(tmp_path / "a.jsonl", records), lazy=lazy), home)
    assert (found.rules, found.reason) == ("omp", "omp mode_change entry")
    # An oh-my-pi compaction field counts only among the newest 50 compactions (as before).
    records = [HEADER, *_chain(10)]
    for n in range(60):
        record = {"type": "compaction", "id": f"c{n}", "parentId": records[-1]["id"],
                  "timestamp": "2026-01-01T00:00:00.000Z", "summary": "s",
                  "firstKeptEntryId": "m9", "tokensBefore": 10}  # fmt: skip
        if n == 5:
            record["method"] = "remote"
        records.append(record)
    session = load_session(_write(tmp_path / "b.jsonl", records), lazy=lazy)
    assert detect_flavor(session, home).reason == "no omp content"
    records[-1]["shortSummary"] = "short"
    session = load_session(_write(tmp_path / "c.jsonl", records), lazy=lazy)
    found = detect_flavor(session, home)
    assert (found.rules, found.reason) == ("omp", "omp compaction shortSummary")
    assert _flavor_by_reading_every_record(session, home) == (found.rules, found.reason)
