"""Generate v3 session files that stress the compaction engine, for extra pi goldens.

``python tests/engine/gen_sessions.py OUT_DIR`` writes:

* ``gen-branchy.jsonl``: many branches (off user, assistant and tool-result entries), branch
  summaries with ``details`` (one from an extension), labels, custom messages.
* ``gen-compacted-twice.jsonl``: two pi-style compactions (with ``details``), the second keeping
  part of what the first kept, then more turns; a side branch before the first compaction.
* ``gen-long-turns.jsonl``: few user messages, each followed by dozens of tool calls, and a
  leaf that is a tool result (K=0 falls back to the first cut point).
* ``gen-several-roots.jsonl``: three roots (``parentId: null``), an orphan whose parent is
  unknown, leaf on the second root's tree.
* ``gen-setting-changes.jsonl``: thinking-level and model changes and labels right before user
  messages (cuts slide onto them), bash executions (one excluded), custom messages, images,
  non-ASCII and astral text, float and integer-like keys in tool arguments, read selectors and
  URL paths, an aborted assistant.

Deterministic (fixed seeds); the ids are 8 hex digits like the agents'.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

FILES = ("src/app.py", "src/db.py", "src/api/routes.py", "README.md", "tests/test_app.py")
WORDS = "cache window token leaf branch summary parser index budget tree model turn".split()


class Writer:
    """Builds one session: entries with ids, parents and increasing timestamps."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.time = datetime(2026, 2, 1, 9, 0, 0, tzinfo=UTC)
        self.records: list[dict[str, Any]] = []
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.call = 0
        header_time = self._stamp()
        self.header = {
            "type": "session",
            "version": 3,
            "id": f"{self.rng.getrandbits(32):08x}-0000-4000-8000-{seed:012x}",
            "timestamp": header_time,
            "cwd": "/home/dev/project",
        }

    def _stamp(self) -> str:
        self.time += timedelta(
            seconds=self.rng.randint(1, 40), milliseconds=self.rng.randint(0, 999)
        )
        return self.time.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _id(self) -> str:
        while True:
            ident = f"{self.rng.getrandbits(32):08x}"
            if ident not in self.ids:
                self.ids.add(ident)
                return ident

    def add(self, record: dict[str, Any], parent: str | None | bool = True) -> str:
        """Append an entry under ``parent`` (True = the current leaf)."""
        ident = self._id()
        parent_id = self.leaf if parent is True else parent
        entry = {"type": record.pop("type"), "id": ident, "parentId": parent_id}
        entry["timestamp"] = self._stamp()
        entry.update(record)
        self.records.append(entry)
        self.leaf = ident
        return ident

    def text(self, words: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(words))

    def user(self, text: str | None = None, **extra: Any) -> str:
        content: Any = text if text is not None else self.text(self.rng.randint(3, 30))
        if extra.get("image"):
            content = [
                {"type": "text", "text": content},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            ]
        message = {"role": "user", "content": content, "timestamp": 0}
        return self.add({"type": "message", "message": message})

    def assistant(
        self,
        calls: list[tuple[str, dict[str, Any]]] | None = None,
        *,
        thinking: bool = False,
        stop: str | None = None,
        usage: int | None = None,
        provider: str = "anthropic",
        model: str = "claude-sonnet-4-5",
        text: str | None = None,
    ) -> tuple[str, list[str]]:
        content: list[dict[str, Any]] = []
        if thinking:
            content.append(
                {"type": "thinking", "thinking": self.text(20), "thinkingSignature": "s"}
            )
        content.append({"type": "text", "text": text if text is not None else self.text(12)})
        call_ids = []
        for name, args in calls or []:
            self.call += 1
            call_id = f"toolu_{self.call:04d}"
            call_ids.append(call_id)
            content.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        total = usage if usage is not None else self.rng.randint(2000, 60000)
        message = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": {
                "input": 10,
                "output": 100,
                "cacheRead": total - 200,
                "cacheWrite": 90,
                "totalTokens": total,
            },
            "stopReason": stop or ("toolUse" if calls else "stop"),
            "timestamp": 0,
        }
        return self.add({"type": "message", "message": message}), call_ids

    def result(
        self, call_id: str, name: str, size: int, *, image: bool = False, error: bool = False
    ) -> str:
        body = "\n".join(f"{n:4}\t{self.text(8)}" for n in range(size))
        content: list[dict[str, Any]] = [{"type": "text", "text": body}]
        if image:
            content.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": content,
            "isError": error,
            "timestamp": 0,
        }
        return self.add({"type": "message", "message": message})

    def turn(self, tools: int, *, result_size: int = 20, thinking: bool = False) -> str:
        """A user message, ``tools`` tool rounds, and a final answer."""
        self.user()
        for _ in range(tools):
            name = self.rng.choice(["read", "edit", "write", "bash", "read"])
            path = self.rng.choice(FILES)
            args: dict[str, Any] = {"path": path}
            if name == "edit":
                args["edits"] = [{"oldText": self.text(3), "newText": self.text(4)}]
            elif name == "write":
                args["content"] = self.text(30)
            elif name == "bash":
                args = {"command": f"pytest -q {path}", "timeout": 60}
            _, (call_id,) = self.assistant([(name, args)], thinking=thinking)
            self.result(call_id, name, self.rng.randint(1, result_size))
        return self.assistant()[0]

    def compaction(self, first_kept: str, summary: str, details: Any = None, **extra: Any) -> str:
        record = {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": first_kept,
            "tokensBefore": self.rng.randint(30000, 90000),
        }
        if details is not None:
            record["details"] = details
        record.update(extra)
        return self.add(record)

    def write(self, path: Path) -> None:
        lines = [json.dumps(self.header)] + [
            json.dumps(r, ensure_ascii=False) for r in self.records
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def branchy() -> Writer:
    w = Writer(11)
    for _ in range(3):
        w.turn(3)
    fork_user = w.records[-8]["id"]
    results = [r["id"] for r in w.records if r.get("message", {}).get("role") == "toolResult"]
    fork_tool = results[4]
    main_leaf = w.leaf
    w.turn(4)
    w.add({"type": "label", "targetId": w.leaf, "label": "checkpoint"})
    # A branch off a tool result, with a branch summary from an earlier exploration.
    w.leaf = fork_tool
    w.add(
        {
            "type": "branch_summary",
            "fromId": fork_tool,
            "summary": "Explored a different caching approach; reverted.",
            "details": {"readFiles": ["src/db.py", "docs/old.md"], "modifiedFiles": ["src/app.py"]},
        }
    )
    w.turn(2)
    w.add(
        {
            "type": "custom_message",
            "customType": "note",
            "content": "Remember the budget.",
            "display": True,
        }
    )
    w.turn(3)
    # Off a user message: an extension-made branch summary whose details must be ignored.
    w.leaf = fork_user
    w.add(
        {
            "type": "branch_summary",
            "fromId": fork_user,
            "summary": "Extension summary of a dead end.",
            "details": {"readFiles": ["SHOULD_NOT_APPEAR.py"], "modifiedFiles": []},
            "fromHook": True,
        }
    )
    w.turn(2)
    # Off an assistant message in the main line, then more work; this is the file's leaf.
    w.leaf = main_leaf
    w.turn(2, thinking=True)
    w.add({"type": "branch_summary", "fromId": w.leaf, "summary": ""})  # empty: skipped in context
    w.turn(3)
    w.turn(1)
    return w


def compacted_twice() -> Writer:
    w = Writer(22)
    for _ in range(4):
        w.turn(3)
    side_from = w.records[10]["id"]
    users = [r["id"] for r in w.records if r.get("message", {}).get("role") == "user"]
    w.compaction(
        users[2],
        "First summary: set up the cache.",
        {"readFiles": ["src/db.py"], "modifiedFiles": ["src/app.py"]},
    )
    for _ in range(3):
        w.turn(2)
    users = [r["id"] for r in w.records if r.get("message", {}).get("role") == "user"]
    w.compaction(
        users[5],
        "Second summary: cache done, API next.",
        {"readFiles": ["README.md"], "modifiedFiles": ["src/api/routes.py", "src/app.py"]},
    )
    for _ in range(3):
        w.turn(3)
    main_leaf = w.leaf
    w.leaf = side_from
    w.turn(2)
    w.leaf = main_leaf
    w.turn(2)
    return w


def long_turns() -> Writer:
    w = Writer(33)
    w.turn(25, result_size=60)
    w.turn(40, result_size=30, thinking=True)
    w.user("Now run everything again and report.")
    for _ in range(30):
        _, (call_id,) = w.assistant([("bash", {"command": "make test", "timeout": 600})])
        w.result(call_id, "bash", 50)
    return w  # the leaf is a tool result


def several_roots() -> Writer:
    w = Writer(44)
    w.turn(3)
    w.leaf = None
    w.add({"type": "model_change", "provider": "openai", "modelId": "gpt-5"}, parent=None)
    w.turn(2)
    w.turn(3)
    second_leaf = w.leaf
    w.leaf = None
    w.turn(2)
    # An orphan: its parent id is not in the file, so it is a root too.
    w.add(
        {"type": "message", "message": {"role": "user", "content": "orphan", "timestamp": 0}},
        parent="deadbeef",
    )
    w.turn(1)
    w.leaf = second_leaf
    w.turn(2)
    return w


def setting_changes() -> Writer:
    w = Writer(55)
    w.turn(2)
    w.add({"type": "thinking_level_change", "thinkingLevel": "high"})
    w.turn(3, thinking=True)
    w.add({"type": "model_change", "provider": "openai", "modelId": "gpt-5"})
    w.add({"type": "label", "targetId": w.records[2]["id"], "label": "start"})
    w.user("Sprawdź żółć — 日本語 テスト 😀🎉 and 𝒳", image=True)
    _, (call_id,) = w.assistant(
        [
            (
                "read",
                {
                    "path": "src/app.py:10-40",
                    "offset": 1.0,
                    "limit": 1e-7,
                    "2": "two",
                    "1": [1.5, 2.0],
                },
            )
        ],
        provider="openai",
        model="gpt-5",
    )
    w.result(call_id, "read", 5, image=True)
    _, (call_id,) = w.assistant([("read", {"path": "https://example.com/spec.md"})])
    w.result(call_id, "read", 3, error=True)
    w.assistant(stop="aborted", usage=0, text="")
    w.add(
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "ls -la",
                "output": "total 0\n" + w.text(200),
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "timestamp": 0,
            },
        }
    )
    w.add(
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "cat secrets.env",
                "output": w.text(50),
                "exitCode": 1,
                "cancelled": False,
                "truncated": False,
                "excludeFromContext": True,
                "timestamp": 0,
            },
        }
    )
    w.add({"type": "thinking_level_change", "thinkingLevel": "low"})
    w.turn(2)
    w.add(
        {
            "type": "custom_message",
            "customType": "reminder",
            "content": [{"type": "text", "text": "Check the budget."}],
            "display": False,
        }
    )
    w.add({"type": "custom", "customType": "state", "data": {"x": 1}})
    w.add({"type": "session_info", "name": "setting changes"})
    w.turn(3)
    w.add({"type": "model_change", "provider": "anthropic", "modelId": "claude-opus-4-5"})
    w.turn(1, thinking=True)
    return w


GENERATORS = {
    "gen-branchy": branchy,
    "gen-compacted-twice": compacted_twice,
    "gen-long-turns": long_turns,
    "gen-several-roots": several_roots,
    "gen-setting-changes": setting_changes,
}


def main(argv: list[str]) -> int:
    """Write every generated session into the directory given."""
    out = Path(argv[0]) if argv else Path("tests/engine/data/oracle/sessions")
    out.mkdir(parents=True, exist_ok=True)
    for name, make in GENERATORS.items():
        make().write(out / f"{name}.jsonl")
        print(out / f"{name}.jsonl")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
