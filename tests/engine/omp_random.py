"""Random session trees in oh-my-pi's format, for live differential tests against oh-my-pi.

``random_session(path, seed)`` writes one v3 session (deterministic per seed): several roots,
branches off any earlier entry, compactions (``soft``, ``handoff``, legacy and extension ones,
with ``details`` and ``preserveData``) kept at any entry of the path, branch summaries (with
``details``; some by an extension, some with pi's ``fromHook``), reset boundaries, model,
thinking-level and label changes, custom messages (text or blocks with an image, shown or not)
and custom entries, user images, tool results (errors, images, ``useless``, shaken ones with
``prunedAt``), excluded and included bash runs, aborted and error turns, dangling tool calls,
signed and redacted thinking, read selectors and URL paths. Every assistant usage carries a
``cost`` (oh-my-pi 18.2.3 refuses to open a file whose usage has none) and every message a
distinct millisecond timestamp. Content is made up.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tests.engine.omp_sessions import PNG, ZERO, Writer

WORDS = "ledger meter cache window token parser budget render index model tree branch".split()
FILES = (
    "src/ledger.py",
    "src/meter/collect.py",
    "README.md",
    "docs/notes.md",
    "src/render.py:10-40",
    "https://example.com/spec",
    "tests/test_ledger.py",
)


class RandomWriter(Writer):
    """``Writer`` with a seeded choice of parent for each entry."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.rng = random.Random(seed)
        self.ids: list[str] = []
        self.pending: list[str] = []

    def add(self, kind: str, **fields: Any) -> str:
        ident = super().add(kind, **fields)
        self.ids.append(ident)
        return ident

    def message(self, message: dict[str, Any]) -> str:
        message.setdefault("timestamp", 1772442000000 + self.count * 1000 + 1)
        return super().message(message)

    def words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high)))

    def path(self) -> list[str]:
        by_id = {record["id"]: record for record in self.records}
        out = []
        at = self.parent
        while at is not None and at in by_id:
            out.append(at)
            at = by_id[at]["parentId"]
        return out[::-1]

    def assistant_turn(self) -> None:
        rng = self.rng
        blocks: list[dict[str, Any]] = []
        if rng.random() < 0.3:
            thinking = {"type": "thinking", "thinking": self.words(3, 20)}
            if rng.random() < 0.5:
                thinking["thinkingSignature"] = f"sig-{rng.getrandbits(24):06x}"
            blocks.append(thinking)
        if rng.random() < 0.1:
            blocks.append({"type": "redactedThinking", "data": "cmVkYWN0ZWQ="})
        if rng.random() < 0.8:
            blocks.append({"type": "text", "text": self.words(2, 40)})
        calls = []
        for _ in range(rng.choice((0, 0, 1, 1, 1, 2, 3))):
            tool = rng.choice(("read", "edit", "write", "bash", "grep"))
            ident = f"call{self.count:x}{len(calls)}{rng.getrandbits(16):04x}"
            if tool == "bash":
                arguments: dict[str, Any] = {"command": f"make {rng.choice(WORDS)}"}
            elif tool == "grep":
                arguments = {"pattern": rng.choice(WORDS), "path": "src"}
            else:
                arguments = {"path": rng.choice(FILES)}
                if tool == "edit":
                    arguments["edits"] = [{"old": "a", "new": "b"}]
            calls.append((ident, tool))
            blocks.append({"type": "toolCall", "id": ident, "name": tool, "arguments": arguments})
        roll = rng.random()
        stop = "aborted" if roll < 0.05 else "error" if roll < 0.1 else "stop"
        extra: dict[str, Any] = {}
        if stop == "error":
            extra["errorMessage"] = "529 overloaded"
            if rng.random() < 0.4:
                extra["retryRecovery"] = {"kind": "auto-retry", "status": "recovered"}
            if rng.random() < 0.4:
                blocks = []
        usage = dict(ZERO)
        if stop == "stop":
            prompt = rng.randint(200, 40000)
            usage = {
                "input": prompt,
                "output": rng.randint(10, 900),
                "cacheRead": rng.choice((0, prompt // 3)),
                "cacheWrite": rng.choice((0, 20)),
                "totalTokens": prompt + 1000,
                "cost": {
                    "input": 0.01,
                    "output": 0.01,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "total": 0.02,
                },
            }
        message = {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": rng.choice(("claude-sonnet-4-5", "claude-opus-4-1")),
            "usage": usage,
            "stopReason": "toolUse" if calls and stop == "stop" else stop,
        }
        message.update(extra)
        self.message(message)
        for ident, tool in calls:
            if rng.random() < 0.12:
                continue  # a dangling call
            self.tool_result(ident, tool)

    def tool_result(self, ident: str, tool: str) -> None:
        rng = self.rng
        lines = rng.choice((1, 3, 40, 400))
        text = "\n".join(f"{i}: {self.words(2, 9)}" for i in range(lines))
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        extra: dict[str, Any] = {}
        roll = rng.random()
        if roll < 0.08:
            content.append({"type": "image", "data": PNG, "mimeType": "image/png"})
        elif roll < 0.16:
            content = [
                {"type": "text", "text": f"[shaken ~{len(text) // 4} tokens]"},
                {"type": "text", "text": " (output offloaded)"},
            ]
            extra["prunedAt"] = 1772443000000
        elif roll < 0.24:
            extra["useless"] = True
        self.message(
            {
                "role": "toolResult",
                "toolCallId": ident,
                "toolName": tool,
                "content": content,
                "isError": rng.random() < 0.1,
                **extra,
            }
        )

    def user_turn(self) -> None:
        rng = self.rng
        if rng.random() < 0.3:
            content: Any = self.words(3, 60)
        else:
            content = [{"type": "text", "text": self.words(3, 60) + " — naïve ✓ 𝄞"}]
            if rng.random() < 0.15:
                content.append({"type": "image", "data": PNG, "mimeType": "image/png"})
        self.message({"role": "user", "content": content})

    def side_entry(self) -> None:
        rng = self.rng
        kind = rng.choice(
            ("model", "thinking", "label", "custom_message", "custom", "bash", "reset")
        )
        if kind == "model":
            self.add(
                "model_change", model=rng.choice(("anthropic/claude-opus-4-1", "openai/gpt-5"))
            )
        elif kind == "thinking":
            self.add("thinking_level_change", thinkingLevel=rng.choice(("low", "high", "off")))
        elif kind == "label" and self.ids:
            target = rng.choice(self.ids)
            self.add("label", targetId=target, label=rng.choice((self.words(1, 3), None)))
        elif kind == "custom_message":
            content: Any = self.words(3, 30)
            if rng.random() < 0.5:
                content = [{"type": "text", "text": content}]
                if rng.random() < 0.3:
                    content.append({"type": "image", "data": PNG, "mimeType": "image/png"})
            self.add(
                "custom_message",
                customType=rng.choice(("note", "reminder")),
                content=content,
                display=rng.random() < 0.7,
            )
        elif kind == "custom":
            self.add("custom", customType="state", data={"n": self.count})
        elif kind == "bash":
            self.message(
                {
                    "role": "bashExecution",
                    "command": f"make {rng.choice(WORDS)}",
                    "output": self.words(2, 30),
                    "exitCode": rng.choice((0, 1)),
                    "cancelled": False,
                    "truncated": False,
                    "excludeFromContext": rng.random() < 0.4,
                }
            )
        elif kind == "reset" and rng.random() < 0.3:
            self.add("reset_boundary")

    def compaction(self) -> None:
        rng = self.rng
        path = [ident for ident in self.path() if ident in self.ids]
        if len(path) < 3:
            return
        kept = rng.choice(path[len(path) // 3 :])
        fields: dict[str, Any] = {
            "summary": f"## Goal\n{self.words(5, 40)}\n\n<files>\nsrc/ledger.py (RW)\n</files>",
            "firstKeptEntryId": kept,
            "tokensBefore": rng.randint(1000, 90000),
        }
        style = rng.choice(("soft", "soft", "handoff", "legacy", "extension"))
        if style in ("soft", "handoff"):
            fields["method"] = style
        if style == "soft":
            fields["shortSummary"] = self.words(2, 5)
        if style == "extension":
            fields["fromExtension"] = True
        if rng.random() < 0.6:
            fields["details"] = {
                "readFiles": rng.sample(FILES, 2),
                "modifiedFiles": [rng.choice(FILES)],
            }
        if rng.random() < 0.3:
            fields["preserveData"] = {"note": {"n": self.count}}
        self.add("compaction", **fields)

    def branch_summary(self) -> None:
        rng = self.rng
        fields: dict[str, Any] = {"fromId": self.parent or "root", "summary": self.words(5, 40)}
        if rng.random() < 0.7:
            fields["details"] = {
                "readFiles": rng.sample(FILES, 2),
                "modifiedFiles": [rng.choice(FILES)],
            }
        flag = rng.choice((None, None, "fromExtension", "fromHook"))
        if flag:
            fields[flag] = True
        self.add("branch_summary", **fields)


def random_session(path: Path, seed: int, turns: int = 40) -> Path:
    """Write a random session tree of about ``turns`` turns to ``path``."""
    w = RandomWriter(seed)
    rng = w.rng
    for turn in range(turns):
        roll = rng.random()
        if turn and roll < 0.15:
            w.parent = rng.choice(w.ids)  # a branch off any earlier entry
            if rng.random() < 0.5:
                w.branch_summary()
        elif turn and roll < 0.18:
            w.parent = None  # a new root
        if rng.random() < 0.3:
            w.side_entry()
        if rng.random() < 0.9:
            w.user_turn()
        for _ in range(rng.choice((1, 1, 2, 3))):
            w.assistant_turn()
        if rng.random() < 0.12:
            w.compaction()
    return w.write(path)
