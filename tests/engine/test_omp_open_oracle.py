"""``lint --rules omp`` says which files oh-my-pi 18.2.3 refuses or hangs on, held to oh-my-pi.

The corpus: the hostile-file corpus (``tests/fixtures/bad``), the fuzz findings, the shared
sessions and the generated ones (``tests/engine/data/oracle``; their usages have no ``cost``),
plus small variants written here, one break each (``VARIANTS``). For every file our verdict
(``session.omp_open.omp_open_problems``: refuses, its tree hangs, a navigation hangs) must be
what oh-my-pi's own code does when it opens the file (``omp_open_probe.ts``, run live; skipped
with the reason without Bun) and what it did when the stored verdicts were recorded
(``tests/fixtures/oracle-omp/open-verdicts.json``, checked without Bun too). We open every one
of these files: none is lost.

``TUIC_OMP_OPEN_RECORD=1`` rewrites the stored verdicts from the live run.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.omp_oracle import omp_open_verdicts, skip_reason
from tui_compactor.session.omp_open import (
    OMP_HANGS_NAVIGATION,
    OMP_HANGS_TREE,
    OMP_REFUSES,
    omp_open_problems,
)
from tui_compactor.session.reader import load_session

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
STORED = FIXTURES / "oracle-omp" / "open-verdicts.json"
CORPUS = sorted(
    [
        *(FIXTURES / "bad").glob("*.jsonl"),
        *(FIXTURES / "fuzz").glob("*.jsonl"),
        *(FIXTURES / "sessions").glob("*.jsonl"),
        *(FIXTURES / "oracle" / "sessions").glob("*.jsonl"),
        *(FIXTURES / "oracle-omp" / "sessions").glob("*.jsonl"),
        *(REPO / "tests" / "engine" / "data" / "oracle" / "sessions").glob("*.jsonl"),
    ]
)

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0f0c2a9e-1b7d-4c3e-9a51-2d8f6e4b7c10",
    "timestamp": "2026-01-05T10:00:00.000Z",
    "cwd": "/home/dev/project",
}
COST = {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}


def _usage(**change: Any) -> dict[str, Any]:
    usage = {"input": 120, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150}
    return {**usage, "cost": dict(COST), **change}


def _entry(number: int, message: Any = None, **fields: Any) -> dict[str, Any]:
    record = {
        "type": "message",
        "id": f"e{number:07d}",
        "parentId": f"e{number - 1:07d}" if number > 1 else None,
        "timestamp": f"2026-01-05T10:00:{number:02d}.000Z",
    }
    if message is not None:
        record["message"] = message
    record.update(fields)
    return record


def _assistant(usage: Any = "default") -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Done: the parser reads both formats now."}],
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "stopReason": "stop",
        "timestamp": 1767607203000,
    }
    message["usage"] = _usage() if usage == "default" else usage
    return message


def _conversation(assistant: dict[str, Any] | None = None) -> list[Any]:
    user = {"role": "user", "content": "make the parser read both formats", "timestamp": 1}
    task = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "def parse(text): ..."}],
        "isError": False,
        "timestamp": 2,
    }
    return [
        HEADER,
        _entry(1, user),
        _entry(2, assistant or _assistant()),
        _entry(3, task),
        _entry(4, _assistant()),
    ]


def _deep(depth: int) -> list[Any]:
    records = _conversation()
    nested = "1"
    for _ in range(depth - 3):  # the record and its `data` are two of the levels
        nested = '{"d":' + nested + "}"
    line = json.dumps(
        {"type": "custom", "customType": "ext-state", "id": "c0000001", "parentId": "e0000004"}
    )
    return [*records, line[:-1] + ', "data":' + nested + "}"]


def _task_result(usage: dict[str, Any]) -> list[Any]:
    records = _conversation()
    records[3]["message"].update(toolName="task", details={"usage": usage})
    return records


def _model_usage(usage: dict[str, Any]) -> list[Any]:
    extra = {"type": "model_usage", "id": "u0000001", "parentId": "e0000004"}
    return [*_conversation(), {**extra, "timestamp": "2026-01-05T10:00:09.000Z", "usage": usage}]


def _assistant_content(content: Any, off_path: bool = False) -> list[Any]:
    records = _conversation()
    odd = {**_entry(5, {**_assistant(), "content": content}), "parentId": "e0000001"}
    if off_path:  # a side branch: not in the context at the leaf
        return [*records, odd, {**_entry(6, _assistant()), "parentId": "e0000004"}]
    records[2]["message"]["content"] = content
    return records


def _garbage_after(line: int, garbage: str) -> list[Any]:
    """The conversation with ``garbage`` after the JSON object of record ``line`` (0: the
    header), on the same line."""
    records: list[Any] = _conversation()
    records[line] = json.dumps(records[line]) + garbage
    return records


def _header_change(**change: Any) -> list[Any]:
    records = _conversation()
    records[0] = {**HEADER, **change}
    return records


TITLE_SLOT = {
    "type": "title",
    "v": 1,
    "title": "Port the parser",
    "source": "auto",
    "updatedAt": "2026-01-05T10:00:00.000Z",
    "pad": "    ",
}


def _title_slot(**change: Any) -> list[Any]:
    """The conversation after an oh-my-pi title slot on line 1, changed by ``change`` (a
    ``None`` value drops the field)."""
    slot = {key: value for key, value in {**TITLE_SLOT, **change}.items() if value is not None}
    return [slot, *_conversation()]


VARIANTS: dict[str, list[Any]] = {
    "clean": _conversation(),
    "usage-without-cost": _conversation(
        _assistant({k: v for k, v in _usage().items() if k != "cost"})
    ),
    "usage-cost-null": _conversation(_assistant(_usage(cost=None))),
    "usage-empty-object": _conversation(_assistant({})),
    "usage-a-string": _conversation(_assistant("150 tokens")),
    "usage-zero": _conversation(_assistant(0)),
    "usage-null": _conversation(_assistant(None)),
    "task-result-usage-without-cost": _task_result({"input": 5, "output": 5}),
    "task-result-usage-with-cost": _task_result(_usage()),
    "model-usage-without-cost": _model_usage({"input": 5, "output": 5, "totalTokens": 10}),
    "model-usage-with-cost": _model_usage(_usage()),
    "message-missing": [*_conversation()[:2], _entry(2), *_conversation()[3:]],
    "message-a-string": [*_conversation()[:2], _entry(2, "hello"), *_conversation()[3:]],
    "number-before-header": ["7", *_conversation()],
    "garbage-before-header": ["{not json", *_conversation()],
    "header-id-a-number": _header_change(id=12),
    "header-without-id": _header_change(id=None),
    "only-garbage": ["{not json", "still not json"],
    "null-last-line": [*_conversation(), "null"],
    "assistant-content-true": _assistant_content(True),
    "assistant-content-null": _assistant_content(None),
    "assistant-content-a-string": _assistant_content("Done."),
    "assistant-content-null-block": _assistant_content([{"type": "text", "text": "a"}, None]),
    "assistant-content-true-off-path": _assistant_content(True, off_path=True),
    "user-content-true": [
        *_conversation()[:1],
        _entry(1, {"role": "user", "content": True}),
        *_conversation()[2:],
    ],  # fmt: skip
    "header-cwd-true": _header_change(cwd=True),
    "header-cwd-empty": _header_change(cwd=""),
    "object-then-garbage": _garbage_after(2, " and then some words"),
    "object-then-object": _garbage_after(
        3, json.dumps(_entry(9, {"role": "user", "content": "x"}))
    ),
    "header-then-garbage": _garbage_after(0, ","),
    "null-then-garbage": [*_conversation(), "null, and more"],
    "message-null-then-garbage": [
        *_conversation(),
        '{"type":"message","id":"x1","message":null} x',
    ],
    "title-slot": _title_slot(),
    "title-slot-without-updatedAt": _title_slot(updatedAt=None),
    "title-slot-updatedAt-a-number": _title_slot(updatedAt=1767607200000),
    "title-slot-without-pad": _title_slot(pad=None),
    "title-slot-without-title": _title_slot(title=None),
    "title-slot-without-source": _title_slot(source=None),
    "title-slot-source-other": _title_slot(source="agent"),
    "title-slot-v-2": _title_slot(v=2),
    "title-slot-v-true": _title_slot(v=True),
    "nested-10000": _deep(10_000),
    "nested-40000": _deep(40_000),
}


def _write_variants(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, records in VARIANTS.items():
        path = folder / f"variant-{name}.jsonl"
        lines = [record if isinstance(record, str) else json.dumps(record) for record in records]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def ours(path: Path) -> dict[str, bool]:
    """Our verdict on ``path`` under oh-my-pi's rules, in the probe's terms."""
    session = load_session(path)
    try:
        codes = {problem.code for problem in omp_open_problems(session)}
    finally:
        session.close()
    return {
        "refuses": OMP_REFUSES in codes,
        "treeHangs": OMP_HANGS_TREE in codes,
        "navigationHangs": OMP_HANGS_NAVIGATION in codes,
    }


def _theirs(verdict: dict[str, Any]) -> dict[str, bool]:
    return {key: bool(verdict[key]) for key in ("refuses", "treeHangs", "navigationHangs")}


def _all_files(tmp_path: Path) -> list[Path]:
    return [*CORPUS, *_write_variants(tmp_path / "variants")]


def _stored() -> dict[str, dict[str, Any]]:
    return json.loads(STORED.read_text(encoding="utf-8"))


def _key(path: Path) -> str:
    return path.name if path.name.startswith("variant-") else str(path.relative_to(REPO))


def test_stored_verdicts_cover_the_corpus() -> None:
    assert sorted(_stored()) == sorted(
        [_key(path) for path in CORPUS] + [f"variant-{name}.jsonl" for name in VARIANTS]
    )


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_verdict_matches_the_stored_oh_my_pi_verdict(name: str, tmp_path: Path) -> None:
    """Without Bun: the verdict oh-my-pi gave when the verdicts were recorded."""
    path = next(p for p in _write_variants(tmp_path) if p.name == f"variant-{name}.jsonl")
    assert ours(path) == _theirs(_stored()[path.name]), _stored()[path.name]


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.name)
def test_corpus_verdict_matches_the_stored_oh_my_pi_verdict(path: Path) -> None:
    """Without Bun: every corpus file's verdict, as oh-my-pi gave it when recorded."""
    stored = _stored()[_key(path)]
    assert ours(path) == _theirs(stored), stored


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_every_verdict_matches_oh_my_pi_live(tmp_path: Path) -> None:
    """Live: oh-my-pi opens (tree, navigation) every file; our verdict is what it does, and
    the stored verdicts are still what it does."""
    files = _all_files(tmp_path)
    live = omp_open_verdicts(files)
    record = os.environ.get("TUIC_OMP_OPEN_RECORD") == "1"
    if record:
        stored = {_key(path): live[str(path)] for path in files}
        STORED.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    differ = []
    for path in files:
        theirs = live[str(path)]
        if ours(path) != _theirs(theirs):
            differ.append(f"{_key(path)}: oh-my-pi {theirs}, we say {ours(path)}")
        if not record and _theirs(_stored()[_key(path)]) != _theirs(theirs):
            differ.append(f"{_key(path)}: stored {_stored()[_key(path)]}, live {theirs}")
    assert not differ, "\n".join(differ)
    refused = sum(verdict["refuses"] for verdict in live.values())
    print(f"{len(files)} files: oh-my-pi refuses {refused}; every verdict agrees")


