"""User configuration: pydantic models read from an XDG TOML file, the environment and flags.

Precedence, lowest first: built-in defaults < ``config.toml`` < ``TUI_COMPACTOR_*`` environment
variables < flags the user typed. The file lives at
``$XDG_CONFIG_HOME/tui-compactor/config.toml`` (``~/.config/tui-compactor/config.toml`` when the
variable is unset); ``TUI_COMPACTOR_CONFIG`` names another file.

Example::

    default_profile = "local"
    compaction_profile = "cheap"

    [compaction]
    keep_recent_tokens = 20000      # tokens of recent conversation kept verbatim
    reserve_tokens = 16384          # omit to use oh-my-pi's default / 15%-of-window rule
    context_window = 200000         # window of the agent's model (for thresholds)
    rules = "pi"                    # "pi" (loses nothing) or "omp"
    tokens = "cl100k"               # token counter: cl100k | pi | bytes
    files_format = "files"          # "files" (<files> block) or "legacy" (pi's tags)

    [profiles.local]
    provider = "openai"             # openai | anthropic | offline
    base_url = "http://127.0.0.1:8080/v1"
    model = "qwen2.5-coder"
    context_window = 32768
    max_output_tokens = 4096
    api_key_env = "OPENAI_API_KEY"  # the key is read from this variable when a request is made
    timeout = 120
    max_retries = 3

    [ui]
    theme = "textual-dark"
    [ui.keymap]
    compact = "c"                   # binding id -> keys (comma-separated)

Where the configuration comes from (the file's path, the variables) is decided in
``config_sources``, which imports no pydantic.

API keys are never stored in these objects: a profile names the environment variable and
``Profile.api_key()`` reads it at call time, wrapped in ``SecretStr`` so printing never shows it.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from tui_compactor.config_sources import (
    ENV_VARS,
    ConfigError,
    ReasoningEffort,
    config_path,
    memory_limit_mb,
    set_variables,
)
from tui_compactor.engine.settings import check_threshold
from tui_compactor.wording import token_figure

__all__ = [
    "CompactionConfig",
    "Config",
    "ConfigError",
    "Profile",
    "UIConfig",
    "ENV_VARS",
    "OFFLINE_PROFILE",
    "config_path",
    "load_config",
    "profile_from_flags",
]

ProviderName = Literal["openai", "anthropic", "offline"]

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Base URL used when a profile names none."""

DEFAULT_KEY_ENVS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""Environment variable holding the key when a profile names none."""


class _Strict(BaseModel):
    """Base for config sections: unknown keys are errors (typos should not pass silently)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class CompactionConfig(_Strict):
    """``[compaction]``: planning settings shared by the app and the headless commands."""

    keep_recent_tokens: int = Field(20000, ge=0, description="Recent tokens kept verbatim.")
    reserve_tokens: int | None = Field(
        None, ge=0, description="Reserve for the summary; unset = oh-my-pi's default rule."
    )
    context_window: int | None = Field(None, gt=0, description="The agent model's window.")
    rules: Literal["pi", "omp"] = Field("pi", description="Which agent's planning rules.")
    tokens: Literal["cl100k", "pi", "bytes"] = Field("cl100k", description="Token counter.")
    files_format: Literal["files", "legacy"] = Field(
        "files", description="File list block: <files> or pi's <read-files>/<modified-files>."
    )
    threshold_percent: float = Field(
        -1, description="Compact above this percent of the window (-1: window - reserve)."
    )
    threshold_tokens: float = Field(
        -1,
        description="Compact above this many tokens (-1: unset; wins over the percent; a "
        "fraction counts as the whole tokens below it, at least 1).",
    )

    @field_validator(
        "keep_recent_tokens",
        "reserve_tokens",
        "context_window",
        "branch_summary_reserve_tokens",
        "summary_window",
        mode="before",
    )
    @classmethod
    def _token_figure(cls, value: Any) -> Any:
        """A token figure written as text (a ``TUI_COMPACTOR_*`` variable, ``"20k"`` in the
        file) reads as the app's plan form and the flags read it (``wording.token_figure``);
        what it cannot read is left to the field's own check, which names the problem."""
        if isinstance(value, str):
            try:
                return int(token_figure(value))
            except ValueError:
                return value
        return value

    @field_validator("threshold_tokens", mode="before")
    @classmethod
    def _threshold_figure(cls, value: Any) -> Any:
        """``"20k"`` as the flag and the plan form read it (the fraction kept)."""
        if isinstance(value, str):
            try:
                return token_figure(value)
            except ValueError:
                return value
        return value

    @field_validator("threshold_percent", "threshold_tokens")
    @classmethod
    def _threshold(cls, value: float, info: ValidationInfo) -> float:
        """The thresholds' bounds, as the flags are held to them (``check_threshold``)."""
        check_threshold(str(info.field_name), value)
        return value

    split_turns: bool = Field(
        True, description="Allow a cut inside a turn (false: the cut moves to the turn start)."
    )
    branch_summary_enabled: bool = Field(
        True, description="Ask how to leave a branch when navigating (false: just move)."
    )
    branch_summary_reserve_tokens: int = Field(
        16384, ge=0, description="Branch summaries read at most the window minus this."
    )
    summary_reasoning_effort: ReasoningEffort | None = Field(
        None, description="Reasoning effort for summary calls, overriding the profile's."
    )
    summary_window: int | None = Field(
        None, gt=0, description="The summarizer's window, overriding the profile's."
    )


