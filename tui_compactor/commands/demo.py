"""``tui-compactor demo``: open a copy of the bundled sample session with the offline summarizer.

The copy lives in a fresh temporary directory, so accepting a compaction or navigating with a
summary writes to the copy, never to the package data. Nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from tui_compactor.workbench.exits import EXIT_OK, EXIT_USAGE

SAMPLE_NAME = "sample-session.jsonl"
"""The bundled sample, in ``tui_compactor/data``."""


def sample_path() -> Path:
    """Where the bundled sample session is installed."""
    return Path(__file__).resolve().parent.parent / "data" / SAMPLE_NAME


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of the demo command."""
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="copy the sample into DIR (kept afterwards) instead of a temp dir",
    )


def demo_config() -> Any:
    """The demo's configuration: the offline summarizer only, whatever the user's config says
    (also what ``scripts/screenshots.py`` runs the app with). It is ``fixed``: the app's hints
    say what holds in the demo instead of pointing at a config file it does not read."""
    from tui_compactor.config import OFFLINE_PROFILE, Config

    config = Config(
        profiles={"offline": OFFLINE_PROFILE},
        default_profile="offline",
        compaction_profile="offline",
        source=None,
    )
    return config.as_fixed()


def copy_sample(directory: Path) -> Path:
    """Copy the sample into ``directory``; returns the copy's path."""
    source = sample_path()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / SAMPLE_NAME
    shutil.copyfile(source, target)
    return target


def run(args: argparse.Namespace) -> int:
    """Copy the sample and run the app on the copy with the offline summarizer."""
    if not sample_path().is_file():
        print(f"tui-compactor: the bundled sample is missing ({sample_path()})", file=sys.stderr)
        return EXIT_USAGE
    from tui_compactor.ui.app import CompactorApp

    config = demo_config()
    if args.keep is not None:
        session = copy_sample(args.keep)
        CompactorApp(session, config=config, profile_name="offline").run()
        print(f"the demo session is kept at {session}")
        return EXIT_OK
    with tempfile.TemporaryDirectory(prefix="tui-compactor-demo-") as directory:
        session = copy_sample(Path(directory))
        CompactorApp(session, config=config, profile_name="offline").run()
    return EXIT_OK
