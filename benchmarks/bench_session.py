"""Session-layer benchmarks: open + index against a bare ``json.loads`` floor, peak memory,
active path, outline, and tail-first token counting (pi and cl100k).

Inputs are the generated branchy sessions of ``gen_session.py`` (1k, 10k, 100k entries;
``--quick``: 1k and 10k). Targets for the 100k file (issue 2): index <= 1.5x the floor, peak
RSS <= 0.5 x file size + 150 MB, active-path tokens (cl100k) <= 1 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gen_session import generate  # type: ignore[import-not-found]

from tui_compactor.session.outline import build_outline
from tui_compactor.session.reader import load_session


def floor(path: Path) -> int:
    """The floor: read the file line by line and ``json.loads`` each non-blank line."""
    count = 0
    loads = json.loads
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                loads(line)
                count += 1
    return count


def context_indices(session: Any, leaf: int) -> list[int]:
    """The entries pi's context is built from: after the last compaction on the path, the
    compaction itself and the kept entries from its ``firstKeptEntryId`` (tail-first scan)."""
    path = session.path_to(leaf)
    entries = session.entries
    for position in range(len(path) - 1, -1, -1):
        entry = entries[path[position]]
        if entry.type != "compaction":
            continue
        first_kept = entry.data.get("firstKeptEntryId")
        start = position
        for back in range(position - 1, -1, -1):
            if entries[path[back]].id == first_kept:
                start = back
                break
        return path[start:]
    return path


def count_tail_first(session: Any, counter_name: str) -> tuple[int, int]:
    """Tokens of the leaf's context, counted from the leaf backwards. (entries, tokens)."""
    from tui_compactor.engine.tokens import TokenCache, get_counter

    cache = TokenCache(session, get_counter(counter_name))
    leaf = session.leaf
    total = 0
    indices = context_indices(session, leaf)
    for index in reversed(indices):
        total += cache.message_tokens(index)
    return len(indices), total


def run(ctx: Any) -> list[dict[str, Any]]:
    """All session cases for each size."""
    sizes = [1000, 10000] if ctx.quick else [1000, 10000, 100000]
    rows: list[dict[str, Any]] = []
    for size in sizes:
        path = generate(size)
        size_mb = path.stat().st_size / 1e6
        runs = ctx.runs if size < 100000 else max(3, ctx.runs - 2)
        floor_s, _ = ctx.time(lambda p=path: floor(p), runs)
        rows.append({"case": f"{size:>6} floor json.loads/line", "median_s": floor_s,
                     "runs": runs, "ratio": 1.0, "size_mb": size_mb})  # fmt: skip

        def index(p: Path = path) -> None:
            load_session(p).close()

        index_s, _ = ctx.time(index, runs)
        session = load_session(path)
        mode = "lazy records" if session.lazy else "records in memory"
        rss = ctx.peak_rss(
            "from tui_compactor.session.reader import load_session\n"
            f"s = load_session({str(path)!r})\n"
            "assert s.complete"
        )
        budget = 0.5 * size_mb * 1e6 / 2**20 + 150
        rows.append({
            "case": f"{size:>6} open+index", "median_s": index_s, "runs": runs,
            "ratio": index_s / floor_s, "peak_rss_mb": rss, "size_mb": size_mb,
            "target": f"<=1.5x, RSS<={budget:.0f} MB" if size == 100000 else None,
            "notes": f"{len(session.entries)} entries, {mode}, {session.verdict.value}",
        })  # fmt: skip
        leaf = session.leaf
        path_s, _ = ctx.time(lambda s=session, x=leaf: s.path_to(x), runs)
        rows.append({"case": f"{size:>6} active path", "median_s": path_s, "runs": runs,
                     "notes": f"{len(session.path_to(leaf))} entries"})  # fmt: skip
        outline_s, _ = ctx.time(lambda s=session: build_outline(s), runs)
        rows.append({"case": f"{size:>6} outline (default filter)", "median_s": outline_s,
                     "runs": runs, "notes": f"{len(build_outline(session))} rows"})  # fmt: skip
        for counter in ("pi", "cl100k"):

            def tokens(s: Any = session, c: str = counter) -> None:
                s.drop_cached_records()
                count_tail_first(s, c)

            tokens_s, _ = ctx.time(tokens, runs)
            entries, total = count_tail_first(session, counter)
            rows.append({
                "case": f"{size:>6} context tokens {counter} (tail-first)",
                "median_s": tokens_s, "runs": runs,
                "target": "<=1 s" if size == 100000 and counter == "cl100k" else None,
                "notes": f"{entries} entries, {total} tokens",
            })  # fmt: skip
        session.close()
    return rows
