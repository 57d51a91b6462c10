"""Build real session files on disk and plans from them, for summarize tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui_compactor.engine.plan import CompactionPlan, prepare_compaction
from tui_compactor.engine.settings import CompactionSettings
from tui_compactor.engine.tokens import get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.session.writer import AppendResult
from tui_compactor.workbench.actions import apply, propose_compaction, propose_navigation
from tui_compactor.workbench.handle import SessionHandle

BASE_MS = 1764770400000


class SessionBuilder:
    """Appends pi v3 entries (chained ids) and writes them as a JSONL file."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [
            {
                "type": "session",
                "version": 3,
                "id": "0b6c1f4e-0000-4000-8000-000000000001",
                "timestamp": "2025-12-03T14:00:00.000Z",
                "cwd": "/home/dev/project",
            }
        ]
        self.count = 0
        self.last_id: str | None = None
        self.call_count = 0

    def _entry(self, body: dict[str, Any]) -> str:
        self.count += 1
        entry_id = f"e{self.count:07x}"
        seconds = self.count
        record = {
            "type": body.pop("type", "message"),
            "id": entry_id,
            "parentId": self.last_id,
            "timestamp": f"2025-12-03T14:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z",
            **body,
        }
        self.lines.append(record)
        self.last_id = entry_id
        return entry_id

    def user(self, text: str) -> str:
        return self._entry(
            {
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": BASE_MS + self.count * 1000,
                }
            }
        )

    def assistant(
        self, text: str = "", *, tool: str | None = None, arguments: dict[str, Any] | None = None
    ) -> str:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        if tool:
            self.call_count += 1
            content.append(
                {
                    "type": "toolCall",
                    "id": f"call_{self.call_count}",
                    "name": tool,
                    "arguments": arguments or {},
                }
            )
        return self._entry(
            {
                "message": {
                    "role": "assistant",
                    "content": content,
                    "api": "openai-completions",
                    "provider": "test",
                    "model": "test-model",
                    "usage": {
                        "input": 100,
                        "output": 10,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 110,
                    },
                    "stopReason": "toolUse" if tool else "stop",
                    "timestamp": BASE_MS + self.count * 1000,
                }
            }
        )

    def result(self, text: str, *, tool: str = "bash", error: bool = False) -> str:
        return self._entry(
            {
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"call_{self.call_count}",
                    "toolName": tool,
                    "content": [{"type": "text", "text": text}],
                    "isError": error,
                    "timestamp": BASE_MS + self.count * 1000,
                }
            }
        )

    def raw(self, record: dict[str, Any]) -> str:
        return self._entry(dict(record))

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def split_turn_session(
    path: Path, *, history_turns: int = 3, steps: int = 8, filler: int = 400
) -> Path:
    """History turns, then one long turn of tool steps (a small keep-recent splits it)."""
    builder = SessionBuilder()
    for turn in range(history_turns):
        builder.user(
            f"Turn {turn}: please fix the parser in src/parser_{turn}.py, keep it under 200 lines"
        )
        builder.assistant(
            f"I'll edit src/parser_{turn}.py.",
            tool="edit",
            arguments={"path": f"src/parser_{turn}.py"},
        )
        builder.result("Successfully replaced text.", tool="edit")
        builder.assistant(f"Done with turn {turn}. " + "x" * filler)
    builder.user("Now refactor the tokenizer in src/tokenizer.py and run `make test`")
    for step in range(steps):
        builder.assistant(
            f"Step {step}: working. " + "y" * filler,
            tool="bash",
            arguments={"command": f"make test STEP={step}"},
        )
        builder.result(f"step {step} output " + "z" * filler)
    builder.assistant("All steps finished.")
    return builder.write(path)


def plan_for(
    path: Path, *, keep_recent: int = 1500, reserve: int | None = None, rules: str = "pi"
) -> tuple[Any, CompactionPlan, CompactionSettings]:
    """Load ``path`` and plan a compaction at its leaf with the bytes counter."""
    session = load_session(path)
    settings = CompactionSettings(
        keep_recent_tokens=keep_recent, reserve_tokens=reserve, rules=rules
    )  # type: ignore[arg-type]
    plan = prepare_compaction(session, session.leaf, settings, get_counter("bytes"))
    return session, plan, settings


def write_compaction(
    session: Any, plan: CompactionPlan, record: dict[str, Any], **append_options: Any
) -> AppendResult:
    """What the app and ``compact`` do on accept: propose the entry at the plan's leaf and
    apply it through the workbench (the writer's append gate)."""
    handle = SessionHandle(session)
    with handle.read() as snapshot:
        proposal = propose_compaction(
            snapshot, plan, record, generation=snapshot.generation, file_leaf=snapshot.leaf
        )
    return apply(handle, proposal, **append_options)


def write_navigation(
    session: Any, nav_plan: Any, record: dict[str, Any] | None, **append_options: Any
) -> AppendResult:
    """What the app and ``navigate`` do: propose the move (a branch summary ``record``, or a
    leaf marker) and apply it through the workbench."""
    handle = SessionHandle(session)
    with handle.read() as snapshot:
        proposal = propose_navigation(snapshot, nav_plan, record)
    return apply(handle, proposal, **append_options)
