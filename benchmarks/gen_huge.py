"""Generate the hostile-size sessions of ``bench_huge.py`` (written as streams, cached in
``benchmarks/data/``).

    python benchmarks/gen_huge.py line-1g     # one 1 GB line (a tool result) between small ones
    python benchmarks/gen_huge.py tiny-1m     # 1,000,000 tiny entries (~258 MB)
    python benchmarks/gen_huge.py chain-200k  # one unbranched chain of 200,000 entries
    python benchmarks/gen_huge.py fan-100k    # one node with 100,000 children
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
HEADER = {"type": "session", "version": 3, "id": "0199a3b0-huge-7000-8000-000000000001",
          "timestamp": "2025-11-03T09:00:00.000Z", "cwd": "/home/dev/project"}  # fmt: skip


def _ts(n: int) -> str:
    seconds = n // 1000
    return (
        f"2025-11-{3 + seconds // 86400:02d}T{(seconds // 3600) % 24:02d}:"
        f"{(seconds // 60) % 60:02d}:{seconds % 60:02d}.{n % 1000:03d}Z"
    )


def _message(entry_id: str, parent: str | None, n: int, role: str, text: str) -> str:
    message: dict[str, object] = {"role": role, "content": [{"type": "text", "text": text}],
                                  "timestamp": 1762160400000 + n}  # fmt: skip
    if role == "assistant":
        message.update(api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5",
                       stopReason="stop")  # fmt: skip
    record = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": _ts(n),
              "message": message}  # fmt: skip
    return json.dumps(record, separators=(",", ":"))


def tiny(count: int) -> Iterator[str]:
    """``count`` short user/assistant messages in one chain (~250 bytes each)."""
    parent = None
    for n in range(1, count + 1):
        entry_id = f"{n:08x}"
        role = "user" if n % 2 else "assistant"
        yield _message(entry_id, parent, n, role, f"step {n}: ok")
        parent = entry_id


def fan(children: int) -> Iterator[str]:
    """A root with ``children`` direct children (a user retrying one prompt that often)."""
    yield _message("00000001", None, 1, "user", "root question")
    for n in range(2, children + 2):
        yield _message(f"{n:08x}", "00000001", n, "assistant", f"answer {n}")


def huge_line(size: int) -> Iterator[str]:
    """A tool result of ``size`` bytes between two small messages (streamed, never held)."""
    yield _message("00000001", None, 1, "user", "print the log")
    head = ('{"type":"message","id":"00000002","parentId":"00000001","timestamp":"'
            + _ts(2) + '","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash",'
            '"content":[{"type":"text","text":"')  # fmt: skip
    yield head + "\0"  # marker: the body follows, streamed by write()
    yield _message("00000003", "00000002", 3, "assistant", "that was long")


CASES: dict[str, tuple[str, Callable[[], Iterator[str]]]] = {
    "line-1g": ("huge-line-1g.jsonl", lambda: huge_line(1 << 30)),
    "tiny-1m": ("huge-tiny-1m.jsonl", lambda: tiny(1_000_000)),
    "chain-200k": ("huge-chain-200k.jsonl", lambda: tiny(200_000)),
    "fan-100k": ("huge-fan-100k.jsonl", lambda: fan(100_000)),
}


def generate(name: str) -> Path:
    """Write (or reuse) the case ``name``; returns its path."""
    file_name, make = CASES[name]
    out = DATA_DIR / file_name
    if out.exists() and out.stat().st_size > 0:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    block = ("x" * 1023 + "\\n") * 1024  # 1 MiB of log text per write (escaped newlines)
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(HEADER, separators=(",", ":")) + "\n")
        for line in make():
            if line.endswith("\0"):
                handle.write(line[:-1])
                for _ in range((1 << 30) // len(block)):
                    handle.write(block)
                handle.write('"}]}}\n')
            else:
                handle.write(line + "\n")
    tmp.replace(out)
    return out


if __name__ == "__main__":
    for argument in sys.argv[1:] or list(CASES):
        print(generate(argument))
