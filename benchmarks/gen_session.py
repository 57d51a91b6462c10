"""Generate deterministic, realistic, branchy pi v3 sessions for the benchmarks.

    python benchmarks/gen_session.py 100000            # prints the path (cached)
    python benchmarks/gen_session.py 1000 --out x.jsonl

The same size always gives the same bytes (seeded PRNG, fixed clock). Content mimics real
coding sessions: user requests, assistant text with tool calls (read, bash, edit, grep),
long tool outputs (source files, build logs, test output), code, and non-ASCII text (CJK,
accents, emoji). The tree branches: now and then the user goes back a few turns and
continues from there (sometimes with a branch summary), and on the main line a compaction
appears whenever the context passes ~150k tokens (keeping the last ~20k), as agents do.
Labels, model changes and thinking-level changes are sprinkled in.
Files are cached under ``benchmarks/data/``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
FORMAT_REVISION = 2
"""Bump when the generator changes, so cached files are regenerated."""

T0 = datetime(2025, 11, 3, 9, 0, 0, tzinfo=UTC)

WORDS = (
    "the parser session entry compaction summary branch leaf token budget cut point tool "
    "result assistant user message file read edit write test build error warning refactor "
    "function class module import return value config path index offset line byte cache "
    "window context model provider request response stream retry timeout lock append"
).split()
UNICODE_BITS = [
    "完成 ✓", "日本語のテキスト", "한국어 문장", "Ünïcödé àccents", "emoji 🚀🔥", "👨‍👩‍👧",
    "Ελληνικά", "русский текст", "עברית", "العربية", "∑ ∫ √ ∞", "naïve café",
]  # fmt: skip
CODE_LINES = [
    "def {name}(session, index):",
    "    entry = session.entries[index]",
    "    if entry.parent is None:",
    "        return []",
    "    return [e.id for e in session.path_to(index)]",
    "export function {name}(entries: SessionEntry[]): string {{",
    "  const byId = new Map(entries.map((e) => [e.id, e]));",
    "  for (const entry of entries) {{ if (!entry.parentId) continue; }}",
    "  return JSON.stringify(byId.get(leafId));",
    "}}",
    "class {Name}Selector extends Container {{",
    "    private list: SelectList; // {word} {word}",
    "    constructor(private theme: Theme) {{ super(); }}",
    'import {{ {name} }} from "./{word}.js";',
    '    raise ValueError(f"bad {word}: {{value!r}}")',
]
LOG_LINES = [
    "[{n:05d}] INFO  {word}: processed {m} items in {ms} ms",
    "[{n:05d}] WARN  {word} is deprecated; use {word2} instead",
    "src/{word}/{word2}.ts({m},{ms}): error TS2345: Argument of type 'string' is not assignable",
    "  ✓ {word} {word2} ({ms} ms)",
    "  ✗ {word} should handle {word2} — expected {m} but got {ms}",
    "PASS tests/{word}.test.ts ({ms}.{m} s)",
    "npm WARN {word}@{m}.{ms}.0 requires a peer of {word2}",
    "{n:06d}: {unicode} {word} {word2}",
]
TOOLS = ("read", "bash", "edit", "grep", "write")


class Generator:
    """Builds one session; ``lines`` holds the JSONL lines."""

    def __init__(self, entries: int, seed: int) -> None:
        self.target = entries
        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.count = 0
        self.clock = 0
        self.ids: list[str] = []
        self.main_line: list[str] = []  # ids of the current branch, root..leaf
        self.tool_serial = 0
        self.size_of: dict[str, int] = {}
        self.chars_since_compaction = 0

    # -- helpers ------------------------------------------------------------------

    def new_id(self) -> str:
        self.count += 1
        return f"{self.rng.getrandbits(32):08x}"

    def timestamp(self) -> str:
        self.clock += self.rng.randint(1, 40)
        moment = T0 + timedelta(seconds=self.clock, milliseconds=self.rng.randint(0, 999))
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"

    def words(self, low: int, high: int) -> str:
        rng = self.rng
        parts = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
        if rng.random() < 0.3:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(UNICODE_BITS))
        return " ".join(parts)

    def code_block(self, lines: int) -> str:
        rng = self.rng
        out = []
        for _ in range(lines):
            name = rng.choice(WORDS) + "_" + rng.choice(WORDS)
            out.append(rng.choice(CODE_LINES).format(
                name=name, Name=name.title().replace("_", ""), word=rng.choice(WORDS)))  # fmt: skip
        return "\n".join(out)

    def log_block(self, lines: int) -> str:
        rng = self.rng
        return "\n".join(
            rng.choice(LOG_LINES).format(
                n=i,
                m=rng.randint(1, 999),
                ms=rng.randint(1, 9999),
                word=rng.choice(WORDS),
                word2=rng.choice(WORDS),
                unicode=rng.choice(UNICODE_BITS),
            )  # fmt: skip
            for i in range(lines)
        )

    def output_lines(self) -> int:
        """Tool output length in lines: mostly short, sometimes a whole file or build log."""
        roll = self.rng.random()
        if roll < 0.55:
            return self.rng.randint(3, 25)
        if roll < 0.92:
            return self.rng.randint(25, 120)
        return self.rng.randint(200, 900)

    def emit(self, record: dict) -> str:
        entry_id = self.new_id()
        parent = self.main_line[-1] if self.main_line else None
        full = {"type": record.pop("type"), "id": entry_id, "parentId": parent,
                "timestamp": self.timestamp(), **record}  # fmt: skip
        line = json.dumps(full, ensure_ascii=False, separators=(",", ":"))
        self.lines.append(line)
        self.size_of[entry_id] = len(line)
        self.chars_since_compaction += len(line)
        self.ids.append(entry_id)
        self.main_line.append(entry_id)
        return entry_id

    def ms(self) -> int:
        return int((T0 + timedelta(seconds=self.clock)).timestamp() * 1000)

    # -- turns --------------------------------------------------------------------

    def user(self) -> None:
        text = self.words(6, 40)
        if self.rng.random() < 0.15:
            text += "\n\n```python\n" + self.code_block(self.rng.randint(3, 12)) + "\n```"
        message = {"role": "user", "content": [{"type": "text", "text": text}],
                   "timestamp": self.ms()}  # fmt: skip
        self.emit({"type": "message", "message": message})

    def assistant_turn(self) -> None:
        rng = self.rng
        calls = []
        for _ in range(rng.choice((0, 1, 1, 1, 2, 3))):
            self.tool_serial += 1
            tool = rng.choice(TOOLS)
            arguments: dict = {"path": f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.ts"}
            if tool == "bash":
                arguments = {"command": f"npm test -- {rng.choice(WORDS)} 2>&1 | tail -50"}
            elif tool == "edit":
                arguments["oldText"] = self.code_block(2)
                arguments["newText"] = self.code_block(3)
            calls.append({"type": "toolCall", "id": f"toolu_{self.tool_serial:08d}",
                          "name": tool, "arguments": arguments})  # fmt: skip
        content: list[dict] = []
        if rng.random() < 0.4:
            content.append({"type": "thinking", "thinking": self.words(20, 80),
                            "thinkingSignature": f"sig{rng.getrandbits(64):016x}"})  # fmt: skip
        if not calls or rng.random() < 0.6:
            content.append({"type": "text", "text": self.words(10, 90)})
        content.extend(calls)
        usage = {"input": rng.randint(2000, 150000), "output": rng.randint(50, 4000),
                 "cacheRead": rng.randint(0, 100000), "cacheWrite": 0}  # fmt: skip
        usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"]
        self.emit({"type": "message", "message": {
            "role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
            "stopReason": "toolUse" if calls else "stop", "timestamp": self.ms()}})  # fmt: skip
        for call in calls:
            lines = self.output_lines()
            body = self.code_block(lines) if call["name"] in ("read", "grep") else self.log_block(
                lines)  # fmt: skip
            self.emit({"type": "message", "message": {
                "role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
                "content": [{"type": "text", "text": body}], "isError": rng.random() < 0.05,
                "timestamp": self.ms()}})  # fmt: skip
        if calls:
            self.assistant_turn() if rng.random() < 0.5 else None

    def extras(self) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.03:
            model = rng.choice(["claude-sonnet-4-5", "claude-opus-4-5"])
            self.emit({"type": "model_change", "provider": "anthropic", "modelId": model})
        elif roll < 0.06:
            self.emit({"type": "thinking_level_change",
                       "thinkingLevel": rng.choice(["off", "low", "high"])})  # fmt: skip
        elif roll < 0.08 and len(self.main_line) > 3:
            self.emit({"type": "label", "targetId": rng.choice(self.main_line[-20:]),
                       "label": rng.choice(WORDS) + " " + rng.choice(UNICODE_BITS)})  # fmt: skip

    def compaction(self) -> None:
        """Compact like an agent does: keep roughly the last 20k tokens (~80k chars)."""
        kept_chars = 0
        keep_from = self.main_line[-1]
        for entry_id in reversed(self.main_line[1:]):
            kept_chars += self.size_of.get(entry_id, 0)
            keep_from = entry_id
            if kept_chars >= 80_000:
                break
        summary = "## Goal\n" + self.words(20, 60) + "\n\n## Progress\n" + "\n".join(
            "- " + self.words(5, 20) for _ in range(25))  # fmt: skip
        self.emit({"type": "compaction", "summary": summary, "firstKeptEntryId": keep_from,
                   "tokensBefore": self.rng.randint(150000, 190000),
                   "details": {"readFiles": [], "modifiedFiles": []}})  # fmt: skip
        self.chars_since_compaction = kept_chars

    def branch(self) -> None:
        """Go back a few turns (as /tree does) and continue from there."""
        back = self.rng.randint(3, min(60, len(self.main_line) - 1))
        abandoned_leaf = self.main_line[-1]
        self.main_line = self.main_line[: len(self.main_line) - back]
        if self.rng.random() < 0.5:
            self.emit({"type": "branch_summary", "fromId": self.main_line[-1],
                       "summary": f"Left {abandoned_leaf}: " + self.words(30, 120)})  # fmt: skip

    def build(self) -> list[str]:
        header = {
            "type": "session",
            "version": 3,
            "id": "0199a3b0-bench-7000-8000-000000000001",
            "timestamp": T0.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "cwd": "/home/dev/project",
        }
        self.lines.append(json.dumps(header, separators=(",", ":")))
        self.emit({"type": "session_info", "name": f"benchmark {self.target} — ベンチマーク"})
        while self.count < self.target:
            self.user()
            self.assistant_turn()
            self.extras()
            # Compact when the context passes ~150k tokens (~600k chars), as agents do.
            if self.chars_since_compaction > 600_000:
                self.compaction()
            elif self.rng.random() < 0.04 and len(self.main_line) > 10:
                self.branch()
        return self.lines[: self.target + 1]


def generate(entries: int, out: Path | None = None, *, seed: int | None = None) -> Path:
    """Write (or reuse) the session with ``entries`` entries; returns its path."""
    if out is None:
        out = DATA_DIR / f"session-{entries}-r{FORMAT_REVISION}.jsonl"
    if out.exists() and out.stat().st_size > 0:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = Generator(entries, seed if seed is not None else entries).build()
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")
    tmp.replace(out)
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: generate one file and print its path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entries", type=int)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    print(generate(args.entries, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