class Profile(_Strict):
    """``[profiles.NAME]``: one summarizer endpoint. Holds no key, only where to find it."""

    name: str = Field("offline", description="The profile's name (its table name).")
    provider: ProviderName = "offline"
    base_url: str | None = None
    model: str | None = None
    context_window: int = Field(128000, gt=0, description="The summarizer model's window.")
    max_output_tokens: int | None = Field(None, gt=0, description="Cap on any max_tokens sent.")
    reasoning_effort: ReasoningEffort | None = Field(
        None, description="Reasoning effort for summary calls (unset: the model's default)."
    )
    api_key_env: str | None = Field(None, description="Variable holding the API key.")
    timeout: float = Field(120.0, gt=0, description="Seconds without progress before giving up.")
    max_retries: int = Field(3, ge=0, description="Retries on 429, 5xx and connection errors.")

    @property
    def resolved_base_url(self) -> str:
        """The base URL, or the provider's public endpoint."""
        return (self.base_url or DEFAULT_BASE_URLS.get(self.provider, "")).rstrip("/")

    @property
    def key_env(self) -> str | None:
        """The environment variable the key is read from (None for offline)."""
        if self.provider == "offline":
            return None
        return self.api_key_env or DEFAULT_KEY_ENVS[self.provider]

    def api_key(self, environ: Mapping[str, str] | None = None) -> SecretStr | None:
        """Read the key from the environment now; never cached on the object."""
        env_name = self.key_env
        if env_name is None:
            return None
        value = (os.environ if environ is None else environ).get(env_name)
        return SecretStr(value) if value else None

    @property
    def label(self) -> str:
        """Short human label: ``offline`` or ``provider:model``."""
        if self.provider == "offline":
            return "offline"
        return f"{self.provider}:{self.model or '?'}"


OFFLINE_PROFILE = Profile.model_validate({"name": "offline", "provider": "offline"})
"""The profile used when none is configured: the extractive offline summarizer."""


class UIConfig(_Strict):
    """``[ui]``: theme and key bindings (binding id -> comma-separated keys)."""

    theme: str = "textual-dark"
    keymap: dict[str, str] = Field(default_factory=dict)