def test_lint_says_why_and_where_under_omp_rules_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The user's view: ``lint --rules omp`` names the line and the reason; ``--rules pi`` says
    nothing about oh-my-pi; the file still opens (exit 0, every entry there)."""
    from tui_compactor.cli import main

    path = tmp_path / "s.jsonl"
    shutil.copyfile(FIXTURES / "bad" / "null-content.jsonl", path)
    assert main(["lint", str(path), "--rules", "omp"]) == 0
    text = capsys.readouterr().out
    assert "line 3 (byte 297): oh-my-pi 18.2.3 would refuse to open this file" in text
    assert "has no message" in text and "[omp-refuses]" in text
    assert main(["lint", str(path), "--rules", "omp", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["omp"]["refuses"] is True and report["entries"] == 9
    assert [p["line"] for p in report["omp"]["problems"]] == [3, 5]
    assert main(["lint", str(path), "--rules", "pi"]) == 0
    assert "oh-my-pi 18.2.3 would refuse" not in capsys.readouterr().out
    shutil.copyfile(FIXTURES / "bad" / "parent-cycle.jsonl", path)
    assert main(["lint", str(path), "--rules", "omp", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["omp"]["hangs"] is True and report["omp"]["refuses"] is False


def test_a_title_slot_oh_my_pi_does_not_read_is_named_in_each_agents_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line-1 title slot without ``updatedAt``: oh-my-pi does not take it for its slot and
    refuses the file (``variant-title-slot-without-updatedAt``, held to it above); pi reads any
    title slot as its header and finds no session. ``lint`` says so, file and line, under each
    agent's rules; we still open the file with every entry."""
    from tui_compactor.cli import main

    path = tmp_path / "s.jsonl"
    lines = (FIXTURES / "bad" / "omp-title-slot-first-line.jsonl").read_bytes().split(b"\n", 1)
    slot = json.loads(lines[0])
    del slot["updatedAt"]
    path.write_bytes(json.dumps(slot).encode() + b"\n" + lines[1])
    assert main(["lint", str(path), "--rules", "omp"]) == 0
    text = capsys.readouterr().out
    assert (
        "line 1 (byte 0): oh-my-pi 18.2.3 would refuse to open this file: line 1 is not a title "
        "slot it reads (its updatedAt is missing, not a string)" in text
    )
    assert "[omp-refuses]" in text and "pi reads it as its session header" not in text
    assert main(["lint", str(path), "--rules", "pi", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entries"] == 6 and report["omp"] is None
    [problem] = report["pi"]["problems"]
    assert problem["line"] == 1 and problem["code"] == "pi-no-header"
    assert "which pi reads as its session header" in problem["message"]
    shutil.copyfile(FIXTURES / "bad" / "omp-title-slot-first-line.jsonl", path)
    assert main(["lint", str(path), "--rules", "omp", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["omp"]["problems"] == []  # a slot it reads


@pytest.mark.parametrize("name", sorted(name for name in VARIANTS if name.startswith("title")))
def test_lint_words_line_1_as_oh_my_pi_does_with_it(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Line 1's ``title-slot`` note says what oh-my-pi does with the record, held to its
    stored verdicts: a slot it reads is "oh-my-pi title slot" and titles the session; one it
    does not read is named so, with the reason and the refusal, and under oh-my-pi's rules
    ``lint`` prints no ``title:`` from it (it titles nothing: oh-my-pi refuses the file)."""
    from tui_compactor.cli import main

    path = next(p for p in _write_variants(tmp_path) if p.name == f"variant-{name}.jsonl")
    refused = _stored()[path.name]["refuses"]
    assert main(["lint", str(path), "--rules", "omp", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [note] = [d["message"] for d in report["diagnostics"] if d["code"] == "title-slot"]
    title = "title: Port the parser"
    assert main(["lint", str(path), "--rules", "omp"]) == 0
    text = capsys.readouterr().out
    if refused:
        assert note.startswith("a title record oh-my-pi does not read as its title slot (its ")
        assert note.endswith("oh-my-pi refuses to open the file (it takes the record for a "
                             "malformed session header)")  # fmt: skip
        assert report["title"] is None and title not in text
    else:
        assert note.startswith("oh-my-pi title slot")
        assert report["title"] == "Port the parser" and title in text
    assert main(["lint", str(path), "--rules", "pi"]) == 0
    assert title in capsys.readouterr().out or name == "title-slot-without-title"
    session = load_session(path)  # the app's header names the session as oh-my-pi does
    assert session.name_under("omp") == (None if refused else "Port the parser")
    session.close()


NUMBERED = ["bad/invalid-json-middle.jsonl", "variant-object-then-garbage.jsonl",
            "variant-object-then-object.jsonl"]  # fmt: skip


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
@pytest.mark.parametrize("name", NUMBERED)
def test_numbering_differs_exactly_where_lint_says(name: str, tmp_path: Path) -> None:
    """oh-my-pi's entries are ours plus one per ``omp-numbering`` warning, at that line, with
    the id that line starts with: every other id, and the order, agree (so ``#N`` is ours,
    ids are shared)."""
    from tests.support.omp_oracle import omp_golden
    from tui_compactor.session.omp_open import OMP_NUMBERING

    if name.startswith("variant-"):
        path = next(p for p in _write_variants(tmp_path) if p.name == name)
    else:
        path = tmp_path / Path(name).name
        shutil.copyfile(FIXTURES / name, path)
    session = load_session(path)
    extra = {
        problem.line: problem.entry_id
        for problem in omp_open_problems(session)
        if problem.code == OMP_NUMBERING
    }
    assert extra, "the file must have such a line"
    by_line = sorted([(entry.line, entry.id) for entry in session.entries] + list(extra.items()))
    golden = omp_golden(path)
    assert [row["id"] for row in golden["entries"]] == [entry_id for _, entry_id in by_line]
    session.close()


def test_the_apps_issues_view_lists_them_under_omp_rules_only(tmp_path: Path) -> None:
    """The app agrees with ``lint`` by construction (``flavor.session_issues``): under omp rules
    its Issues view lists why oh-my-pi would refuse the file; ``o`` (pi rules) drops them."""
    import asyncio

    from textual.widgets import DataTable

    from tests.ui.app_helpers import copy_fixture, make_app, settle
    from tui_compactor.workbench.settings import resolve_settings

    path = copy_fixture(FIXTURES / "bad" / "null-content.jsonl", tmp_path)
    settings = resolve_settings({"rules": "omp"}, environ={"XDG_CONFIG_HOME": str(tmp_path)})

    async def run() -> tuple[list[list[str]], list[list[str]]]:
        app = make_app(path, settings=settings)
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            await pilot.press("I")
            await pilot.pause()
            table = app.screen.query_one(DataTable)
            under_omp = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            await pilot.press("escape")
            await pilot.press("o")
            await settle(pilot)
            await pilot.press("I")
            await pilot.pause()
            table = app.screen.query_one(DataTable)
            under_pi = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        return under_omp, under_pi

    under_omp, under_pi = asyncio.run(run())
    refusals = [row for row in under_omp if row[3] == OMP_REFUSES]
    assert [row[1] for row in refusals] == ["3", "5"], under_omp
    assert all("would refuse to open" in row[-1] for row in refusals)
    assert not [row for row in under_pi if row[3] == OMP_REFUSES]


def test_a_fault_on_every_line_is_counted_not_kept(tmp_path: Path) -> None:
    """Memory stays flat on a big file oh-my-pi refuses line by line (the benchmark sessions
    have no cost in any usage): the reader keeps the first lines, counts the rest, and lint's
    last listed line says how many more."""
    from tui_compactor.session.omp_open import KEPT, MAX_LISTED

    bare = {k: v for k, v in _usage().items() if k != "cost"}
    records: list[Any] = [HEADER]
    for number in range(1, 2 * KEPT + 51):
        records.append(_entry(number, {**_assistant(bare), "timestamp": number}))
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    session = load_session(path)
    assert len(session._omp_faults) == KEPT and session._omp_faults.more == KEPT + 50
    problems = omp_open_problems(session)
    assert len(problems) == MAX_LISTED
    assert problems[-1].message.endswith(f"and {2 * KEPT + 50 - MAX_LISTED} more such lines")
    session.close()


def test_a_torn_last_line_past_the_kept_ones_is_counted_once_when_finished(
    tmp_path: Path,
) -> None:
    """The app follows a growing file: a torn last line oh-my-pi fails on is read again once
    the writer ends it. Past the kept lines it is only counted, and the count must still say
    what lint says on a fresh load of the same file."""
    from tui_compactor.session.omp_open import KEPT

    bare = {k: v for k, v in _usage().items() if k != "cost"}
    records: list[Any] = [HEADER]
    for number in range(1, KEPT + 6):
        records.append(_entry(number, {**_assistant(bare), "timestamp": number}))
    path = tmp_path / "growing.jsonl"
    path.write_text(
        "".join(json.dumps(record) + "\n" for record in records) + "null", encoding="utf-8"
    )
    followed = load_session(path)
    with path.open("ab") as handle:
        handle.write(b"\n")
    followed.refresh()
    fresh = load_session(path)
    assert [p.message for p in omp_open_problems(followed)] == [
        p.message for p in omp_open_problems(fresh)
    ]
    assert followed._omp_faults.more == fresh._omp_faults.more
    followed.close()
    fresh.close()


def test_the_issues_view_says_what_oh_my_pi_does_with_line_1(tmp_path: Path) -> None:
    """At 80x24 the Issues view's first row, line 1's note, drawn in full under the table: a
    title record oh-my-pi does not read is not called its title slot (it was: "oh-my-pi
    title slot (226 bytes, expected 256)")."""
    import asyncio

    from tests.ui.app_helpers import make_app, screen_text, settle
    from tui_compactor.workbench.settings import resolve_settings

    path = next(
        p for p in _write_variants(tmp_path) if p.name == "variant-title-slot-without-pad.jsonl"
    )
    settings = resolve_settings({"rules": "omp"}, environ={"XDG_CONFIG_HOME": str(tmp_path)})

    async def run() -> str:
        app = make_app(path, settings=settings)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert "Port the parser" not in screen_text(app)  # oh-my-pi titles nothing here
            await pilot.press("I")
            await settle(pilot)
            return str(app.screen.query_one("#issues-detail").render())

    detail = asyncio.run(run())
    assert detail.startswith("title-slot: a title record oh-my-pi does not read as its title")
    assert "its pad is missing, not a string" in detail and "refuses to open the file" in detail


def test_a_title_slot_rewritten_in_place_is_judged_again(tmp_path: Path) -> None:
    """oh-my-pi rewrites its slot in place (same 256 bytes); a file followed while that
    happens is judged by its slot as it is now: the note, the refusal and the name."""
    path = tmp_path / "s.jsonl"
    shutil.copyfile(FIXTURES / "bad" / "omp-title-slot-first-line.jsonl", path)

    def rewrite(**change: Any) -> None:
        slot = {**json.loads(path.read_bytes()[:256]), "pad": ""}
        slot = {key: value for key, value in {**slot, **change}.items() if value is not None}
        slot["pad"] = " " * (255 - len(json.dumps(slot, separators=(",", ":"))))
        line = json.dumps(slot, separators=(",", ":")).encode() + b"\n"
        assert len(line) == 256
        with path.open("r+b") as handle:
            handle.write(line)

    def judged(session: Any) -> tuple[str, bool, str | None]:
        [note] = [d.message for d in session.diagnostics if d.code == "title-slot"]
        refuses = any(p.code == OMP_REFUSES for p in omp_open_problems(session))
        return note, refuses, session.name_under("omp")

    session = load_session(path)
    assert judged(session) == ("oh-my-pi title slot", False, "Port user-message-selector")
    rewrite(updatedAt=None)
    session.refresh()
    note, refuses, name = judged(session)
    assert note.startswith("a title record oh-my-pi does not read as its title slot (its upd")
    assert refuses and name is None
    rewrite(updatedAt="2026-01-05T10:00:00.000Z", title="Renamed")
    session.refresh()
    assert judged(session) == ("oh-my-pi title slot", False, "Renamed")
    session.close()
