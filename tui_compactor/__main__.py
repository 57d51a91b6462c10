"""Run the CLI with ``python -m tui_compactor``."""

from __future__ import annotations

from tui_compactor.cli import script

script()
