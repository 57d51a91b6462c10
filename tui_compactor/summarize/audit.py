"""Fidelity audit: which facts of the summarized region did the summary drop?

Anchors are the details a handoff must carry over exactly: file paths, function and class
names, error lines, commands, numbers the user gave and the last unanswered request. The audit
extracts them from the messages that were summarized and reports which the summary lacks;
``Audit.focus_instructions()`` turns the missing ones into custom instructions for a
regenerate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from tui_compactor.summarize.extract import first_line, message_text, read_transcript

__all__ = ["Anchor", "Audit", "AnchorKind", "audit_summary", "extract_anchors"]

AnchorKind = Literal["path", "identifier", "error", "command", "number", "request"]

_PATH = re.compile(
    r"(?<![\w/.-])((?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}|[\w-]+\.(?:py|ts|tsx|js|"
    r"jsx|rs|go|md|json|jsonl|toml|yaml|yml|c|h|cpp|java|rb|sh|css|html|sql|txt|lock))(?![\w/])"
)
_DEFINITION = re.compile(
    r"\b(?:def|class|function|fn|func|interface|struct|enum|type)\s+([A-Za-z_]\w{2,})"
)
_CODE_SPAN = re.compile(r"`([A-Za-z_][\w.]*(?:\(\))?)`")
_BARE_IDENTIFIER = re.compile(
    r"(?<![\w./-])([a-z_][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]+)"
    r"(?![\w/-])"
)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:%|ms|s|k|KB|MB|GB)?)(?![\w.])")

MAX_PER_KIND = 12


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
            "path": "file path", "identifier": "name", "error": "error", "command": "command",
            "number": "number the user gave", "request": "last unanswered request (verbatim)",
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


def _normalize(text: str) -> str:
    return " ".join(text.lower().split())


def _add(found: list[tuple[AnchorKind, str]], kind: AnchorKind, text: str) -> None:
    text = text.strip()
    if text and (kind, text) not in found and sum(k == kind for k, _ in found) < MAX_PER_KIND:
        found.append((kind, text))


def extract_anchors(messages: list[dict[str, Any]]) -> list[tuple[AnchorKind, str]]:
    """The anchors of a region, in a stable order: (kind, text)."""
    transcript = read_transcript(messages)
    found: list[tuple[AnchorKind, str]] = []
    texts = [message_text(m) for m in messages if isinstance(m, dict)]
    for path in transcript.modified_files + transcript.read_files:
        _add(found, "path", path)
    for text in transcript.user_requests + transcript.assistant_texts:
        for match in _PATH.finditer(text):
            if "://" not in match.group(1):
                _add(found, "path", match.group(1))
    for text in texts:
        for match in _DEFINITION.finditer(text):
            _add(found, "identifier", match.group(1))
    for text in transcript.user_requests + transcript.assistant_texts:
        for match in _CODE_SPAN.finditer(text):
            name = match.group(1).removesuffix("()")
            looks_like_code = "_" in name or "." in name or any(c.isupper() for c in name[1:])
            if looks_like_code and "/" not in name:
                _add(found, "identifier", name)
    for request in transcript.user_requests:
        for match in _BARE_IDENTIFIER.finditer(request):
            _add(found, "identifier", match.group(1))
    for error in transcript.errors:
        _add(found, "error", error[:120])
    for command in transcript.commands:
        _add(found, "command", first_line(command, 120))
    for request in transcript.user_requests:
        for match in _NUMBER.finditer(request):
            value = match.group(1)
            if len(value.rstrip("%msKBGk")) >= 2:
                _add(found, "number", value)
    if transcript.last_unanswered_request:
        found.append(("request", transcript.last_unanswered_request.strip()))
    return found


def _present(kind: AnchorKind, text: str, summary_norm: str, summary_raw: str) -> bool:
    """Whether the summary carries an anchor (exactly, or recognisably for long ones)."""
    norm = _normalize(text)
    if norm in summary_norm:
        return True
    if kind == "path":
        return text.rsplit("/", 1)[-1].lower() in summary_norm and "/" in text and any(
            part.lower() in summary_norm for part in text.split("/")[-2:-1]
        )
    if kind == "number":
        return re.search(r"(?<![\d.])" + re.escape(text) + r"(?![\d])", summary_raw) is not None
    if kind in ("error", "request", "command"):
        # Long anchors: the first 60 characters kept verbatim count as kept.
        return len(norm) > 60 and norm[:60] in summary_norm
    return False


def audit_summary(messages: list[dict[str, Any]], summary: str) -> Audit:
    """Audit ``summary`` against the ``messages`` it summarizes."""
    summary_norm = _normalize(summary)
    anchors = [
        Anchor(kind, text, _present(kind, text, summary_norm, summary))
        for kind, text in extract_anchors(messages)
    ]
    return Audit(anchors)
