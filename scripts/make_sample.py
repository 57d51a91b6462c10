"""Build the bundled sample session ``tui_compactor/data/sample-session.jsonl``.

The base is ``tests/fixtures/sessions/refactor-session-v3.jsonl``: a real pi session (v3, two
compactions, no branches; see ``tui_compactor/data/ATTRIBUTION.md``). This script copies it and
appends, with tui-compactor's own writer (so every append goes through the append gate), the
shapes a demo should show:

* side branch A off an earlier user turn: an alternative user message, an assistant reply
  with a tool call, its tool result and a closing assistant message, plus a label on it;
* side branch B near the end (user -> assistant with a ``write`` call -> result -> assistant);
* a ``branch_summary`` of branch B attached at the main-line leaf (the navigation target),
  as if the user went back there with "summarize";
* a label on the main line, which becomes the file's leaf, so the active path is the main
  line and ``tui-compactor plan`` has something to compact with default settings.

Every id and timestamp is fixed here, so the output is byte-for-byte deterministic.

Usage: ``python scripts/make_sample.py [--source FILE] [--output FILE]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui_compactor.session.reader import load_session  # noqa: E402
from tui_compactor.session.writer import append_entries, make_branch_summary_entry  # noqa: E402

DEFAULT_SOURCE = ROOT / "tests" / "fixtures" / "sessions" / "refactor-session-v3.jsonl"
DEFAULT_OUTPUT = ROOT / "tui_compactor" / "data" / "sample-session.jsonl"

BRANCH_A_PARENT = "cc9a055c"
"""Assistant reply after which the user first asked "will this also allow us to test the
agent core?"; branch A asks something else at that point."""
BRANCH_B_PARENT = "e82343c5"
"""Assistant answer to "what did i just execute?" near the end; branch B continues there."""
MAIN_LEAF = "d6e1e20a"
"""The last entry of the base file (a thinking-level change on the main line)."""
MAIN_LABEL_TARGET = "2f0ac20a"
"""The user's "alright, where were we?" right after the second compaction."""


def _assistant(
    content: list[dict[str, Any]], stop: str, millis: int, usage: tuple[int, int]
) -> dict[str, Any]:
    """An assistant message shaped like the ones pi writes for Anthropic models."""
    input_tokens, output_tokens = usage
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-opus-4-5",
        "usage": {
            "input": input_tokens,
            "output": output_tokens,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": input_tokens + output_tokens,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": stop,
        "timestamp": millis,
    }


def _user(text: str, millis: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": millis}


def _tool_result(call_id: str, tool: str, text: str, millis: int) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": millis,
    }


def _message(message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "message": message}


BRANCH_A = [
    _message(
        _user(
            "before we commit to AgentSession: how tangled is tui-renderer.ts with the agent "
            "right now? count the direct agent calls so we know what we are moving",
            1765243860000,
        )
    ),
    _message(
        _assistant(
            [
                {"type": "text", "text": "Counting the direct agent calls in tui-renderer.ts."},
                {
                    "type": "toolCall",
                    "id": "toolu_sampleA01",
                    "name": "bash",
                    "arguments": {
                        "command": "grep -c 'this\\.agent\\.' "
                        "packages/coding-agent/src/tui/tui-renderer.ts"
                    },
                },
            ],
            "toolUse",
            1765243863000,
            (41210, 96),
        )
    ),
    _message(_tool_result("toolu_sampleA01", "bash", "37\n", 1765243863400)),
    _message(
        _assistant(
            [
                {
                    "type": "text",
                    "text": "tui-renderer.ts calls `this.agent.` in 37 places: prompt/abort/"
                    "queue handling, model and thinking-level switches, and session "
                    "persistence on every message event. Those are exactly the pieces an "
                    "AgentSession would own, so the TUI would keep only rendering and "
                    "input. I'd still do the split in one pass rather than piecemeal.",
                }
            ],
            "stop",
            1765243871000,
            (41420, 118),
        )
    ),
]
BRANCH_A_IDS = ["5a7e0a01", "5a7e0a02", "5a7e0a03", "5a7e0a04"]
BRANCH_A_TIMES = [
    "2025-12-09T01:31:00.000Z",
    "2025-12-09T01:31:03.000Z",
    "2025-12-09T01:31:03.400Z",
    "2025-12-09T01:31:11.000Z",
]

