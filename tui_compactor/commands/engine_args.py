"""Switches and helpers shared by the engine commands (plan, context, serialize, navigate, export).

Nothing heavy is imported at module level: the CLI builds every parser on start-up.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tui_compactor.workbench.exits import EXIT_OK, EXIT_REFUSED, EXIT_USAGE

if TYPE_CHECKING:
    from tui_compactor.workbench.settings import Settings

__all__ = ["EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "CommandError"]


class CommandError(Exception):
    """A user-facing error: printed as ``tui-compactor: <message>`` with exit status 2."""


def tokens(text: str) -> int:
    """A number of tokens as the app's plan form reads it (``wording.token_figure``: ``20000``,
    ``20k``, ``1.5M``; a fraction counts as the whole tokens below it), for argparse.

    Raises:
        argparse.ArgumentTypeError: not such a figure.
    """
    from tui_compactor.wording import token_figure

    try:
        return int(token_figure(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"not a number of tokens (20000, 20k, 1.5M): {text}"
        ) from error


def token_threshold(text: str) -> float:
    """``--threshold-tokens``: a token figure as ``tokens`` reads it (``20k``), its fraction
    kept (``engine.settings.whole_tokens`` decides what it counts as); ``-1`` unsets it."""
    from tui_compactor.wording import token_figure

    try:
        return token_figure(text)
    except ValueError:
        pass
    try:  # nan, inf: refused by the threshold's own check, in the words the config gets
        return float(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"not a number of tokens (20000, 20k, 1.5M): {text}"
        ) from error


def int_list(text: str) -> list[int]:
    """``"20000,50k"`` -> ``[20000, 50000]`` (argparse type; each value as ``tokens``)."""
    try:
        values = [tokens(part) for part in text.split(",") if part.strip()]
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(
            f"not a comma-separated list of token figures (20000,50k): {text}"
        ) from error
    if not values or any(value < 0 for value in values):
        raise argparse.ArgumentTypeError(f"expected non-negative integers: {text}")
    return values


def non_negative(text: str) -> int:
    """A number of tokens that is not negative (argparse type; ``tokens``)."""
    value = tokens(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def positive_tokens(text: str) -> int:
    """A number of tokens greater than zero (argparse type; a window of 0 means nothing)."""
    value = tokens(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text}")
    return value


def positive(text: str) -> int:
    """An integer greater than zero (argparse type: a count, such as ``stats --jobs``)."""
    try:
        value = int(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an integer: {text}") from error
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0: {text}")
    return value


def add_config(parser: argparse.ArgumentParser) -> None:
    """``--config PATH``, the same in every command that reads the settings."""
    parser.add_argument(
        "--config",
        default=None,
        metavar="PATH",
        help="config file to read (default: $TUI_COMPACTOR_CONFIG or the XDG file)",
    )


def add_rules(parser: argparse.ArgumentParser, help: str) -> None:  # noqa: A002
    """``--rules pi|omp`` (``help`` says what the rules change in this command)."""
    parser.add_argument("--rules", choices=("pi", "omp"), default=None, help=help)


def add_settings(parser: argparse.ArgumentParser, *, keep_list: bool = False) -> None:
    """The settings flags, the same in every command: they override the config file and the
    ``TUI_COMPACTOR_*`` variables (``workbench.settings.resolve_settings``).

    ``keep_list=True`` (``plan``) lets ``--keep-recent`` take several values, one plan each.
    """
    add_config(parser)
    parser.add_argument(
        "--keep-recent",
        type=int_list if keep_list else non_negative,
        default=None,
        metavar="N[,N...]" if keep_list else "N",
        help="tokens of recent conversation kept after the cut (config default 20000)"
        + ("; several values give several plans" if keep_list else ""),
    )
    parser.add_argument(
        "--reserve",
        type=non_negative,
        default=None,
        metavar="N",
        help="reserve tokens (config default: the rules' default)",
    )
    parser.add_argument(
        "--window",
        type=positive_tokens,
        default=None,
        metavar="N",
        help="the agent model's context window: adds the compaction threshold",
    )
    parser.add_argument(
        "--tokens",
        choices=("cl100k", "pi", "bytes"),
        default=None,
        help="token counter: cl100k (default under pi rules), pi (chars/4), "
        "bytes (oh-my-pi's; the default under --rules omp)",
    )
    add_rules(parser, "pi 0.73.1 (default; loses nothing) or oh-my-pi; see docs/rules.md")
    parser.add_argument(
        "--calibrate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="oh-my-pi keep-recent calibration by the usage/estimate ratio "
        "(on by default under --rules omp; pi rules never calibrate)",
    )
    parser.add_argument(
        "--files-format",
        choices=("files", "legacy"),
        default=None,
        help="file list in summaries: <files> block (default) or pi's tags",
    )
    parser.add_argument(
        "--threshold-percent",
        type=float,
        default=None,
        metavar="P",
        help="compact above P%% of the window (-1: window - reserve, default)",
    )
    parser.add_argument(
        "--threshold-tokens",
        type=token_threshold,
        default=None,
        metavar="N",
        help="compact above N tokens (-1: unset; wins over the percent; a fraction counts as "
        "the whole tokens below it, at least 1)",
    )
    parser.add_argument(
        "--no-split-turns",
        dest="split_turns",
        action="store_const",
        const=False,
        default=None,
        help="never cut inside a turn: the cut moves back to the turn's start",
    )
    parser.add_argument(
        "--no-branch-ask",
        dest="branch_summary_enabled",
        action="store_const",
        const=False,
        default=None,
        help="navigating in the app moves without asking about a branch summary",
    )
    parser.add_argument(
        "--branch-reserve",
        type=non_negative,
        default=None,
        metavar="N",
        help="a branch summary reads at most window - N tokens (default 16384)",
    )
    parser.add_argument(
        "--reasoning-effort",
        default=None,
        choices=("off", "minimal", "low", "medium", "high", "xhigh"),
        help="reasoning effort of summary calls (default: the profile's)",
    )
    parser.add_argument(
        "--summary-window",
        type=positive_tokens,
        default=None,
        metavar="N",
        help="the summarizer's own window (default: the profile's); larger "
        "regions are summarized in windows",
    )


PROVIDERS = ("openai", "anthropic", "offline")
"""The summarizer providers (``config.ProviderName``; kept here so that no parser imports the
config module)."""


def add_summarizer(parser: argparse.ArgumentParser) -> None:
    """The summarizer's flags, the same in every command that summarizes: they override the
    profile taken from the config (``config.profile_from_flags``)."""
    parser.add_argument("--profile", default=None, help="summarizer profile from the config")
    parser.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=None,
        help="summarizer provider, overriding the profile",
    )
    parser.add_argument("--base-url", default=None, help="summarizer base URL")
    parser.add_argument("--model", default=None, help="summarizer model name")


def summarizer_from_args(args: argparse.Namespace, settings: Settings, *, compaction: bool) -> Any:
    """The summarizer ``add_summarizer``'s flags choose under ``settings``
    (``Settings.summarizer``). Raises ``ConfigError``."""
    return settings.summarizer(
        compaction=compaction, profile=args.profile, provider=args.provider,
        base_url=args.base_url, model=args.model,
    )  # fmt: skip


def settings_from_args(args: argparse.Namespace, *, config_optional: bool = False) -> Settings:
    """Resolve the settings from the config, the environment and the flags in ``args``.

    Warnings about the settings go to stderr. Raises ``CommandError`` on a config problem;
    with ``config_optional`` (``lint``, whose exit status judges the file, not the config) a
    broken config file or variable is a warning and only the flags are read.
    """
    from tui_compactor.config_sources import ConfigError
    from tui_compactor.workbench.settings import resolve_settings

    keep = getattr(args, "keep_recent", None)
    flags = {
        "keep_recent_tokens": keep[0] if isinstance(keep, list) else keep,
        "reserve_tokens": getattr(args, "reserve", None),
        "context_window": getattr(args, "window", None),
        "rules": getattr(args, "rules", None),
        "tokens": getattr(args, "tokens", None),
        "files_format": getattr(args, "files_format", None),
        "calibrate": getattr(args, "calibrate", None),
        "threshold_percent": getattr(args, "threshold_percent", None),
        "threshold_tokens": getattr(args, "threshold_tokens", None),
        "split_turns": getattr(args, "split_turns", None),
        "branch_summary_enabled": getattr(args, "branch_summary_enabled", None),
        "branch_summary_reserve_tokens": getattr(args, "branch_reserve", None),
        "summary_reasoning_effort": getattr(args, "reasoning_effort", None),
        "summary_window": getattr(args, "summary_window", None),
    }
    try:
        settings = resolve_settings(flags, config_file=getattr(args, "config", None))
    except ConfigError as error:
        if not config_optional:
            raise CommandError(str(error)) from None
        print(
            f"warning: {error}; the config is not used: only the flags are read "
            "(--rules, else the session file's own rules)",
            file=sys.stderr,
        )
        try:
            settings = resolve_settings(flags, read_config=False)
        except ConfigError as flag_error:
            raise CommandError(str(flag_error)) from None
    for warning in settings.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    return settings


def load_with_settings(
    args: argparse.Namespace,
    *,
    writes: bool = True,
    on_record: Any = None,
    settings: Settings | None = None,
) -> tuple[Settings, Any]:
    """The settings (``settings_from_args`` unless already resolved, then fitted to the
    session: its rules, its model's window) and the session of ``args.session`` (``load``,
    with ``writes`` and ``on_record``), in that order, so a settings problem is reported before
    the file is read. Raises ``CommandError``."""
    if settings is None:
        settings = settings_from_args(args)
    session = load(args.session, writes=writes, on_record=on_record)
    return settings.for_session(session), session


def load_at_leaf(
    args: argparse.Namespace, *, writes: bool = True, settings: Settings | None = None
) -> tuple[Settings, Any, int]:
    """``load_with_settings``, then the node the command works at: ``--leaf``/``--at``, or the
    file's leaf (``leaf_or_default``). Raises ``CommandError``."""
    settings, session = load_with_settings(args, writes=writes, settings=settings)
    return settings, session, leaf_or_default(session, args.leaf)


