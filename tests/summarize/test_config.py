"""Config: XDG file, precedence, clear errors, keys never stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_compactor.config import ConfigError, config_path, load_config, profile_from_flags

GOOD = """
default_profile = "local"
compaction_profile = "cheap"

[compaction]
keep_recent_tokens = 12000
reserve_tokens = 8000
rules = "omp"
files_format = "legacy"

[profiles.local]
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "qwen"
context_window = 32768

[profiles.cheap]
provider = "anthropic"
model = "claude-haiku"
api_key_env = "MY_CLAUDE_KEY"

[ui]
theme = "nord"
[ui.keymap]
compact = "c,C"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tui-compactor" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_without_file(tmp_path: Path) -> None:
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert config.source is None
    assert config.compaction.keep_recent_tokens == 20000
    assert config.compaction.reserve_tokens is None
    assert config.compaction.tokens == "cl100k"
    assert config.summarizer_profile().provider == "offline"


def test_xdg_location_and_home_fallback(tmp_path: Path) -> None:
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == (
        tmp_path / "tui-compactor" / "config.toml"
    )
    assert config_path({}).parts[-3:] == (".config", "tui-compactor", "config.toml")


def test_file_values_and_profiles(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert config.compaction.keep_recent_tokens == 12000
    assert config.compaction.rules == "omp"
    assert config.profile().name == "local"
    assert config.profile().resolved_base_url == "http://127.0.0.1:9/v1"
    cheap = config.summarizer_profile()
    assert cheap.provider == "anthropic" and cheap.key_env == "MY_CLAUDE_KEY"
    assert config.profiles["local"].key_env == "OPENAI_API_KEY"
    assert config.ui.keymap == {"compact": "c,C"}


def test_precedence_defaults_file_env_flags(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    env = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "TUI_COMPACTOR_KEEP_RECENT_TOKENS": "5000",
        "TUI_COMPACTOR_RULES": "pi",
        "TUI_COMPACTOR_PROFILE": "cheap",
    }
    config = load_config(environ=env)
    assert config.compaction.keep_recent_tokens == 5000  # env beats file
    assert config.compaction.reserve_tokens == 8000  # file beats default
    assert config.compaction.rules == "pi"
    assert config.default_profile == "cheap"
    flagged = load_config(
        environ=env, overrides={"compaction": {"keep_recent_tokens": 777, "reserve_tokens": None}}
    )
    assert flagged.compaction.keep_recent_tokens == 777  # typed flag beats env
    assert flagged.compaction.reserve_tokens == 8000  # untyped flag (None) changes nothing


def test_bad_toml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, '[compaction]\nkeep_recent_tokens = 1\nrules = "pi\n')
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    message = str(caught.value)
    assert message.startswith(f"{path}:3:")
    assert "invalid TOML" in message


def test_bad_value_names_file_line_and_key(tmp_path: Path) -> None:
    path = write(
        tmp_path, '[compaction]\nkeep_recent_tokens = 1\n\n[profiles.x]\nprovider = "gemini"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert f"{path}:5: profiles.x.provider" in str(caught.value)


def test_a_bad_variable_is_named_not_the_file(tmp_path: Path) -> None:
    """A bad value from a ``TUI_COMPACTOR_*`` variable names the variable, never a line of the
    config file (which may hold a good value for that key, or none at all)."""
    path = write(tmp_path, GOOD)
    env = {
        "XDG_CONFIG_HOME": str(tmp_path),
        "TUI_COMPACTOR_KEEP_RECENT_TOKENS": "lots",
        "TUI_COMPACTOR_SPLIT_TURNS": "maybe",
    }
    with pytest.raises(ConfigError) as caught:
        load_config(environ=env)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(
        "environment variable TUI_COMPACTOR_KEEP_RECENT_TOKENS: compaction.keep_recent_tokens:"
    )
    assert lines[1].startswith(
        "environment variable TUI_COMPACTOR_SPLIT_TURNS: compaction.split_turns:"
    )
    assert str(path) not in str(caught.value)
    # A bad value in the file itself still names the file and its line.
    write(tmp_path, GOOD.replace("keep_recent_tokens = 12000", 'keep_recent_tokens = "x"'))
    with pytest.raises(ConfigError, match=rf"^{path}:6: compaction.keep_recent_tokens"):
        load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})


def test_unknown_key_and_missing_explicit_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[compaction]\nkeep_recent = 5\n")
    with pytest.raises(ConfigError, match=r":2: compaction.keep_recent"):
        load_config(path)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_unknown_profile_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    with pytest.raises(ConfigError, match="unknown profile 'nope'.*cheap, local"):
        config.profile("nope")


def test_keys_read_at_call_time_and_never_printed(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    profile = config.profiles["cheap"]
    assert profile.api_key({}) is None
    secret = profile.api_key({"MY_CLAUDE_KEY": "sk-ant-very-secret-value"})
    assert secret is not None and secret.get_secret_value() == "sk-ant-very-secret-value"
    for shown in (repr(secret), str(secret), repr(profile), repr(config), config.model_dump_json()):
        assert "very-secret" not in shown


def test_profile_from_flags(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    config = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert profile_from_flags(config).name == "cheap"  # compaction profile
    assert profile_from_flags(config, profile="local").model == "qwen"
    adhoc = profile_from_flags(config, provider="openai", base_url="http://h/v1", model="m")
    assert (adhoc.provider, adhoc.base_url, adhoc.model) == ("openai", "http://h/v1", "m")
    overridden = profile_from_flags(config, profile="local", model="other")
    assert overridden.base_url == "http://127.0.0.1:9/v1" and overridden.model == "other"
    with pytest.raises(ConfigError):
        profile_from_flags(config, provider="bogus")


@pytest.mark.parametrize("key", ["api_key", "apiKey", "secret"])
def test_api_key_in_a_profile_says_to_use_api_key_env(tmp_path: Path, key: str) -> None:
    path = write(
        tmp_path, f'[profiles.local]\nprovider = "openai"\n{key} = "sk-live-do-not-echo"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert f"{path}:3: profiles.local.{key}:" in message
    assert "never stored in the config" in message and 'api_key_env = "NAME"' in message
    assert "do-not-echo" not in message
    assert "Extra inputs are not permitted" not in message
