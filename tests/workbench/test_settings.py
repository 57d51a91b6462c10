"""Settings resolved once: precedence, where each value came from, and the validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_compactor.config import ConfigError
from tui_compactor.workbench.settings import Settings, resolve_settings


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_defaults_file_env_flags_edits(tmp_path: Path) -> None:
    path = _config(
        tmp_path, '[compaction]\nkeep_recent_tokens = 1000\nreserve_tokens = 2000\nrules = "omp"\n'
    )
    env = {"TUI_COMPACTOR_RESERVE_TOKENS": "3000", "TUI_COMPACTOR_TOKENS": "bytes"}
    settings = resolve_settings(
        {"tokens": "pi", "context_window": None}, config_file=path, environ=env
    )
    assert (
        settings.keep_recent_tokens,
        settings.reserve_tokens,
        settings.rules,
        settings.tokens,
        settings.context_window,
    ) == (1000, 3000, "omp", "pi", None)
    assert settings.source_of("keep_recent_tokens") == f"config file {path}"
    assert settings.source_of("reserve_tokens") == "TUI_COMPACTOR_RESERVE_TOKENS"
    assert settings.source_of("tokens") == "--tokens"
    assert settings.source_of("context_window") == "default"
    edited = settings.edited("app", keep_recent_tokens=4000)
    assert edited.keep_recent_tokens == 4000 and edited.source_of("keep_recent_tokens") == "app"
    assert settings.keep_recent_tokens == 1000  # frozen: edits make a copy
    assert edited.compaction().keep_recent_tokens == 4000
    assert edited.counter().name == "pi"


def test_defaults_without_any_source(tmp_path: Path) -> None:
    settings = resolve_settings({}, environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert settings == Settings()
    assert settings.problems() == []


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        ({"keep_recent_tokens": -1}, "--keep-recent: keep_recent_tokens: must not be negative"),
        ({"context_window": 0}, "--window: context_window: must be greater than 0"),
        ({"rules": "nope"}, "--rules: rules: 'nope' is not one of pi, omp"),
    ],
)
def test_bad_flag_values_name_the_flag(
    tmp_path: Path, flags: dict[str, object], needle: str
) -> None:
    with pytest.raises(ConfigError) as error:
        resolve_settings(flags, environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert needle in str(error.value)


def test_bad_variable_names_it(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "TUI_COMPACTOR_KEEP_RECENT_TOKENS": "lots"}
    with pytest.raises(ConfigError) as error:
        resolve_settings({}, environ=env)
    assert "keep_recent_tokens" in str(error.value)


def test_edit_of_wrong_type_is_refused_with_the_field() -> None:
    with pytest.raises(ValueError, match="reserve_tokens"):
        Settings().edited("app", reserve_tokens="many")


def test_keep_recent_must_fit_the_window_minus_the_reserve() -> None:
    settings = Settings(context_window=200_000).edited("app", keep_recent_tokens=300_000)
    problem = settings.blocking_problem()
    assert problem is not None
    assert problem.field == "keep_recent_tokens" and problem.source == "app"
    assert "200000 - 16384 = 183616" in problem.reason
    assert "nothing would be summarized and nothing can be run" in problem.reason
    assert Settings(context_window=200_000, keep_recent_tokens=183_615).problems() == []
    # omp rules reserve at least 15% of the window.
    omp = Settings(context_window=200_000, keep_recent_tokens=175_000, rules="omp")
    assert omp.blocking_problem() is not None
    # Without a window nothing can be checked (the commands show no threshold either).
    assert Settings(keep_recent_tokens=10**9).problems() == []


def test_reserve_not_below_the_window_is_a_warning_not_silence() -> None:
    settings = Settings(context_window=1000, reserve_tokens=5000, keep_recent_tokens=0)
    problems = settings.problems()
    assert [p.field for p in problems] == ["reserve_tokens", "keep_recent_tokens"]
    assert not problems[0].blocking and "not smaller than the context window" in problems[0].reason


def test_model_window_only_when_the_user_set_none() -> None:
    auto = Settings().with_model_window(200_000, "claude-opus-4-5")
    assert auto.context_window == 200_000 and auto.window_model == "claude-opus-4-5"
    assert not auto.window_configured
    assumed = Settings().with_model_window(None, None)
    assert assumed.context_window == 128_000 and assumed.source_of("context_window") == "assumed"
    assert not assumed.window_configured and assumed.window_model is None
    mine = Settings().edited("--window", context_window=32_000)
    assert mine.with_model_window(200_000, "claude-opus-4-5") is mine
    assert mine.window_configured


def test_omp_rules_imply_oh_my_pis_counter_and_calibration(tmp_path: Path) -> None:
    """``--rules omp`` alone means oh-my-pi's byte counter and keep-recent calibration
    (``engine.settings.rules_defaults``); a typed counter or ``--no-calibrate`` wins, and rules
    that follow the session bring the same defaults."""
    from tui_compactor.session.reader import load_session

    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    omp = resolve_settings({"rules": "omp"}, environ=env)
    assert (omp.tokens, omp.calibrate, omp.source_of("tokens")) == ("bytes", True, "rules omp")
    assert omp.compaction().calibrate is True and omp.counter().name == "bytes"
    chosen = resolve_settings({"rules": "omp", "tokens": "cl100k", "calibrate": False}, environ=env)
    assert (chosen.tokens, chosen.calibrate) == ("cl100k", False)
    pi = resolve_settings({}, environ=env)
    assert (pi.tokens, pi.calibrate) == ("cl100k", False)
    back = omp.edited("app", rules="pi")
    assert (back.tokens, back.calibrate) == ("cl100k", False)
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    session = load_session(fixtures / "oracle-omp" / "sessions" / "omp-basic.jsonl")
    followed = pi.for_session(session, home=tmp_path)
    assert (followed.rules, followed.tokens, followed.calibrate) == ("omp", "bytes", True)


def test_an_explicit_counter_survives_a_rules_switch_without_the_table(tmp_path: Path) -> None:
    """``--tokens cl100k`` typed, the table cannot be loaded: the chars/4 estimate stands in
    for it, and a switch of rules keeps that choice (the estimate, not oh-my-pi's byte
    counter); a counter nobody chose follows the rules as before."""
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    chosen = resolve_settings({"tokens": "cl100k"}, environ=env).without_table()
    assert (chosen.tokens, chosen.counter_label) == ("pi", "pi ≈ chars/4, no cl100k table")
    switched = chosen.edited("app", rules="omp").without_table()
    assert (switched.rules, switched.tokens) == ("omp", "pi")
    assert switched.counter_label == "pi ≈ chars/4, no cl100k table"
    back = switched.edited("app", rules="pi").without_table()
    assert (back.tokens, back.counter_label) == ("pi", "pi ≈ chars/4, no cl100k table")
    implied = resolve_settings({}, environ=env).without_table()
    assert implied.tokens == "pi"
    omp = implied.edited("app", rules="omp").without_table()
    assert (omp.tokens, omp.source_of("tokens")) == ("bytes", "rules omp")
    assert omp.edited("app", rules="pi").without_table().tokens == "pi"
