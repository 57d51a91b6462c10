"""Settings resolved once: defaults < config file < ``TUI_COMPACTOR_*`` < flags < app edits.

``resolve_settings`` reads the config file and the environment (through ``config.load_config``),
lays the flags the user typed on top and returns one frozen ``Settings``. Every command and the
app plan, count and summarize with that object; the app applies its edits with
``Settings.edited``. Each value remembers where it came from (``Settings.sources``) so a problem
can say which setting to change and where.

``Settings.problems`` is the one validation: it names the field, where its value came from and
the reason. A *blocking* problem (keep-recent that does not fit in the window after the reserve)
means nothing may be run or accepted with these settings (``workbench.plans.run_refusal``).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from tui_compactor.config_sources import ENV_VARS, ConfigError, ReasoningEffort, has_user_config
from tui_compactor.engine.settings import (
    BRANCH_SUMMARY_RESERVE_TOKENS,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_KEEP_RECENT_TOKENS,
    CompactionSettings,
    Rules,
    branch_summary_budget,
    check_threshold,
    effective_reserve,
    reserve_window_warning,
    rules_defaults,
    whole_tokens,
)
from tui_compactor.engine.tokens import ESTIMATE_COUNTER, TokenCounter, get_counter
from tui_compactor.wording import NO_TABLE_MARK

if TYPE_CHECKING:
    from tui_compactor.config import Config, Profile
    from tui_compactor.summarize.base import Summarizer

__all__ = [
    "CounterName",
    "FLAGS",
    "FilesFormat",
    "PLAN_SETTINGS",
    "Settings",
    "SettingsProblem",
    "resolve_settings",
    "source_phrase",
    "with_session_window",
]

CounterName = Literal["cl100k", "pi", "bytes"]
FilesFormat = Literal["files", "legacy"]

FLAGS: dict[str, str] = {
    "keep_recent_tokens": "--keep-recent",
    "reserve_tokens": "--reserve",
    "context_window": "--window",
    "rules": "--rules",
    "tokens": "--tokens",
    "files_format": "--files-format",
    "calibrate": "--calibrate",
    "threshold_percent": "--threshold-percent",
    "threshold_tokens": "--threshold-tokens",
    "split_turns": "--no-split-turns",
    "branch_summary_enabled": "--no-branch-ask",
    "branch_summary_reserve_tokens": "--branch-reserve",
    "summary_reasoning_effort": "--reasoning-effort",
    "summary_window": "--summary-window",
}
"""Settings field -> the command-line flag that sets it (the same name in every command)."""

NO_TABLE = "no cl100k table"
"""The source of ``tokens`` when the app counts with the chars/4 estimate because the cl100k
table could not be loaded (``Settings.without_table``)."""

PLAN_SETTINGS: dict[str, str] = {
    "keep_recent_tokens": "keep-recent",
    "reserve_tokens": "reserve",
    "context_window": "window",
    "rules": "rules",
    "tokens": "tokens",
    "calibrate": "calibrate",
    "split_turns": "split turns",
    "threshold_percent": "threshold %",
    "threshold_tokens": "threshold tokens",
}
"""The settings a compaction plan depends on (where it cuts, what it counts, when it would
compact), with the name ``plan`` and the app show them under, in the order they list them."""

_ENV_OF_FIELD: dict[str, str] = {
    path[-1]: variable for variable, path in ENV_VARS.items() if path[0] == "compaction"
}


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    """One problem with the settings: which field, where its value came from, and why.

    ``blocking`` problems forbid running or accepting a compaction; the others are warnings.
    """

    field: str
    reason: str
    source: str
    blocking: bool = True

    def __str__(self) -> str:
        return f"{self.field} ({self.source}): {self.reason}"


@dataclass(frozen=True, slots=True)
class Settings:
    """The planning and summarizing settings every front-end uses (frozen; copy to change).

    ``context_window`` is None when nobody set it: commands then show no threshold, and the app
    uses the session model's known window (``with_model_window``).
    """

    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    reserve_tokens: int | None = None
    context_window: int | None = None
    rules: Rules = "pi"
    tokens: CounterName = "cl100k"
    files_format: FilesFormat = "files"
    calibrate: bool = False
    threshold_percent: float = -1
    """Compact above this percent of the window; -1: the window minus the reserve."""
    threshold_tokens: float = -1
    """Compact above this many tokens; -1: unset (wins over the percent when set). A fraction
    given anywhere (flag, config, variable, app) is kept as the whole tokens it stands for
    (``engine.settings.whole_tokens``), so every view prints the figure in use."""
    split_turns: bool = True
    """False: a cut inside a turn moves back to the turn's start (no turn-prefix summary)."""
    branch_summary_enabled: bool = True
    """Ask how to leave a branch when navigating; False: move without a summary."""
    branch_summary_reserve_tokens: int = BRANCH_SUMMARY_RESERVE_TOKENS
    """A branch summary reads at most ``window - branch_summary_reserve_tokens`` tokens."""
    summary_reasoning_effort: ReasoningEffort | None = None
    """Reasoning effort for summary calls; None: the profile's own ``reasoning_effort``."""
    summary_window: int | None = None
    """The summarizer's input window; None: the profile's own ``context_window``."""
    _config: Config | None = field(default=None, compare=False, repr=False)
    """What ``config`` returns; None until asked when no configuration was read."""
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Field -> where its value came from (``config file PATH``, a variable, a flag, ``app``)."""
    table_chosen_by: str = field(default="default", compare=False)
    """Under ``NO_TABLE``: where the ``cl100k`` the estimate stands in for came from (a switch
    of rules changes it only if nobody chose it, ``_with_rules_defaults``)."""

    def __post_init__(self) -> None:
        threshold = self.threshold_tokens
        if isinstance(threshold, float) and math.isfinite(threshold) and threshold > 0:
            object.__setattr__(self, "threshold_tokens", whole_tokens(threshold))

    @property
    def config(self) -> Config:
        """The whole configuration (profiles, ``[ui]``), as resolved with these settings; the
        built-in one when there was nothing to read (made on first use, so commands that never
        ask import no pydantic)."""
        config = self._config
        if config is None:
            from tui_compactor.config import Config

            config = Config.model_validate({})
            object.__setattr__(self, "_config", config)  # a cache: frozen for everything else
        return config

    @property
    def config_read(self) -> bool:
        """True when a configuration was read (a file or variables): without one, ``config``
        is the built-in default and a caller may skip what it would apply from it."""
        return self._config is not None

    @classmethod
    def defaults(cls) -> Settings:
        """The built-in settings (what ``from_config`` makes of an empty config, without
        building one)."""
        return cls()._with_rules_defaults()

    def source_of(self, name: str) -> str:
        """Where the value of ``name`` came from (``default`` when nobody set it)."""
        return self.sources.get(name, "default")

    def plan_sources(self) -> dict[str, str]:
        """``PLAN_SETTINGS`` -> where each value came from (``source_of``)."""
        return {name: self.source_of(name) for name in PLAN_SETTINGS}

    def plan_source_items(self) -> list[tuple[str, str, str]]:
        """(name shown, value shown, source) of each of ``PLAN_SETTINGS``: what ``plan``
        prints under ``settings`` and the app's plan pane shows (``source_phrase`` words the
        source)."""
        return [
            (label, _shown_value(name, getattr(self, name)), self.source_of(name))
            for name, label in PLAN_SETTINGS.items()
        ]

    def plan_source_lines(self) -> list[str]:
        """One line per setting the plan depends on: its name, its value, where it came from
        (``window 200000 (from TUI_COMPACTOR_CONTEXT_WINDOW)``), as ``plan`` prints them."""
        return [
            f"{label} {value} ({source_phrase(source)})"
            for label, value, source in self.plan_source_items()
        ]

    @property
    def window_configured(self) -> bool:
        """True when the user set the window (config, variable, flag or app edit)."""
        source = self.source_of("context_window")
        return self.context_window is not None and not source.startswith(("model", "assumed"))

    @property
    def window_model(self) -> str | None:
        """The session model whose known window is used (``with_model_window``), if any."""
        source = self.source_of("context_window")
        return source.removeprefix("model ") if source.startswith("model ") else None

    def compaction(self) -> CompactionSettings:
        """The engine's view of these settings (``engine.settings.CompactionSettings``)."""
        return CompactionSettings(
            keep_recent_tokens=self.keep_recent_tokens,
            reserve_tokens=self.reserve_tokens,
            context_window=self.context_window,
            rules=self.rules,
            calibrate=self.calibrate,
            threshold_percent=self.threshold_percent,
            threshold_tokens=self.threshold_tokens,
        )

    def branch_budget(self) -> int:
        """Tokens a branch summary may read: the window minus the branch reserve."""
        return branch_summary_budget(self.context_window, self.branch_summary_reserve_tokens)

    def summarizer_profile(self, profile: Profile) -> Profile:
        """``profile`` with these settings' summarizer overrides (effort, window) applied."""
        changes: dict[str, Any] = {}
        if self.summary_reasoning_effort is not None:
            changes["reasoning_effort"] = self.summary_reasoning_effort
        if self.summary_window is not None:
            changes["context_window"] = self.summary_window
        return profile.model_copy(update=changes) if changes else profile

    def summarizer(
        self,
        *,
        compaction: bool,
        profile: str | None = None,
        provider: str | None = None,
        base_url: str | None = None,
        model: str | None = None,
    ) -> Summarizer:
        """The summarizer of a compaction (the config's ``[summarizer]`` profile) or of a
        branch summary: the named profile, the command line's overrides of it
        (``config.profile_from_flags``), then these settings' effort and window. The app and
        every command get theirs here, so what ``--show-requests`` shows is what is sent.

        Raises:
            ConfigError: an unknown profile or an invalid override.
        """
        from tui_compactor.config import profile_from_flags
        from tui_compactor.summarize.providers import make_summarizer

        chosen = profile_from_flags(
            self.config, profile=profile, provider=provider, base_url=base_url, model=model,
            for_compaction=compaction,
        )  # fmt: skip
        return make_summarizer(self.summarizer_profile(chosen))

    def counter(self) -> TokenCounter:
        """The token counter named by ``tokens`` (one shared instance per name)."""
        return get_counter(self.tokens)

    def without_table(self) -> Settings:
        """These settings counting with the chars/4 estimate (``ESTIMATE_COUNTER``) in place
        of ``cl100k``, whose table could not be loaded: the app's way on (the commands refuse
        instead, ``cli``). The source (``NO_TABLE``) marks every figure the app shows as an
        estimate (``counter_label``, the plan's settings lines)."""
        if self.tokens != "cl100k":
            return self
        chosen_by = self.source_of("tokens")
        return dataclasses.replace(
            self.edited(NO_TABLE, tokens=ESTIMATE_COUNTER), table_chosen_by=chosen_by
        )

    @property
    def counter_label(self) -> str:
        """The counter's name as the app shows it beside counts: ``cl100k``, or ``pi ≈ chars/4,
        no cl100k table`` when the estimate stands in for the table (``without_table``)."""
        if self.source_of("tokens") == NO_TABLE:
            return f"{self.tokens} {NO_TABLE_MARK}"
        return self.tokens

    def edited(self, source: str = "app", **changes: Any) -> Settings:
        """A copy with ``changes`` applied and recorded as coming from ``source``.

        Raises:
            ValueError: an unknown field, or a value of the wrong type or range (the message
                names the field).
        """
        for name, value in changes.items():
            _check_value(name, value)
        sources = dict(self.sources)
        sources.update(dict.fromkeys(changes, source))
        changed = dataclasses.replace(self, sources=sources, **changes)
        return changed._with_rules_defaults() if "rules" in changes else changed

    def _with_rules_defaults(self) -> Settings:
        """Fill the counter and calibration the rules imply where nobody chose them
        (``engine.settings.rules_defaults``: oh-my-pi's byte counter and calibration)."""
        defaults = rules_defaults(self.rules)
        implied: dict[str, Any] = {}
        for name in ("tokens", "calibrate"):
            source = self.source_of(name)
            if source == NO_TABLE:  # the estimate stands in for cl100k: who chose that?
                source = self.table_chosen_by
            if source == "default" or source.startswith("rules "):
                implied[name] = getattr(defaults, name)
        if not implied:
            return self
        sources = dict(self.sources)
        sources.update(dict.fromkeys(implied, f"rules {self.rules}"))
        return dataclasses.replace(self, sources=sources, **implied)

    def with_model_window(self, window: int | None, model: str | None) -> Settings:
        """Use the session model's known ``window`` when the user set none; else unchanged.

        Without a known window, the agents' default (``DEFAULT_CONTEXT_WINDOW``) is assumed and
        ``source_of("context_window")`` says ``assumed``.
        """
        if self.window_configured:
            return self
        if window is None or model is None:
            return self.edited("assumed", context_window=DEFAULT_CONTEXT_WINDOW)
        return self.edited(f"model {model}", context_window=window)

    def for_session(self, session: Any, home: Path | None = None) -> Settings:
        """Rules that follow ``session`` when nobody chose them (flag, variable, config, app).

        The guess (``session.flavor.detect_flavor``: where the file lives, then what is in it)
        is recorded as the source, ``session: <reason>``, which the app's header shows.
        """
        source = self.source_of("rules")
        if source != "default" and not source.startswith("session: "):
            return self
        from tui_compactor.session.flavor import detect_flavor

        flavor = detect_flavor(session, home)
        return self.edited(f"session: {flavor.reason}", rules=flavor.rules)

    @classmethod
    def from_config(cls, config: Config, sources: Mapping[str, str] | None = None) -> Settings:
        """The settings of ``config.compaction`` (no flags); ``sources`` as known."""
        section = config.compaction
        if sources is None:
            origin = f"config file {config.source}" if config.source else "config"
            sources = dict.fromkeys(section.model_fields_set, origin)
        return cls(
            keep_recent_tokens=section.keep_recent_tokens,
            reserve_tokens=section.reserve_tokens,
            context_window=section.context_window,
            rules=section.rules,
            tokens=section.tokens,
            files_format=section.files_format,
            threshold_percent=section.threshold_percent,
            threshold_tokens=section.threshold_tokens,
            split_turns=section.split_turns,
            branch_summary_enabled=section.branch_summary_enabled,
            branch_summary_reserve_tokens=section.branch_summary_reserve_tokens,
            summary_reasoning_effort=section.summary_reasoning_effort,
            summary_window=section.summary_window,
            _config=config,
            sources=sources,
        )._with_rules_defaults()

    def problems(self) -> list[SettingsProblem]:
        """Everything wrong with these settings; empty when they make sense."""
        found: list[SettingsProblem] = []
        if self.rules == "pi":
            for name in ("threshold_percent", "threshold_tokens"):
                if getattr(self, name) > 0:
                    shown = f"{PLAN_SETTINGS[name]} {_shown_value(name, getattr(self, name))}"
                    found.append(
                        SettingsProblem(
                            name,
                            f"{shown} is oh-my-pi's setting: pi rules compact at window - "
                            "reserve, so it is ignored; --rules omp would use it",
                            self.source_of(name),
                            blocking=False,
                        )
                    )
        window = self.context_window
        if window is None:
            return found
        warning = reserve_window_warning(window, self.compaction())
        if warning:
            found.append(
                SettingsProblem(
                    "reserve_tokens", warning, self.source_of("reserve_tokens"), blocking=False
                )
            )
        room = window - effective_reserve(window, self.compaction())
        if self.keep_recent_tokens >= room:
            found.append(
                SettingsProblem(
                    "keep_recent_tokens",
                    f"{self.keep_recent_tokens} must be smaller than the window minus the reserve "
                    f"({window} - {window - room} = {room}): the kept part alone would fill the "
                    "window, so nothing would be summarized and nothing can be run",
                    self.source_of("keep_recent_tokens"),
                )
            )
        return found

    def warnings(self) -> list[str]:
        """The problems that do not stop a plan, each with where its value came from (``threshold
        % 80 is oh-my-pi's setting: … (from config file PATH)``): what every command prints
        after ``warning:`` and the app's plan pane shows."""
        return [
            f"{problem.reason} ({source_phrase(problem.source)})"
            for problem in self.problems()
            if not problem.blocking
        ]

    def blocking_problem(self) -> SettingsProblem | None:
        """The first problem that forbids running a compaction, if any."""
        return next((problem for problem in self.problems() if problem.blocking), None)