def format_ids(ids: list[str], *, head: int = 3, tail: int = 2) -> str:
    """``a, b, c, …, y, z (N entries)``: every id when few, else the first and last few."""
    from tui_compactor.textsafe import sanitize

    if not ids:
        return "(none)"
    shown = [sanitize(ident, single_line=True, max_len=40) for ident in ids]
    if len(shown) <= head + tail + 1:
        return ", ".join(shown)
    return ", ".join([*shown[:head], "…", *shown[-tail:]]) + f" ({len(shown)} entries)"


def add_session(parser: argparse.ArgumentParser) -> None:
    """The SESSION positional."""
    parser.add_argument("session", metavar="SESSION", help="session file (.jsonl)")


def add_leaf(parser: argparse.ArgumentParser, *, at: bool = False) -> None:
    """The node option: ``--leaf ID`` and ``--at ID`` are the same switch, both in ``--help``.

    ``at=True`` makes ``--at`` the name shown first (context, serialize, export: "what the
    model sees at this node"); otherwise ``--leaf`` leads (plan, navigate, compact).
    """
    flags = ["--at", "--leaf"] if at else ["--leaf", "--at"]
    parser.add_argument(
        *flags,
        dest="leaf",
        metavar="ID",
        help=(
            "entry id (or #INDEX) of the node to work at instead of the file's leaf "
            f"({flags[1]} is the same switch)"
        ),
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


_KEPT: list[Any] = []
"""The session ``load`` gave last, held so that it is not freed entry by entry when the command
returns: ``cli.script`` ends the process right after (replaced by the next load in-process)."""


def load(path: str, *, writes: bool = True, on_record: Any = None) -> Any:
    """Load a session; refused files raise ``CommandError``. Warnings go to stderr.

    ``writes=False`` (commands that only read) skips the file's sha256, which only the append
    gate uses: a session loaded so can never be written. ``on_record``: ``load_session``'s
    hook.
    """
    from tui_compactor.session.reader import load_session
    from tui_compactor.textsafe import sanitize

    session = load_session(path, digest=writes, on_record=on_record)
    _KEPT[:] = [session]
    verdict = str(getattr(session, "verdict", ""))
    if verdict == "refuse" or not session.entries:
        reasons = "; ".join(str(d) for d in session.diagnostics[:3]) or "no entries"
        raise CommandError(sanitize(f"cannot use {path}: {reasons}", single_line=True))
    problems = [
        d for d in session.diagnostics if str(getattr(d, "severity", "")) in ("warning", "error")
    ]
    if problems:
        first = sanitize(str(problems[0]), single_line=True, max_len=160)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        print(f"note: {first}{more}; details: tui-compactor lint FILE", file=sys.stderr)
    return session


def resolve(session: Any, ident: str | None, *, what: str = "entry") -> int | None:
    """Entry index for an id or ``#N`` (``workbench.refs.resolve_ref``); None stays None."""
    from tui_compactor.workbench.refs import RefError, resolve_ref

    try:
        return resolve_ref(session, ident, what=what)
    except RefError as error:
        raise CommandError(str(error)) from None


def leaf_or_default(session: Any, ident: str | None) -> int:
    """The chosen node, or the file's leaf."""
    index = resolve(session, ident, what="leaf")
    if index is None:
        index = session.leaf
    if index is None:
        raise CommandError(f"{session.path} has no entries")
    return index


def dump_json(value: Any) -> None:
    """Print JSON (UTF-8, stable key order as built) to stdout; see ``json_for_terminal``
    (big lists are written piece by piece, never as one string)."""
    from tui_compactor.textsafe import write_json_for_terminal

    write_json_for_terminal(sys.stdout, value)


def fail(error: CommandError) -> int:
    """Print a CommandError and return the usage exit status."""
    print(f"tui-compactor: {error}", file=sys.stderr)
    return EXIT_USAGE


def entry_id(session: Any, index: int | None) -> str | None:
    """Id of entry ``index`` (None stays None)."""
    return None if index is None else session.entries[index].id


def preview(message: dict[str, Any], width: int = 60) -> str:
    """One sanitized line that says what a message is about."""
    from tui_compactor.engine.messages import message_text
    from tui_compactor.textsafe import sanitize

    return sanitize(
        " ".join(message_text(message, brief=True).split()), single_line=True, max_len=width
    )
