"""A refresh never exposes half-applied state: one thread appends 3k entries to the file and
refreshes after each batch (some 150 generations) while others build outlines, plans, gauges and
contexts through the handle."""

from __future__ import annotations

import json
import random
import shutil
import threading
from pathlib import Path
from typing import Any

from tui_compactor.engine.context import build_context
from tui_compactor.session.outline import build_outline
from tui_compactor.session.reader import load_session
from tui_compactor.workbench.handle import SessionHandle
from tui_compactor.workbench.settings import Settings
from tui_compactor.workbench.views import chart_points, gauge_at, plan_report

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "oracle" / "sessions" / "tree-compacted.jsonl"
APPENDS = 3_000


def _line(ident: str, parent: str, number: int) -> bytes:
    if number % 2:
        message: dict[str, Any] = {
            "role": "user",
            "content": f"question {number}",
            "timestamp": 1768212000000 + number,
        }
    else:
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": f"answer {number}"}],
            "usage": {
                "input": 10,
                "output": 5,
                "cacheRead": 1000 + number,
                "cacheWrite": 0,
                "totalTokens": 1015 + number,
            },
            "stopReason": "stop",
            "timestamp": 1768212000000 + number,
        }
    record = {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "timestamp": "2026-01-12T10:00:00.000Z",
        "message": message,
    }
    return json.dumps(record).encode() + b"\n"


def test_readers_see_whole_generations_while_the_file_grows(tmp_path: Path) -> None:
    path = tmp_path / "growing.jsonl"
    shutil.copyfile(FIXTURE, path)
    handle = SessionHandle(load_session(path))
    settings = Settings(keep_recent_tokens=2000, tokens="bytes").with_model_window(200_000, "m")
    cache = handle.token_cache(settings.counter())
    loaded = handle.generation
    shape: dict[int, tuple[int, int | None]] = {
        loaded: (len(handle.session.entries), handle.session.leaf)
    }
    errors: list[BaseException] = []
    checked = {"outline": 0, "plan": 0, "gauge": 0, "context": 0, "chart": 0}
    done = threading.Event()

    def grow() -> None:
        try:
            rng = random.Random(8)
            leaf = handle.session.entries[handle.session.leaf].id  # type: ignore[index]
            written = 0
            with path.open("ab") as out:
                while written < APPENDS:
                    batch = min(APPENDS - written, rng.randint(1, 40))
                    for _ in range(batch):
                        ident = f"s{written:07d}"
                        out.write(_line(ident, leaf, written))
                        leaf = ident
                        written += 1
                    out.flush()
                    result = handle.refresh()
                    assert result.status == "grew", result
                    with handle.read() as snapshot:
                        shape[snapshot.generation] = (snapshot.entry_count, snapshot.leaf)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            done.set()

    def consistent(snapshot: Any) -> None:
        assert shape.get(snapshot.generation, (snapshot.entry_count, snapshot.leaf)) == (
            snapshot.entry_count,
            snapshot.leaf,
        )

    def read(kind: str) -> None:
        try:
            while not done.is_set():
                with handle.read() as snapshot:
                    consistent(snapshot)
                    session, leaf, count = snapshot.session, snapshot.leaf, snapshot.entry_count
                    assert leaf is not None
                    if kind == "outline":
                        rows = build_outline(session)
                        assert rows and max(row.index for row in rows) < count
                        assert any(row.index == leaf for row in rows)
                    elif kind == "plan":
                        report = plan_report(snapshot, leaf, settings, None, cache)
                        assert report.plan.branch[-1] == leaf and report.generation == (
                            snapshot.generation
                        )
                        assert report.plan.prepared and report.refusal is None
                    elif kind == "gauge":
                        gauge = gauge_at(snapshot, leaf, settings, cache)
                        assert gauge.blocks[-1][3] == leaf and gauge.tokens > 0
                    elif kind == "context":
                        context = build_context(session, leaf)
                        assert context.items[-1].entry_index == leaf
                        assert all(item.entry_index < count for item in context.items)
                    else:
                        chart = chart_points(snapshot, settings)
                        assert all(index < count for index, _ in chart.points)
                checked[kind] += 1
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
            done.set()

    threads = [threading.Thread(target=grow)] + [
        threading.Thread(target=read, args=(kind,)) for kind in checked
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not errors, repr(errors[0])
    assert len(handle.session.entries) == shape[loaded][0] + APPENDS
    assert handle.generation == max(shape)  # one new generation a refresh, each seen once
    assert all(count > 0 for count in checked.values()), checked