def source_phrase(source: str) -> str:
    """Where a setting came from, in words: ``default``, ``from config file PATH``, ``from
    TUI_COMPACTOR_RULES``, ``from --keep-recent``, ``edited in the app``, the
    session's model for a window, the session for rules, the rules for what they imply."""
    if source == "default":
        return "default"
    if source == "app":
        return "edited in the app"
    if source.startswith("model "):
        return f"the window of {source.removeprefix('model ')}, the session's model"
    if source.startswith("assumed"):
        return "assumed: the session's model has no known window; pass --window N"
    if source.startswith("session: "):
        return f"follows the session: {source.removeprefix('session: ')}"
    if source.startswith("rules "):
        return f"implied by the {source.removeprefix('rules ')} rules"
    if source == NO_TABLE:
        return f"{NO_TABLE_MARK}: the table could not be loaded"
    return f"from {source}"


def number_text(value: float) -> str:
    """A setting's number as every view prints it: a whole number in full (``1500000``, never
    ``1.5e+06``), a fraction as short as it reads exactly (``80.5``)."""
    if isinstance(value, int) or (math.isfinite(value) and value == int(value)):
        return str(int(value))
    return repr(value)


def _shown_value(name: str, value: Any) -> str:
    """A setting's value as the source lines show it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "auto" if name == "reserve_tokens" else "none"
    if name in ("threshold_percent", "threshold_tokens"):
        return "unset" if value <= 0 else number_text(value)
    return str(value)


_CHOICES: dict[str, tuple[str | None, ...]] = {
    "rules": get_args(Rules),
    "tokens": get_args(CounterName),
    "files_format": get_args(FilesFormat),
    "summary_reasoning_effort": (*get_args(ReasoningEffort), None),
}
_BOOLEANS = ("calibrate", "split_turns", "branch_summary_enabled")
_TOKEN_COUNTS = (
    "keep_recent_tokens",
    "reserve_tokens",
    "context_window",
    "branch_summary_reserve_tokens",
    "summary_window",
)
_UNSET_ALLOWED = ("reserve_tokens", "context_window", "summary_window")


def _check_value(name: str, value: Any) -> None:
    """Raise ValueError naming ``name`` when ``value`` is not a valid value for it."""
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            choices = ", ".join(str(choice) for choice in _CHOICES[name] if choice is not None)
            raise ValueError(f"{name}: {value!r} is not one of {choices}")
        return
    if name in _BOOLEANS:
        if not isinstance(value, bool):
            raise ValueError(f"{name}: {value!r} is not true or false")
        return
    if name in ("threshold_percent", "threshold_tokens"):
        check_threshold(name, value)
        return
    if name not in _TOKEN_COUNTS:
        raise ValueError(f"{name}: not a setting")
    if value is None and name in _UNSET_ALLOWED:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: {value!r} is not a whole number of tokens")
    if name in ("context_window", "summary_window") and value <= 0:
        raise ValueError(f"{name}: must be greater than 0 (got {value})")
    if value < 0:
        raise ValueError(f"{name}: must not be negative (got {value})")


def resolve_settings(
    flags: Mapping[str, Any] | None = None,
    *,
    config_file: Path | str | None = None,
    environ: Mapping[str, str] | None = None,
    profile: str | None = None,
    read_config: bool = True,
) -> Settings:
    """Resolve the settings once: defaults < config file < ``TUI_COMPACTOR_*`` < ``flags``.

    Args:
        flags: settings field -> value the user typed (``None`` = not typed); keys are the
            names of ``Settings`` fields (``keep_recent_tokens``, ``rules``...).
        config_file: ``--config PATH``; default ``$TUI_COMPACTOR_CONFIG`` or the XDG file.
        environ: the environment (default ``os.environ``).
        profile: ``--profile NAME``: becomes the default summarizer profile.
        read_config: False: neither the config file nor the variables, only defaults < flags
            (``lint`` on a broken config).

    Raises:
        ConfigError: bad config file, bad variable or bad flag value (the message names it).
    """
    env = os.environ if environ is None else environ
    typed = {name: value for name, value in (flags or {}).items() if value is not None}
    for name, value in typed.items():
        try:
            _check_value(name, value)
        except ValueError as error:
            raise ConfigError(f"{FLAGS.get(name, name)}: {error}") from None
    if not read_config or (profile is None and not has_user_config(config_file, env)):
        # Nothing to read: the defaults, as ``from_config`` makes them from an empty config.
        settings = Settings.defaults()
    else:
        from tui_compactor.config import load_config

        overrides: dict[str, Any] = {"default_profile": profile}
        config = load_config(config_file, environ=env, overrides=overrides)
        sources: dict[str, str] = {}
        for name in config.compaction.model_fields_set:
            variable = _ENV_OF_FIELD.get(name)
            if variable and env.get(variable):
                sources[name] = variable
            else:
                sources[name] = f"config file {config.source}" if config.source else "config"
        settings = Settings.from_config(config, sources)
    for name, value in typed.items():
        settings = settings.edited(FLAGS.get(name, name), **{name: value})
    return settings._with_rules_defaults()


def with_session_window(settings: Settings, session: Any) -> Settings:
    """``settings`` with the window of the session's own model (at the file's leaf) when the
    user set none (``Settings.with_model_window``): what the app and the analysis commands use."""
    if settings.window_configured:
        return settings  # the user's window wins: no need to read the session's model
    from tui_compactor.engine.context import context_model
    from tui_compactor.engine.models import known_context_window

    model_id = None
    if session is not None:
        model_id = (context_model(session, session.leaf, rules=settings.rules) or {}).get("modelId")
    return settings.with_model_window(known_context_window(model_id), model_id)
