"""``tui-compactor [open] [SESSION]``: open a session in the app, or the picker without one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tui_compactor.commands import engine_args as common
from tui_compactor.workbench.exits import EXIT_OK, EXIT_USAGE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of the app command (the parser is built fast: nothing heavy imported here)."""
    parser.add_argument(
        "session",
        nargs="?",
        type=Path,
        help="session .jsonl file, or a directory to pick a session from; "
        "without it a picker lists your sessions",
    )
    parser.add_argument(
        "--sessions-dir",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="also list sessions under DIR (repeatable)",
    )
    parser.add_argument("--profile", help="summarizer profile for compactions and summaries")
    parser.add_argument(
        "--no-follow", action="store_true", help="do not watch the file for new entries"
    )
    parser.add_argument(
        "--ignore-agent",
        action="store_true",
        help="let the app append even though a running pi / oh-my-pi agent "
        "works on the session (see the writing commands' --ignore-agent)",
    )
    common.add_settings(parser)


def run(args: argparse.Namespace) -> int:
    """Resolve the settings, then run the app until the user quits."""
    try:
        settings = common.settings_from_args(args)
    except common.CommandError as error:
        return common.fail(error)
    session_path: Path | None = args.session
    sessions_dirs = list(args.sessions_dir)
    picker_dirs_only = False
    if session_path is not None and session_path.is_dir():
        # A directory: the picker lists the sessions under it (and only those).
        sessions_dirs.insert(0, session_path)
        session_path, picker_dirs_only = None, True
    elif session_path is not None and not session_path.is_file():
        print(f"tui-compactor: {session_path}: no such file or directory", file=sys.stderr)
        return EXIT_USAGE

    from tui_compactor.ui import collector

    collector.hold_for_start_up()  # the app releases it once its first screen is drawn
    from tui_compactor.ui.app import CompactorApp

    app = CompactorApp(
        session_path,
        settings=settings,
        profile_name=args.profile,
        follow=not args.no_follow,
        sessions_dirs=sessions_dirs,
        picker_dirs_only=picker_dirs_only,
        ignore_agents=args.ignore_agent,
    )
    app.run()
    return EXIT_OK
