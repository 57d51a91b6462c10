"""Fidelity audit: which facts of the summarized region did the summary drop?

Anchors are the details a handoff must carry over exactly: file paths, function and class
names, error lines, commands, numbers the user gave and the last unanswered request. The audit
extracts them from the messages that were summarized (``extract.extract_anchors``, the one
anchor extractor) and reports which the summary lacks;
``Audit.focus_instructions()`` turns the missing ones into custom instructions for a
regenerate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.anchors import AnchorKind, Haystack, anchor_present
from tui_compactor.summarize.extract import extract_anchors

__all__ = ["Anchor", "Audit", "AnchorKind", "audit_summary", "extract_anchors"]


@dataclass(frozen=True, slots=True)
class Anchor:
    """One fact the summary should keep, and whether it does."""

    kind: AnchorKind
    text: str
    present: bool


@dataclass
class Audit:
    """The audit of one summary against the region it summarizes."""

    anchors: list[Anchor] = field(default_factory=list)

    @property
    def missing(self) -> list[Anchor]:
        """Anchors the summary lacks."""
        return [a for a in self.anchors if not a.present]

    @property
    def kept(self) -> list[Anchor]:
        """Anchors the summary keeps."""
        return [a for a in self.anchors if a.present]

    @property
    def coverage(self) -> float:
        """Share of anchors kept (1.0 when there are none)."""
        return 1.0 if not self.anchors else len(self.kept) / len(self.anchors)

    def focus_instructions(self) -> str | None:
        """Custom instructions asking a regenerate to keep the missing anchors (None if none)."""
        missing = self.missing
        if not missing:
            return None
        names = {
            "path": "file path",
            "identifier": "name",
            "error": "error",
            "command": "command",
            "number": "number the user gave",
            "request": "last unanswered request (verbatim)",
        }
        lines = [f"- {names[a.kind]}: {a.text}" for a in missing]
        return "Keep these details exactly as written:\n" + "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (for ``compact --json``)."""
        return {
            "coverage": round(self.coverage, 3),
            "anchors": len(self.anchors),
            "missing": [{"kind": a.kind, "text": a.text} for a in self.missing],
        }


def audit_summary(messages: list[dict[str, Any]], summary: str) -> Audit:
    """Audit ``summary`` against the ``messages`` it summarizes."""
    haystack = Haystack(summary)
    anchors = [
        Anchor(kind, text, anchor_present(kind, text, haystack))
        for kind, text in extract_anchors(messages)
    ]
    return Audit(anchors)
