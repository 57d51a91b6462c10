"""Fuzz: mutated session files never crash, hang or change under the read commands (13).

Mutants of the strange-file corpus (``tests/fixtures/bad``) get byte flips, hostile inserts,
truncation, line shuffles and JSON-aware edits of one record (wrong types, ``1e400``, lone
surrogates, 20,000-deep nesting, dangling or self parents...), then run through ``lint``,
``plan``, ``context``, ``inspect`` and ``tree`` (text and JSON). Bounded for CI (a fixed
derandomized set of examples, about 20 s); ``benchmarks/fuzz_sessions.py`` runs 10,000+.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.mutate import check_file, mutate, seed_files

SEEDS = seed_files()


@pytest.fixture(autouse=True)
def _isolated_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


def test_corpus_is_there() -> None:
    assert len(SEEDS) >= 20


@given(
    seed=st.sampled_from(SEEDS),
    rng_seed=st.integers(min_value=0, max_value=2**32 - 1),
    edits=st.integers(min_value=1, max_value=4),
)
@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_mutated_sessions_never_crash_hang_or_change(
    seed: Path, rng_seed: int, edits: int, tmp_path: Path
) -> None:
    path = tmp_path / "mutant.jsonl"
    path.write_bytes(mutate(seed.read_bytes(), random.Random(rng_seed), edits))
    problems = [
        f"{' '.join(outcome.argv)}: {outcome.problem}"
        for outcome in check_file(path)
        if outcome.problem is not None
    ]
    assert not problems, "\n".join(problems)


def test_the_harness_reports_a_crash_a_hang_and_a_changed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from tests.support import mutate as harness
    from tui_compactor.commands import lint

    path = tmp_path / "s.jsonl"
    path.write_bytes(SEEDS[0].read_bytes())
    monkeypatch.setattr(lint, "run", lambda args: 1 // 0)
    assert "ZeroDivisionError" in (harness.run_command(["lint", str(path)]).problem or "")
    monkeypatch.setattr(lint, "run", lambda args: time.sleep(5))
    assert "no answer" in (harness.run_command(["lint", str(path)], timeout=1).problem or "")
    monkeypatch.setattr(lint, "run", lambda args: path.write_bytes(b"x") and 0)
    [outcome] = harness.check_file(path, [["lint"]])
    assert outcome.problem == "the input file changed"
