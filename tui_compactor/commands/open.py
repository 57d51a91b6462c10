"""``tui-compactor [open] [SESSION]``: open a session in the app, or the picker without one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of the app command (the parser is built fast: nothing heavy imported here)."""
    parser.add_argument("session", nargs="?", type=Path,
                        help="session .jsonl file; without it a picker lists your sessions")
    parser.add_argument("--sessions-dir", action="append", type=Path, default=[],
                        metavar="DIR", help="also list sessions under DIR (repeatable)")
    parser.add_argument("--config", type=Path, help="config file (default: XDG config dir)")
    parser.add_argument("--profile", help="summarizer profile for compactions and summaries")
    parser.add_argument("--tokens", choices=("cl100k", "pi", "bytes"),
                        help="token counter used for estimates")
    parser.add_argument("--keep-recent", type=int, metavar="TOKENS",
                        help="tokens of recent conversation kept verbatim")
    parser.add_argument("--reserve", type=int, metavar="TOKENS", help="reserve tokens")
    parser.add_argument("--window", type=int, metavar="TOKENS",
                        help="context window of the agent's model")
    parser.add_argument("--rules", choices=("pi", "omp"), help="planning rules")
    parser.add_argument("--no-follow", action="store_true",
                        help="do not watch the file for new entries")


def config_overrides(args: argparse.Namespace) -> dict[str, object]:
    """Flags the user typed, as config overrides (None values are ignored by load_config)."""
    return {
        "default_profile": getattr(args, "profile", None),
        "compaction": {
            "tokens": getattr(args, "tokens", None),
            "keep_recent_tokens": getattr(args, "keep_recent", None),
            "reserve_tokens": getattr(args, "reserve", None),
            "context_window": getattr(args, "window", None),
            "rules": getattr(args, "rules", None),
        },
    }


def run(args: argparse.Namespace) -> int:
    """Load the config, then run the app until the user quits."""
    from tui_compactor.config import ConfigError, load_config

    try:
        config = load_config(args.config, overrides=config_overrides(args))
    except ConfigError as error:
        print(f"tui-compactor: {error}", file=sys.stderr)
        return 2
    session_path: Path | None = args.session
    if session_path is not None and not session_path.is_file():
        print(f"tui-compactor: {session_path}: no such file", file=sys.stderr)
        return 2

    from tui_compactor.ui.app import CompactorApp

    app = CompactorApp(
        session_path,
        config=config,
        profile_name=args.profile,
        follow=not args.no_follow,
        sessions_dirs=list(args.sessions_dir),
    )
    app.run()
    return 0
