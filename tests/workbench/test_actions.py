"""Write proposals re-validated at apply: a write never lands on a leaf that is no longer the
file's leaf. Real files; a second writer appends a valid child of the leaf in between."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.workbench.agent import append_child_of_leaf
from tui_compactor.cli import main
from tui_compactor.engine.branch import plan_navigation
from tui_compactor.session.reader import load_session
from tui_compactor.workbench.actions import (
    ActionRefused,
    Proposal,
    StaleProposal,
    apply,
    propose_label,
    propose_navigation,
    propose_undo,
)
from tui_compactor.workbench.handle import SessionHandle
from tui_compactor.workbench.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ROOT / "tests" / "fixtures" / "oracle" / "sessions"


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("TUI_COMPACTOR_CONFIG", "TUI_COMPACTOR_KEEP_RECENT_TOKENS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    target = tmp_path / "tree-compacted.jsonl"
    shutil.copyfile(SESSIONS / "tree-compacted.jsonl", target)
    return target


def _last(path: Path) -> tuple[str, str | None, str]:
    with load_session(path) as session:
        entry = session.entries[-1]
        parent = session.entries[entry.parent].id if entry.parent is not None else None
        return entry.type, parent, entry.id


def test_compact_asks_again_when_the_file_grew_before_the_write(
    compacted: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with load_session(compacted) as session:
        compactions = sum(e.type == "compaction" for e in session.entries)
    asked: list[str] = []
    agent_ids: list[str] = []

    def confirm(question: str, **_: object) -> bool:
        asked.append(question)
        if len(asked) == 1:  # the agent writes while the user reads the first question
            agent_ids.append(append_child_of_leaf(compacted))
        return True

    monkeypatch.setattr("tui_compactor.commands.compact.confirm", confirm)
    status = main(
        [
            "compact",
            str(compacted),
            "--provider",
            "offline",
            "--keep-recent",
            "2000",
            "--quiet-window",
            "0",
        ]
    )
    err = capsys.readouterr().err
    assert status == 0, err
    assert len(asked) == 2, "the user is asked again after the re-plan"
    assert "the session grew" in err and "planning again at the new leaf" in err
    kind, parent, _ = _last(compacted)
    assert (kind, parent) == ("compaction", agent_ids[0]), "never onto the old leaf"
    with load_session(compacted) as session:
        assert sum(e.type == "compaction" for e in session.entries) == compactions + 1


def test_compact_yes_replans_and_says_so(
    compacted: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tui_compactor.commands.compact as compact

    shown = compact._print_result
    agent_ids: list[str] = []

    def grow_after_summaries(result: object) -> None:
        shown(result)
        if not agent_ids:
            agent_ids.append(append_child_of_leaf(compacted))

    monkeypatch.setattr(compact, "_print_result", grow_after_summaries)
    status = main(
        [
            "compact",
            str(compacted),
            "--provider",
            "offline",
            "--keep-recent",
            "2000",
            "--yes",
            "--quiet-window",
            "0",
        ]
    )
    err = capsys.readouterr().err
    assert status == 0, err
    assert "it will be written without asking" in err
    assert _last(compacted)[:2] == ("compaction", agent_ids[0])


def test_undo_and_navigation_proposed_before_growth_are_not_written(compacted: Path) -> None:
    handle = SessionHandle(load_session(compacted))
    with handle.read() as snapshot:
        undo = propose_undo(snapshot, force=True)
        nav = plan_navigation(snapshot.session, snapshot.leaf, 3, Settings().counter(), 0)
        move = propose_navigation(snapshot, nav)
    agent = append_child_of_leaf(compacted)
    after_agent = compacted.read_bytes()
    loaded = handle.generation
    for proposal in (undo, move):
        with pytest.raises(StaleProposal) as stale:
            apply(handle, proposal, quiet_seconds=0)
        assert "nothing was written" in str(stale.value)
        assert compacted.read_bytes() == after_agent
    grown = handle.generation
    assert grown != loaded
    # The handle picked the growth up: a new proposal is made against the new leaf.
    with handle.read() as snapshot:
        assert snapshot.session.entries[snapshot.leaf].id == agent
        with pytest.raises(ActionRefused) as refused:
            propose_undo(snapshot)
        assert refused.value.needs_force and "26 entries" in refused.value.reason
        again = propose_undo(snapshot, force=True)
    result = apply(handle, again, quiet_seconds=0)
    assert _last(compacted)[2] == result.ids[0]
    assert handle.generation not in (loaded, grown)  # the agent's line, then ours


def test_undo_refusals_match_the_command(tmp_path: Path) -> None:
    branches = tmp_path / "tree-branches.jsonl"
    shutil.copyfile(SESSIONS / "tree-branches.jsonl", branches)
    with load_session(branches) as session:
        handle = SessionHandle(session)
        with handle.read() as snapshot, pytest.raises(ActionRefused) as refused:
            propose_undo(snapshot)
    result = __import__("subprocess").run(
        ["python", "-m", "tui_compactor", "undo", str(branches)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.value.reason in result.stderr


@pytest.mark.parametrize(
    ("files_format", "tag"), [("legacy", "<read-files>"), ("files", "<files>")]
)
def test_files_format_applies_to_branch_summaries(
    compacted: Path, files_format: str, tag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "navigate",
            str(compacted),
            "--to",
            "#3",
            "--summarize",
            "--provider",
            "offline",
            "--yes",
            "--quiet-window",
            "0",
            "--files-format",
            files_format,
        ]
    )
    assert status == 0, capsys.readouterr().err
    with load_session(compacted) as session:
        entry = session.entries[-1]
        assert entry.type == "branch_summary" and tag in entry.data["summary"]


def test_a_label_proposed_before_growth_is_not_written_on_the_old_leaf(compacted: Path) -> None:
    handle = SessionHandle(load_session(compacted))
    with handle.read() as snapshot:
        target_id = snapshot.session.entries[3].id
        proposal = propose_label(snapshot, 3, "  first   try ")
    assert proposal.record is not None and proposal.record["label"] == "first try"
    agent = append_child_of_leaf(compacted)  # a second writer, between propose and apply
    after_agent = compacted.read_bytes()
    with pytest.raises(StaleProposal):
        apply(handle, proposal, quiet_seconds=0)
    assert compacted.read_bytes() == after_agent
    with handle.read() as snapshot:
        again = propose_label(snapshot, 3, "first try")
    apply(handle, again, quiet_seconds=0)
    kind, parent, _ = _last(compacted)
    assert (kind, parent) == ("label", agent)
    with load_session(compacted) as session:
        assert session.label_of(3) == "first try"
        assert session.entries[-1].data["targetId"] == target_id


def test_label_refusals(compacted: Path) -> None:
    handle = SessionHandle(load_session(compacted))
    with handle.read() as snapshot:
        with pytest.raises(ActionRefused, match="no entry #999"):
            propose_label(snapshot, 999, "x")
        with pytest.raises(ActionRefused, match="has no label; nothing to clear"):
            propose_label(snapshot, 3, "   ")
    apply(handle, propose_label_now(handle, 3, "kept"), quiet_seconds=0)
    with handle.read() as snapshot, pytest.raises(ActionRefused, match="already has the label"):
        propose_label(snapshot, 3, "kept ")


def propose_label_now(handle: SessionHandle, target: int, text: str) -> Proposal:
    with handle.read() as snapshot:
        return propose_label(snapshot, target, text)


def test_a_proposal_on_a_file_since_rewritten_and_loaded_again_is_not_written(
    compacted: Path,
) -> None:
    """The file is rewritten with the same number of entries (same leaf index) and loaded
    again in a new handle: a proposal made on the old load must not be written into it."""
    old = SessionHandle(load_session(compacted))
    with old.read() as snapshot:
        label = propose_label(snapshot, 3, "milestone")
        move = propose_navigation(
            snapshot, plan_navigation(snapshot.session, snapshot.leaf, 3, Settings().counter(), 0)
        )
    text = compacted.read_text(encoding="utf-8").replace("weather", "climate")
    replacement = compacted.with_suffix(".new")
    replacement.write_text(text, encoding="utf-8")
    replacement.replace(compacted)
    rewritten = compacted.read_bytes()
    new = SessionHandle(load_session(compacted))
    with new.read() as snapshot:
        assert snapshot.leaf == label.leaf  # the same shape: only the generation tells
    for proposal in (label, move):
        with pytest.raises(StaleProposal) as stale:
            apply(new, proposal, quiet_seconds=0)
        assert stale.value.reloaded and "rewritten on disk" in str(stale.value)
        assert compacted.read_bytes() == rewritten
    with new.read() as snapshot:
        fresh = propose_label(snapshot, 3, "milestone")
    apply(new, fresh, quiet_seconds=0)  # proposed on the file as it is now: written
    assert _last(compacted)[0] == "label"
