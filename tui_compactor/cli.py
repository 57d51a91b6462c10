"""Command-line entry point.

``tui-compactor SESSION`` opens the app, ``tui-compactor`` alone opens the session picker and
``tui-compactor COMMAND ...`` runs a headless command. Each command lives in its own module under
``tui_compactor.commands`` with ``add_arguments(parser)`` and ``run(args) -> int``; those modules
import nothing heavy at import time, so building the parser stays fast and headless commands never
load Textual.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from tui_compactor import __version__
from tui_compactor.workbench.exits import EXIT_USAGE

COMMANDS: dict[str, tuple[str, str]] = {
    "open": ("tui_compactor.commands.open", "open a session in the app (the default)"),
    "demo": ("tui_compactor.commands.demo", "open a copy of the bundled sample session"),
    "lint": ("tui_compactor.commands.lint", "check a session file: verdict and diagnostics"),
    "tree": ("tui_compactor.commands.tree", "print the session tree outline"),
    "inspect": ("tui_compactor.commands.inspect", "one JSON object per entry"),
    "plan": (
        "tui_compactor.commands.plan",
        "where compaction would cut, and what it would summarize",
    ),
    "context": ("tui_compactor.commands.context", "what the model would receive at a node"),
    "serialize": ("tui_compactor.commands.serialize", "the exact text sent to the summarizer"),
    "navigate": (
        "tui_compactor.commands.navigate",
        "move the leaf to another node, with a branch summary",
    ),
    "compact": ("tui_compactor.commands.compact", "summarize and append a compaction entry"),
    "undo": ("tui_compactor.commands.undo", "move the leaf back above the last compaction"),
    "seal": (
        "tui_compactor.commands.seal",
        "end a torn last line with a newline (keeps its bytes)",
    ),
    "export": ("tui_compactor.commands.export", "export the context at a node as Markdown or JSON"),
    "audit": (
        "tui_compactor.commands.audit",
        "hindsight audit: what each compaction lost that the session needed later",
    ),
    "timeline": (
        "tui_compactor.commands.timeline",
        "every compaction and branch summary in order, with scores",
    ),
    "stats": (
        "tui_compactor.commands.stats",
        "every session under some directories: size, compactions, peak context, worst score",
    ),
    "shake": (
        "tui_compactor.commands.shake",
        "preview oh-my-pi's shake: the regions it would elide (never writes)",
    ),
}
"""Command name -> (module, one-line help)."""

APP_COMMANDS = frozenset({"open", "demo"})
"""Commands that hand the terminal to the app (Textual draws with escape sequences)."""


def _load_command(name: str):  # type: ignore[no-untyped-def]
    """Import a command module, or None if it is not available in this build."""
    module_name, _ = COMMANDS[name]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name == module_name:
            return None
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with one subparser per available command, or only the subparser of
    ``only``: running one command imports its module alone, not every command's."""
    parser = argparse.ArgumentParser(
        prog="tui-compactor",
        description="Inspect, plan and run context compaction for pi / oh-my-pi sessions.",
    )
    parser.add_argument("--version", action="version", version=f"tui-compactor {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        if only is not None and name != only:
            continue
        module = _load_command(name)
        if module is None:
            continue
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub)
        sub.set_defaults(_module=module)
    return parser


TOP_LEVEL_OPTIONS = ("-h", "--help", "--version")
"""Options of ``tui-compactor`` itself; any other first option belongs to the app (``open``)."""


def opens_the_app(args: Sequence[str]) -> bool:
    """True when ``args`` start the app: nothing, a path, or an app option such as
    ``--sessions-dir DIR`` (the README's ``tui-compactor --sessions-dir DIR``)."""
    if not args:
        return True
    first = args[0]
    if first in COMMANDS:
        return False
    if first.startswith("-"):
        return first.split("=", 1)[0] not in TOP_LEVEL_OPTIONS
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen command; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if opens_the_app(args_list):
        args_list.insert(0, "open")
    named = args_list[0] if args_list[0] in COMMANDS else None
    parser = build_parser(only=named)
    args = parser.parse_args(args_list)
    module = getattr(args, "_module", None)
    if module is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command in APP_COMMANDS:
        return _run(module, args)
    from tui_compactor.textsafe import TerminalSafeStream

    # Every headless command prints through the one sanitizer (see TerminalSafeStream).
    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalSafeStream(saved[0])
    sys.stderr = TerminalSafeStream(saved[1], flush_first=saved[0])
    try:
        return _run(module, args)
    finally:
        sys.stdout, sys.stderr = saved


def _run(module, args: argparse.Namespace) -> int:  # type: ignore[no-untyped-def]
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:
        # The one place a command meets a cl100k table that cannot be loaded: it refuses
        # (exit 2) with why and the counters that need none, rather than count with another
        # counter than the one asked for (a script reads the numbers; a compaction records
        # them). A command that counted nothing has not imported the counters: then the error
        # is not theirs.
        tokens = sys.modules.get("tui_compactor.engine.tokens")
        if tokens is None or not isinstance(error, tokens.TokenTableError):
            raise
        print(f"tui-compactor {args.command}: {error}", file=sys.stderr)
        return EXIT_USAGE


def script() -> NoReturn:
    """The ``tui-compactor`` program (and ``python -m tui_compactor``): ``main``; after a
    headless command the process ends as soon as its output is flushed, without tearing the
    interpreter down. The system takes the memory back at once, where freeing a loaded index
    object by object costs ~7% of ``plan`` on a 100k-entry session. The app exits normally.
    """
    args = sys.argv[1:]
    status = main(args)
    if opens_the_app(args) or args[0] in APP_COMMANDS:
        raise SystemExit(status)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: nothing more can be said
        pass
    os._exit(status)
