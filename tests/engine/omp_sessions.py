"""Session files in oh-my-pi's format that exercise what the shipped goldens do not.

``rebuild_rules_session`` writes one v3 session with: a shaken tool result (``prunedAt``, its
text split over two blocks, the placeholder oh-my-pi writes), a useless result, a local
compaction with a dead-end ``warning`` and ``preserveData``, a ``handoff`` compaction, a
``reset_boundary`` after it, an aborted turn with a tool call and its result, an error turn
marked ``retryRecovery``, an empty error turn, a dangling tool call with redacted thinking and
a signed thinking block, a custom message with an image (sent as developer text plus a user
image message), an excluded bash run, a user message with a fenced block large enough to
shake and a ``<context>`` XML block in a custom message. Content is made up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COST = {"input": 0.0027, "output": 0.0006, "cacheRead": 0.00009, "cacheWrite": 0, "total": 0.00339}
USAGE = {
    "input": 900,
    "output": 40,
    "cacheRead": 300,
    "cacheWrite": 20,
    "totalTokens": 1260,
    "cost": COST,
}
ZERO = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAA"
    "AABJRU5ErkJggg=="
)


class Writer:
    """Appends entries with parent links and increasing timestamps."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.second = 0
        self.count = 0

    def stamp(self) -> str:
        self.second += 7
        minute, second = divmod(self.second, 60)
        hour, minute = divmod(minute, 60)
        return f"2026-03-02T{9 + hour:02d}:{minute:02d}:{second:02d}.000Z"

    def add(self, kind: str, **fields: Any) -> str:
        self.count += 1
        ident = f"e{self.count:07x}"
        record = {"type": kind, "id": ident, "parentId": self.parent, "timestamp": self.stamp()}
        record.update(fields)
        self.records.append(record)
        self.parent = ident
        return ident

    def message(self, message: dict[str, Any]) -> str:
        message.setdefault("timestamp", 1772442000000 + self.second * 1000)
        return self.add("message", message=message)

    def user(self, text: str) -> str:
        return self.message({"role": "user", "content": [{"type": "text", "text": text}]})

    def assistant(self, blocks: list[dict[str, Any]], stop: str = "stop", **extra: Any) -> str:
        message = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": dict(USAGE) if stop not in ("aborted", "error") else dict(ZERO),
            "stopReason": stop,
        }
        message.update(extra)
        return self.message(message)

    def result(self, call: str, tool: str, text: str | list[str], **extra: Any) -> str:
        texts = [text] if isinstance(text, str) else text
        message = {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": tool,
            "content": [{"type": "text", "text": part} for part in texts],
            "isError": False,
        }
        message.update(extra)
        return self.message(message)

    def write(self, path: Path) -> Path:
        header = {
            "type": "session",
            "version": 3,
            "id": "019ca000-0000-7000-8000-000000000001",
            "timestamp": "2026-03-02T09:00:00.000Z",
            "cwd": "/home/dev/projects/ledger",
        }
        lines = [json.dumps(header)] + [json.dumps(record) for record in self.records]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path


def _call(ident: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": ident, "name": name, "arguments": arguments}


def rebuild_rules_session(path: Path) -> Path:
    """Write the session described in the module docstring to ``path``."""
    w = Writer()
    w.add("model_change", model="anthropic/claude-sonnet-4-5")
    w.add("thinking_level_change", thinkingLevel="medium")
    code = "\n".join(f"    total += row[{i}] * weight({i})  # column {i}" for i in range(120))
    w.user(
        "Tidy the ledger totals. Current code:\n```python\ndef total(row):\n"
        f"{code}\n```\nKeep it fast."
    )
    w.assistant(
        [{"type": "text", "text": "Reading the module."}, _call("c1", "read", path="src/ledger.py")]
    )
    body = "\n".join(f"line {i}: balance = balance + entries[{i}]" for i in range(300))
    w.result("c1", "read", [body[: len(body) // 2], body[len(body) // 2 :]])
    w.assistant([_call("c2", "grep", pattern="weight", path="src")])
    w.result(
        "c2", "grep", ["[shaken ~412 tokens]", " (full output offloaded)"], prunedAt=1772442100000
    )
    w.assistant([_call("c3", "read", path="docs/notes.md")])
    w.result("c3", "read", "nothing relevant here " * 40, useless=True)
    w.add(
        "custom_message",
        customType="ledger-reminder",
        content=[
            {
                "type": "text",
                "text": "<context>\n" + "reminder: totals are cents\n" * 120 + "</context>",
            },
            {"type": "image", "data": PNG, "mimeType": "image/png"},
        ],
        display=True,
    )
    w.assistant(
        [{"type": "text", "text": "Editing."}, _call("c4", "edit", path="src/ledger.py", edits=[])]
    )
    w.result("c4", "edit", "ok")
    w.message(
        {
            "role": "bashExecution",
            "command": "make test",
            "output": "42 passed",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "excludeFromContext": True,
        }
    )
    kept = w.user("Now the report module.")
    w.assistant(
        [
            {"type": "text", "text": "Looking at the report."},
            _call("c5", "read", path="src/report.py"),
        ]
    )
    w.result("c5", "read", "def report():\n    return render(totals())\n" * 30)
    w.add(
        "compaction",
        summary=(
            "## Goal\nTidy ledger totals.\n\n## Progress\n- [x] totals   \n\n\n\n"
            "| a  |  b |\n| --- | :-: |\n| 1 | 2 |\n\n<files>\nsrc/ledger.py (RW)\n</files>"
        ),
        shortSummary="Tidied totals",
        firstKeptEntryId=kept,
        tokensBefore=5200,
        tokensAfter=900,
        method="soft",
        details={
            "readFiles": ["src/ledger.py:1-20", "docs/notes.md"],
            "modifiedFiles": ["src/ledger.py"],
        },
        preserveData={"note": {"kept": True}},
        warning="Compaction freed too little context; maintenance stopped.",
    )
    w.user("Continue with the report.")
    w.assistant([_call("c6", "read", path="src/render.py")], stop="aborted")
    w.result("c6", "read", "aborted", isError=True)
    w.user("Try again.")
    w.assistant(
        [{"type": "text", "text": "Retrying"}],
        stop="error",
        errorMessage="529 overloaded",
        retryRecovery={"kind": "auto-retry", "status": "recovered"},
    )
    w.assistant([], stop="error", errorMessage="413 too large")
    w.assistant(
        [
            {"type": "text", "text": "Rendering uses templates."},
            _call("c7", "read", path="src/render.py"),
        ]
    )
    w.result("c7", "read", "TEMPLATE = '...'\n" * 20)
    w.add(
        "compaction",
        summary=(
            "# Handoff\n\nI was tidying the report renderer.\n\n## Next Steps\n1. Finish render.py"
        ),
        firstKeptEntryId=w.parent,
        tokensBefore=3100,
        method="handoff",
    )
    w.user("Before we go on: what is the render entry point?")
    w.assistant([{"type": "text", "text": "render() in src/render.py."}])
    w.add("reset_boundary")
    w.user("Fresh start: benchmark the ledger.")
    w.assistant(
        [
            {
                "type": "thinking",
                "thinking": "Plan the benchmark.",
                "thinkingSignature": "sig-abc123",
            },
            {"type": "redactedThinking", "data": "ZW5jcnlwdGVk"},
            {"type": "text", "text": "Running both benchmarks."},
            _call("c8", "bash", command="make bench"),
            _call("c9", "bash", command="make bench-report"),
        ]
    )
    w.result("c8", "bash", "bench: 1.2 ms/op")
    return w.write(path)