BRANCH_B = [
    _message(
        _user(
            "actually, before moving on: add an e2e test that runs `ls` through the bash "
            "queue and checks the result shows up in the chat after the next submit",
            1765244100000,
        )
    ),
    _message(
        _assistant(
            [
                {
                    "type": "toolCall",
                    "id": "toolu_sampleB01",
                    "name": "write",
                    "arguments": {
                        "path": "packages/coding-agent/test/bash-queue.e2e.test.ts",
                        "content": "// e2e: a queued bash result is shown after the next submit\n",
                    },
                }
            ],
            "toolUse",
            1765244104000,
            (52310, 240),
        )
    ),
    _message(
        _tool_result(
            "toolu_sampleB01",
            "write",
            "Successfully wrote 61 bytes to packages/coding-agent/test/bash-queue.e2e.test.ts",
            1765244104300,
        )
    ),
    _message(
        _assistant(
            [
                {
                    "type": "text",
                    "text": "Added packages/coding-agent/test/bash-queue.e2e.test.ts as a "
                    "stub; it still needs the pendingMessageContainer assertions once the "
                    "queue change lands.",
                }
            ],
            "stop",
            1765244110000,
            (52600, 52),
        )
    ),
]
BRANCH_B_IDS = ["5a7e0b01", "5a7e0b02", "5a7e0b03", "5a7e0b04"]
BRANCH_B_TIMES = [
    "2025-12-09T01:35:00.000Z",
    "2025-12-09T01:35:04.000Z",
    "2025-12-09T01:35:04.300Z",
    "2025-12-09T01:35:10.000Z",
]

BRANCH_B_SUMMARY = """The user explored a related idea that was left for later:

## Goal
Add an end-to-end test proving that a queued bash result (`ls`) appears in the chat
after the next submit.

## Constraints & Preferences
- e2e tests only (no unit tests), as agreed for AgentSession

## Progress
### Done
- [x] Created `packages/coding-agent/test/bash-queue.e2e.test.ts` (stub only)

### In Progress
- [ ] Assertions on `pendingMessageContainer` once the bash queue change lands

## Key Decisions
- **Stub first**: the queue behaviour is still changing, so the test waits for it

## Next Steps
1. Finish the bash queue change on the main line
2. Fill in the e2e assertions

<files>
(Write) packages/coding-agent/test/bash-queue.e2e.test.ts
</files>"""


def build(source: Path, output: Path) -> Path:
    """Copy ``source`` and append the branches; writes ``output`` (replacing it)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output.parent) as scratch:
        work = Path(scratch) / output.name
        shutil.copyfile(source, work)
        fast = {"quiet_seconds": 0.0}
        session = load_session(work)

        def index(entry_id: str) -> int:
            entry = session.entry_by_id(entry_id)
            if entry is None:
                raise SystemExit(f"make_sample: {entry_id} not in {source}")
            return entry.index

        # Branch A off an early user turn, and a label on its first message.
        append_entries(
            session,
            BRANCH_A,
            parent_index=index(BRANCH_A_PARENT),
            ids=BRANCH_A_IDS,
            timestamps=BRANCH_A_TIMES,
            **fast,
        )
        label_a = {"type": "label", "targetId": BRANCH_A_IDS[0], "label": "alt: measure coupling"}
        append_entries(
            session,
            [label_a],
            parent_index=index(BRANCH_A_IDS[-1]),
            ids=["5a7e0a05"],
            timestamps=["2025-12-09T01:32:00.000Z"],
            **fast,
        )
        # Branch B near the end.
        append_entries(
            session,
            BRANCH_B,
            parent_index=index(BRANCH_B_PARENT),
            ids=BRANCH_B_IDS,
            timestamps=BRANCH_B_TIMES,
            **fast,
        )
        # Back to the main-line leaf with a summary of branch B, then a main-line label.
        summary = make_branch_summary_entry(
            summary=BRANCH_B_SUMMARY,
            modified_files=["packages/coding-agent/test/bash-queue.e2e.test.ts"],
            summarizer="sample-script",
        )
        append_entries(
            session,
            [summary],
            parent_index=index(MAIN_LEAF),
            ids=["5a7e0c01"],
            timestamps=["2025-12-09T01:36:00.000Z"],
            **fast,
        )
        label_main = {
            "type": "label",
            "targetId": MAIN_LABEL_TARGET,
            "label": "after 2nd compaction",
        }
        append_entries(
            session,
            [label_main],
            parent_index=index("5a7e0c01"),
            ids=["5a7e0c02"],
            timestamps=["2025-12-09T01:36:30.000Z"],
            **fast,
        )
        session.close()
        os.replace(work, output)
    return output


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: build the sample and print where it went."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    path = build(args.source, args.output)
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
