"""Where the configuration comes from: the file's path and the ``TUI_COMPACTOR_*`` variables.

Kept free of pydantic (``config.py`` holds the models that validate what these sources say):
a command that finds no config file and no variable resolves the built-in defaults without
importing the models at all (``has_user_config``), which is most of a short command's start-up.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

__all__ = [
    "ENV_VARS",
    "MEMORY_LIMIT_ENV",
    "ConfigError",
    "ReasoningEffort",
    "config_path",
    "has_user_config",
    "memory_limit_mb",
    "set_variables",
]

ReasoningEffort = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
"""Reasoning effort for summary calls (``off``: none requested)."""


class ConfigError(Exception):
    """A configuration problem, with a message naming the file (and line when known)."""


ENV_VARS: dict[str, tuple[str, ...]] = {
    "TUI_COMPACTOR_KEEP_RECENT_TOKENS": ("compaction", "keep_recent_tokens"),
    "TUI_COMPACTOR_RESERVE_TOKENS": ("compaction", "reserve_tokens"),
    "TUI_COMPACTOR_CONTEXT_WINDOW": ("compaction", "context_window"),
    "TUI_COMPACTOR_RULES": ("compaction", "rules"),
    "TUI_COMPACTOR_TOKENS": ("compaction", "tokens"),
    "TUI_COMPACTOR_FILES_FORMAT": ("compaction", "files_format"),
    "TUI_COMPACTOR_THRESHOLD_PERCENT": ("compaction", "threshold_percent"),
    "TUI_COMPACTOR_THRESHOLD_TOKENS": ("compaction", "threshold_tokens"),
    "TUI_COMPACTOR_SPLIT_TURNS": ("compaction", "split_turns"),
    "TUI_COMPACTOR_SUMMARY_REASONING_EFFORT": ("compaction", "summary_reasoning_effort"),
    "TUI_COMPACTOR_SUMMARY_WINDOW": ("compaction", "summary_window"),
    "TUI_COMPACTOR_PROFILE": ("default_profile",),
    "TUI_COMPACTOR_COMPACTION_PROFILE": ("compaction_profile",),
    "TUI_COMPACTOR_THEME": ("ui", "theme"),
}
"""Environment variable -> config key path. ``TUI_COMPACTOR_CONFIG`` names the file itself."""


MEMORY_LIMIT_ENV = "TUI_COMPACTOR_MEMORY_LIMIT_MB"
"""Overrides the session reader's memory limit for indexing: a number of MB, or 0 for no limit.
Read where it is used (the reader imports no config models), checked with the other variables
by ``load_config``: a bad value is refused like theirs, never silently ignored."""


MEMORY_BASE_MB = 50
"""MB a command takes before any session is read (the interpreter, the libraries, the
reader's buffers): a memory limit must leave room beyond it, else every file is refused."""


def memory_limit_mb(environ: Mapping[str, str] | None = None) -> float | None:
    """``TUI_COMPACTOR_MEMORY_LIMIT_MB`` as a number of MB (None: unset).

    Raises:
        ConfigError: not a finite number, negative, or too small to read any file
            (``MEMORY_BASE_MB`` or less); the message names the variable as the other
            variables' do."""
    env = os.environ if environ is None else environ
    text = env.get(MEMORY_LIMIT_ENV, "").strip()
    if not text:
        return None
    try:
        megabytes = float(text)
        problem = "" if math.isfinite(megabytes) else "Input should be a finite number"
    except ValueError:
        problem = "Input should be a valid number, unable to parse string as a number"
    if not problem and megabytes < 0:
        problem = "Input should be greater than or equal to 0"
    elif not problem and 0 < megabytes <= MEMORY_BASE_MB:
        problem = (
            f"Input should be 0 (no limit) or over {MEMORY_BASE_MB} (what a command takes "
            "before any session: every file would be refused)"
        )
    if problem:
        raise ConfigError(f"environment variable {MEMORY_LIMIT_ENV}: memory_limit_mb: {problem}")
    return megabytes


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the config file is looked for (it need not exist)."""
    env = os.environ if environ is None else environ
    explicit = env.get("TUI_COMPACTOR_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "tui-compactor" / "config.toml"


def set_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The ``ENV_VARS`` that are set to something (an empty variable counts as unset)."""
    return {name: value for name in ENV_VARS if (value := environ.get(name))}


def has_user_config(
    path: Path | str | None = None, environ: Mapping[str, str] | None = None
) -> bool:
    """True when there is anything to read besides the built-in defaults: a file named by
    ``path`` or ``TUI_COMPACTOR_CONFIG`` (even a missing one: that is an error to report), the
    default file, or a ``TUI_COMPACTOR_*`` setting variable."""
    env = os.environ if environ is None else environ
    if path is not None or env.get("TUI_COMPACTOR_CONFIG"):
        return True
    if set_variables(env) or env.get(MEMORY_LIMIT_ENV, "").strip():
        return True
    return config_path(env).exists()
