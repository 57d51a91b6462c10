"""The tree's compact per-entry storage behaves as the mapping the app reads it as."""

from __future__ import annotations

import pytest

from tui_compactor.ui.widgets.tree import TokenCounts


def test_token_counts_behave_like_a_dict() -> None:
    counts = TokenCounts()
    reference: dict[int, int] = {}
    batches = [{5: 12, 0: 0, 3: 7}, {199_999: 4_000_000}, {5: 13, 42: 1}]
    for batch in batches:
        counts.update(batch)
        reference.update(batch)
        assert dict(counts) == reference and len(counts) == len(reference)
    assert counts[5] == 13 and counts.get(0) == 0  # zero is a count, not "missing"
    assert 4 not in counts and counts.get(4) is None and counts.get(4, -7) == -7
    assert -1 not in counts and counts.get(-1) is None and 10**9 not in counts
    with pytest.raises(KeyError):
        counts[4]
    del counts[3]
    assert 3 not in counts and len(counts) == len(reference) - 1
    with pytest.raises(ValueError):
        counts[-2] = 1  # an entry index is never negative
    counts.clear()
    assert not counts and counts.get(5) is None and list(counts) == []
