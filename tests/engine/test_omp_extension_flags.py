"""Which flag marks a summary an extension wrote, per rules (the summary's ``details`` then do
not feed the file lists): pi reads ``fromHook``, oh-my-pi 18.2.3 only ``fromExtension``.

``gen-branchy`` holds a pi-style extension branch summary (``fromHook: true``, details naming
``SHOULD_NOT_APPEAR.py``); oh-my-pi's ``prepareBranchEntries`` feeds those details to its read
list (checked live against oh-my-pi in ``test_omp_generated_oracle.py``).
"""

from __future__ import annotations

from pathlib import Path

from tui_compactor.engine.branch import collect_branch_entries, select_branch_entries
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session

SESSION = Path(__file__).resolve().parent / "data" / "oracle" / "sessions" / "gen-branchy.jsonl"


def _read_files(rules: str) -> list[str]:
    session = load_session(SESSION)
    summary = next(
        entry.index
        for entry in session.entries
        if entry.type == "branch_summary" and entry.data.get("fromHook")
    )
    leaf = max(session.leaves, key=lambda leaf: summary in session.path_to(leaf))
    assert summary in session.path_to(leaf)
    collected, _ = collect_branch_entries(session, leaf, 0)
    assert summary in collected
    selection = select_branch_entries(session, collected, get_counter("bytes"), 0, rules=rules)
    return list(selection.file_ops.read)


def test_pi_skips_the_details_of_a_from_hook_branch_summary() -> None:
    assert "SHOULD_NOT_APPEAR.py" not in _read_files("pi")


def test_oh_my_pi_reads_the_details_of_a_from_hook_branch_summary() -> None:
    assert "SHOULD_NOT_APPEAR.py" in _read_files("omp")