class Config(_Strict):
    """The whole configuration. ``source`` is the file it was read from, if any."""

    compaction: CompactionConfig = Field(
        default_factory=lambda: CompactionConfig.model_validate({})
    )
    default_profile: str | None = None
    compaction_profile: str | None = None
    profiles: dict[str, Profile] = Field(default_factory=dict)
    ui: UIConfig = Field(default_factory=lambda: UIConfig.model_validate({}))
    source: Path | None = Field(None, exclude=True)
    _fixed: bool = PrivateAttr(False)

    @property
    def fixed(self) -> bool:
        """True for a configuration the program made itself (the demo's): no config file or
        variable is read, so no hint may send the user to them."""
        return self._fixed

    def as_fixed(self) -> Config:
        """This configuration, marked ``fixed``."""
        self._fixed = True
        return self

    def profile(self, name: str | None = None) -> Profile:
        """The named profile, else the default one, else the offline profile.

        Raises:
            ConfigError: the name is not ``offline`` and no such profile exists.
        """
        chosen = name or self.default_profile
        if chosen is None or (chosen == "offline" and chosen not in self.profiles):
            return OFFLINE_PROFILE
        if chosen not in self.profiles:
            known = ", ".join(sorted(self.profiles)) or "none defined"
            where = f" in {self.source}" if self.source else ""
            raise ConfigError(f"unknown profile {chosen!r}{where} (profiles: {known})")
        return self.profiles[chosen]

    def summarizer_profile(self, name: str | None = None) -> Profile:
        """The profile for compaction: ``name``, else ``compaction_profile``, else the default."""
        return self.profile(name or self.compaction_profile)


_TOML_LINE = re.compile(r"at line (\d+)(?:, column (\d+))?")


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    """Parse ``path``; raise ConfigError naming file and line on bad TOML."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config file: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: config file is not valid UTF-8") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = _TOML_LINE.search(message)
        detail = _TOML_LINE.sub("", message).strip(" ()")
        if found:
            column = f", column {found.group(2)}" if found.group(2) else ""
            raise ConfigError(f"{path}:{found.group(1)}: invalid TOML{column}: {detail}") from None
        raise ConfigError(f"{path}: invalid TOML: {detail}") from None


def _line_of_key(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort physical line of the key at ``loc`` (for validation error messages)."""
    lines = text.splitlines()
    keys = [str(part) for part in loc if not isinstance(part, int)]
    if not keys:
        return None
    # Find the table header holding the key, then the key below it.
    table, key = keys[:-1], keys[-1]
    start = 0
    if table:
        header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(k) for k in table) + r"\s*\]")
        for number, line in enumerate(lines):
            if header.match(line):
                start = number
                break
        else:
            start = 0
    key_pattern = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
    for number in range(start, len(lines)):
        if key_pattern.match(lines[number]):
            return number + 1
    if table:
        return start + 1
    return None


