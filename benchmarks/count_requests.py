"""Requests the app's counting process gets per view, and each view's wall time.

    python benchmarks/count_requests.py SESSION.jsonl [...]        # each view, fresh cache
    python benchmarks/count_requests.py --app SESSION.jsonl [...]  # the app: open, then c

Each view (the gauge at the leaf, the plan, the sweep, the Context tab as sent, the Window
tab, the shake preview) runs on a fresh token cache of a real counting process
(``Cl100kProcessCounter``), so every message it needs is counted: a view that counts one
message a request makes hundreds (``--view NAME``: only that view; each row gives the
requests and the texts they carried).
``--app`` runs the app headless (120x40), presses ``c`` once the file is loaded and stops
when the plan is drawn: the seconds, and the requests from the open to the plan (the token
worker's batches included). Run it in another checkout (``PYTHONPATH=that checkout``) for the
side by side; say the load (printed) with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path
from typing import Any


def _traced_counter() -> Any:
    """The app's cl100k counter, made now (the app and the views find it made)."""
    from tui_compactor.engine import tokens
    from tui_compactor.engine.token_process import Cl100kProcessCounter

    counter = Cl100kProcessCounter(preload=False)
    tokens._COUNTERS["cl100k"] = counter
    return counter


def views(path: Path, only: list[str]) -> None:
    from tui_compactor.engine.breakdown import token_breakdown
    from tui_compactor.engine.deps import cut_sweep
    from tui_compactor.session.reader import load_session
    from tui_compactor.workbench.handle import SessionHandle
    from tui_compactor.workbench.settings import Settings
    from tui_compactor.workbench.views import gauge_at, plan_report

    counter = _traced_counter()
    requests = {"n": 0, "texts": 0}
    original = counter._request

    def traced(encoded: list[bytes]) -> list[int]:
        requests["n"] += 1
        requests["texts"] += len(encoded)
        return original(encoded)

    counter._request = traced
    counter.count_text("ready")
    handle = SessionHandle(load_session(path))
    settings = Settings.defaults()
    compaction = settings.compaction()
    measures = {
        "gauge": lambda s, c: gauge_at(s, s.leaf, settings, c),
        "plan": lambda s, c: plan_report(s, s.leaf, settings, None, c),
        "sweep": lambda s, c: cut_sweep(s.session, s.leaf, compaction, counter, c),
        "context": lambda s, c: gauge_at(s, s.leaf, settings, c, sent=True),
        "window": lambda s, c: token_breakdown(s.session, s.leaf, counter, compaction, c),
        "shake": lambda s, c: _shake(s.session, s.leaf, counter, c),
    }
    row = []
    for name, measure in measures.items():
        if only and name not in only:
            continue
        cache = handle.token_cache(counter)
        cache.invalidate()
        requests.update(n=0, texts=0)
        started = time.perf_counter()
        with handle.read() as snapshot:
            measure(snapshot, cache)
        row.append(
            f"{name} {time.perf_counter() - started:.3f}s {requests['n']} req "
            f"{requests['texts']} texts"
        )
    print(f"{path.name}: " + ", ".join(row) + f"; load {os.getloadavg()[0]:.1f}")
    counter.close()


def _shake(session: Any, leaf: int | None, counter: Any, cache: Any) -> Any:
    """The app's shake preview: the three configs and the context before and after each (a
    checkout from before ``shake_previews`` made them one config at a time)."""
    from tui_compactor.engine import shake

    names = list(shake.SHAKE_CONFIGS)
    if hasattr(shake, "shake_previews"):
        previews = shake.shake_previews(session, leaf, names, counter, cache)
        return shake.contexts_after_shake(session, leaf, previews, counter, cache)
    previews = [shake.shake_preview(session, leaf, name, counter) for name in names]
    return [shake.context_after_shake(session, leaf, one, counter) for one in previews]


def app(path: Path) -> None:
    started = time.perf_counter()
    counter = _traced_counter()
    requests = {"open": 0, "plan": 0}
    phase = ["open"]
    original = counter._request

    def traced(encoded: list[bytes]) -> list[int]:
        requests[phase[0]] += 1
        return original(encoded)

    counter._request = traced
    from tui_compactor.ui.app import CompactorApp

    async def run() -> None:
        application = CompactorApp(path, follow=False)
        async with application.run_test(size=(120, 40)) as pilot:
            while (
                application.session is None
                or application.session.preview
                or application.selected_entry is None
            ):
                await pilot.pause(0.01)
            loaded = time.perf_counter() - started
            phase[0] = "plan"
            asked = time.perf_counter()
            await pilot.press("c")
            while application.state.plan_report is None:
                await pilot.pause(0.005)
            shown = time.perf_counter()
            print(
                f"{path.name}: loaded {loaded:.3f}s, c -> plan {shown - asked:.3f}s; requests "
                f"open {requests['open']}, plan {requests['plan']}; "
                f"load {os.getloadavg()[0]:.1f}"
            )
            counter.close()
            application.exit()

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path)
    parser.add_argument("--app", action="store_true", help="the app: open, then c")
    parser.add_argument(
        "--view",
        action="append",
        default=[],
        help="only this view (gauge, plan, sweep, context, window, shake; repeatable)",
    )
    args = parser.parse_args()
    for path in args.sessions:
        if args.app:
            app(path)
        else:
            views(path, args.view)


if __name__ == "__main__":
    main()
