"""tui-compactor: inspect, plan and run context compaction for pi / oh-my-pi sessions."""

from __future__ import annotations

__version__ = "0.1.0"
