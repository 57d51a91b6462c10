"""Loading without the file's sha256 (``load_session(digest=False)``, what the read-only
commands use): the same session in every other respect, and such a session can never be
written to or silently refreshed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import AppendRefused, append_entry, make_leaf_marker

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILES = sorted((FIXTURES / "bad").glob("*.jsonl")) + sorted((FIXTURES / "sessions").glob("*.jsonl"))


def _shape(path: Path, digest: bool) -> tuple[object, ...]:
    session = load_session(path, digest=digest)
    return (
        str(session.verdict),
        [(e.id, e.parent, e.type, e.role, e.line, e.offset, e.size) for e in session.entries],
        [str(d) for d in session.diagnostics],
        session.leaf,
        session.append_refusal,
        session.snapshot.size,
        session.snapshot.torn_tail,
        session.snapshot.ends_with_newline,
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_session_without_the_digest(path: Path) -> None:
    assert _shape(path, digest=False) == _shape(path, digest=True)
    assert load_session(path, digest=False).snapshot.sha256 == ""
    assert len(load_session(path).snapshot.sha256) == 64


@pytest.mark.parametrize("name", ["refactor-session-v3.jsonl", "omp-title-slot-first-line.jsonl"])
def test_a_session_loaded_without_digest_is_never_written(name: str, tmp_path: Path) -> None:
    source = next(p for p in FILES if p.name == name)
    path = tmp_path / name
    shutil.copyfile(source, path)
    before = path.read_bytes()
    session = load_session(path, digest=False)
    with pytest.raises(AppendRefused) as refused:
        append_entry(session, make_leaf_marker(), parent_index=session.leaf, quiet_seconds=0.0)
    assert refused.value.code == "A5"
    assert path.read_bytes() == before
    with path.open("ab") as handle:  # an agent appends meanwhile
        handle.write(before.splitlines(keepends=True)[-1])
    assert session.refresh().status == "rewritten"


@pytest.mark.parametrize(
    ("hash_thread", "idle"),
    [(True, False), (False, True), (None, True), (None, False)],
    ids=["thread", "inline", "thread-when-idle", "inline-when-busy"],
)
def test_the_digest_is_the_files_with_or_without_the_hashing_thread(
    hash_thread: bool | None, idle: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Big files hash on a helper thread (asked for, or when a core is idle) or inline: the
    same sha256 either way, also for the body after an oh-my-pi title slot."""
    import hashlib

    from tui_compactor.session import reader

    monkeypatch.setattr(reader, "BACKGROUND_HASH_MIN", 0)
    monkeypatch.setattr(reader, "CHUNK_SIZE", 4096)  # many hand-overs
    monkeypatch.setattr(reader, "_core_idle", lambda: idle)
    for source in (FIXTURES / "sessions" / "refactor-session-v3.jsonl",
                   FIXTURES / "bad" / "omp-title-slot-first-line.jsonl"):  # fmt: skip
        data = source.read_bytes()
        session = load_session(source, hash_thread=hash_thread)
        assert session.snapshot.sha256 == hashlib.sha256(data).hexdigest()
        if session.title_slot is not None:
            assert session._body_digest == hashlib.sha256(data[session._body_start :]).hexdigest()