def _set_path(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set ``target[path[0]][path[1]]... = value``, creating tables on the way."""
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``extra`` over ``base`` (tables merge, values replace); returns ``base``."""
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = dict(value) if isinstance(value, Mapping) else value
    return base


_SECRET_KEY = re.compile(
    r"^(?:(?:openai|anthropic)[_-]?)?(?:api[_-]?key|key|secret|password|(?:access|auth)[_-]?token)$",
    re.IGNORECASE,
)
"""Unknown keys that look like a credential get the api_key_env advice instead."""


def _validation_message(
    error: ValidationError,
    path: Path | None,
    text: str,
    variables: Mapping[tuple[str, ...], str] | None = None,
) -> str:
    """One line per problem, each naming where the value came from (the file and its line, or
    the ``TUI_COMPACTOR_*`` variable that set it: ``variables`` maps key path -> name) and the
    key."""
    messages = []
    for item in error.errors():
        loc = tuple(item.get("loc", ()))
        dotted = ".".join(str(part) for part in loc)
        variable = (variables or {}).get(tuple(str(part) for part in loc))
        line = _line_of_key(text, loc) if path is not None and variable is None else None
        if variable is not None:
            where = f"environment variable {variable}"
        else:
            where = f"{path}:{line}" if line else (str(path) if path else "config")
        message = item.get("msg", "invalid value")
        key = str(loc[-1]) if loc else ""
        raised = item.get("ctx", {}).get("error")
        if item.get("type") == "value_error" and isinstance(raised, ValueError):
            # A rule of ours refused the value (``check_threshold``): its words, not
            # pydantic's "Value error, ", and the key said once (``dotted`` names it).
            message = str(raised).removeprefix(f"{key}: ")
        if item.get("type") == "extra_forbidden" and _SECRET_KEY.search(key):
            # Never echo the value: it is probably a real key.
            message = (
                "API keys are never stored in the config; put the key in an environment "
                'variable and name it in the profile with api_key_env = "NAME"'
            )
        messages.append(f"{where}: {dotted}: {message}")
    return "\n".join(messages)


def load_config(
    path: Path | str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Load the configuration: defaults < file < ``TUI_COMPACTOR_*`` env < ``overrides``.

    Args:
        path: the config file; default ``config_path()``. A missing default file is fine; a
            missing explicit file is an error.
        environ: the environment to read (default ``os.environ``).
        overrides: nested values from flags the user typed, e.g.
            ``{"compaction": {"keep_recent_tokens": 5000}}``. ``None`` values are ignored.

    Raises:
        ConfigError: bad TOML, unknown keys or bad values; the message names file and line.
    """
    env = os.environ if environ is None else environ
    explicit = path is not None or bool(env.get("TUI_COMPACTOR_CONFIG"))
    file_path = Path(path).expanduser() if path is not None else config_path(env)
    data: dict[str, Any] = {}
    text = ""
    source: Path | None = None
    if file_path.exists():
        data, text = _read_toml(file_path)
        source = file_path
    elif explicit:
        raise ConfigError(f"{file_path}: config file not found")

    # Profile names come from their table names.
    profiles = data.get("profiles")
    if isinstance(profiles, dict):
        for profile_name, table in profiles.items():
            if isinstance(table, dict):
                table.setdefault("name", profile_name)

    env_layer: dict[str, Any] = {}
    variables: dict[tuple[str, ...], str] = {}
    for variable, value in set_variables(env).items():
        _set_path(env_layer, ENV_VARS[variable], value)
        variables[ENV_VARS[variable]] = variable
    _merge(data, env_layer)
    if overrides:
        typed = _drop_none(overrides)
        _merge(data, typed)
        variables = {keys: name for keys, name in variables.items() if not _has_path(typed, keys)}

    try:
        config = Config.model_validate(data)
    except ValidationError as error:
        raise ConfigError(_validation_message(error, source, text, variables)) from None
    memory_limit_mb(env)  # read by the session reader; a bad value is refused here too
    config.source = source
    return config


def _has_path(values: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    """True when ``values[keys[0]][keys[1]]...`` exists (a flag set that key)."""
    for key in keys:
        if not isinstance(values, Mapping) or key not in values:
            return False
        values = values[key]
    return True


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    """Copy of ``values`` without None leaves (flags the user did not type)."""
    result: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            nested = _drop_none(value)
            if nested:
                result[key] = nested
        elif value is not None:
            result[key] = value
    return result


def profile_from_flags(
    config: Config,
    *,
    profile: str | None = None,
    provider: str | None = None,
    base_url: str | None = None,
    model: str | None = None,
    for_compaction: bool = True,
) -> Profile:
    """The profile a command should use given ``--profile/--provider/--base-url/--model``.

    ``--profile`` picks a configured profile; ``--provider``, ``--base-url`` and ``--model``
    override fields of it (or, alone, describe an ad-hoc profile). Keys still come from the
    environment (``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` or the profile's ``api_key_env``).
    """
    base = config.summarizer_profile(profile) if for_compaction else config.profile(profile)
    if profile is None and (base_url or model) and provider is None and base.provider == "offline":
        provider = "openai"  # --base-url/--model alone describe an OpenAI-compatible server
    if profile is None and provider is not None and provider != base.provider:
        # A different provider typed on the command line: start from that provider's defaults.
        base = OFFLINE_PROFILE.model_copy(update={"name": "flags"})
    changes: dict[str, Any] = {}
    if provider is not None:
        changes["provider"] = provider
    if base_url is not None:
        changes["base_url"] = base_url
    if model is not None:
        changes["model"] = model
    if not changes:
        return base
    try:
        return Profile.model_validate({**base.model_dump(), **changes})
    except ValidationError as error:
        raise ConfigError(_validation_message(error, None, "")) from None
