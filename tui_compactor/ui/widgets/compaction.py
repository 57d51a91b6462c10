"""The compaction panel: run summaries, stream them side by side, audit, then accept or discard.

``CompactionPanel`` takes one or more ``CompactionJob`` objects built on the same plan (more than
one = *candidates*: other profiles or prompts, compared side by side). Each job runs in an async
worker on the app's loop; its events (``PartStarted`` / ``PartDelta`` / ``PartFinished`` /
``PartFailed``) feed ``StreamText`` panes that buffer deltas and redraw about 15 times a second.
The history and turn-prefix summaries stream in two panes side by side, then the short summary,
then the fidelity audit (anchors the summary lost). The panel never writes: it posts
``Accepted`` (the app proposes and applies the entry in a thread), ``Discarded`` (also after
``escape`` cancelled the work in flight) or ``Failed`` (no candidate produced a result).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Button, Static
from textual.worker import Worker

from tui_compactor.summarize.compaction import CompactionCancelled, CompactionJob, CompactionResult
from tui_compactor.summarize.runner import (
    Event,
    PartDelta,
    PartFailed,
    PartFinished,
    PartStarted,
    approx_tokens,
)
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.bindings import key_of
from tui_compactor.ui.widgets.stream_text import FLUSH_HZ, StreamText
from tui_compactor.ui.widgets.summary_diff import SummaryDiff
from tui_compactor.ui.workers import work

__all__ = ["CompactionPanel", "CandidateView", "CandidateState", "format_audit", "PART_TITLES"]

PART_TITLES = {
    "history": "History summary",
    "turn_prefix": "Turn prefix (split turn)",
    "short": "Short summary",
}
"""Pane titles per summary part."""

STACK_BELOW = 100
"""A panel narrower than this puts the history and turn-prefix panes on top of each other."""

SHORT_BELOW = 30
"""A panel shorter than this gives the audit fewer rows (the summaries come first)."""

AUDIT_ROWS_SHORT = 3
"""Rows the audit may take in a panel shorter than ``SHORT_BELOW`` (6 otherwise, in the CSS)."""

MISSING_SHOWN = 12
"""Missing anchors listed in the audit line; the rest are counted."""


@dataclass
class CandidateState:
    """Where one candidate's run stands."""

    status: str = "waiting"
    """``waiting``, ``running``, ``done``, ``failed`` or ``cancelled``."""
    result: CompactionResult | None = None
    error: str | None = None
    started: float = 0.0
    seconds: float | None = None
    runs: int = 0
    """How many times this candidate ran (1 + regenerations)."""


def format_audit(result: CompactionResult) -> Text:
    """The audit as one ``Text``: coverage, then the missing anchors by kind."""
    audit = result.audit
    total = len(audit.anchors)
    kept = len(audit.kept)
    missing = audit.missing
    style = "green" if not missing else ("yellow" if audit.coverage >= 0.8 else "red")
    text = Text("Audit ", style="bold")
    text.append(f"{kept}/{total} anchors kept ({audit.coverage:.0%})", style=style)
    if missing:
        text.append(" · missing: ", style="dim")
        for number, anchor in enumerate(missing[:MISSING_SHOWN]):
            if number:
                text.append(" · ", style="dim")
            text.append(f"{anchor.kind} ", style="dim")
            text.append(sanitize(anchor.text, single_line=True, max_len=60))
        if len(missing) > MISSING_SHOWN:
            text.append(f" · …{len(missing) - MISSING_SHOWN} more", style="dim")
    for warning in result.warnings:
        text.append("\n⚠ ", style="yellow")
        text.append(sanitize(warning, single_line=True))
    return text


class CandidateView(Vertical):
    """One candidate: its title and stats, the part panes, the short summary and the audit."""

    DEFAULT_CSS = """
    CandidateView {
        width: 1fr;
        height: 1fr;
        border: round $primary-darken-2;
        padding: 0 0;
    }
    CandidateView.-selected {
        border: round $accent;
    }
    CandidateView > .candidate-title {
        height: 1;
        padding: 0 1;
    }
    CandidateView > .candidate-parts {
        height: 1fr;
        layout: horizontal;
    }
    CandidateView.-stacked > .candidate-parts {
        layout: vertical;
    }
    CandidateView .part {
        width: 1fr;
        height: 1fr;
    }
    CandidateView .part-title {
        height: 1;
        padding: 0 1;
        background: $boost;
        text-style: bold;
    }
    CandidateView .short-pane {
        height: 4;
    }
    CandidateView > .candidate-audit {
        height: auto;
        max-height: 6;
        padding: 0 1;
    }
    """

    def __init__(
        self, job: CompactionJob, label: str, *, number: int, stacked: bool, split: bool
    ) -> None:
        """Args:
        job: the job this view runs and shows.
        label: the candidate's name (summarizer label, prompt variant).
        number: 1-based position among candidates.
        stacked: put the history and turn-prefix panes on top of each other (candidates
            mode, where columns are narrow) instead of side by side.
        split: the plan splits a turn, so a turn-prefix pane is shown.
        """
        super().__init__(id=f"candidate-{number}")
        self.job = job
        self.label = label
        self.number = number
        self.stacked = stacked
        self.split = split
        self.state = CandidateState()
        self.part_titles: dict[str, Static] = {}
        self.panes: dict[str, StreamText] = {}
        self.cut_parts: set[str] = set()
        """Parts of this run the summarizer got only part of (the ⚠ stays on their title)."""
        self.asked_parts: set[str] = set()
        """Parts of this run the summarizer was asked for (a part with nothing to summarize,
        such as the history before a split turn at the start of a branch, is never asked)."""
        self._audit_short = False
        """Whether the audit is held to ``AUDIT_ROWS_SHORT`` rows (``fit_audit``)."""
        self._title = Static(self._title_text(), classes="candidate-title")
        self._audit = Static(Text(""), classes="candidate-audit")
        self._body: list[Widget] | None = None
        """The panes and the audit, made with the title (``compose``), until they are mounted
        (``mount_body``)."""
        self._body_mounted = False

    def compose(self) -> ComposeResult:
        """The title; the part panes, the short summary and the audit are made now, in this
        view's own step (the panel starts its runs once its views are composed: the panes take
        the events of a run before they are mounted), and mounted on a later frame
        (``mount_body``)."""
        if self._body is None and not self._body_mounted:
            self._body = self._make_body()
        yield self._title
        self.set_class(self.stacked, "-stacked")

    def _make_body(self) -> list[Widget]:
        """Part panes (history | turn prefix), short summary, audit."""
        parts = ["history", "turn_prefix"] if self.split else ["history"]
        columns = Container(
            *(
                Vertical(
                    self._part_title(part),
                    self._pane(part, "waiting for the summarizer…"),
                    classes="part",
                )
                for part in parts
            ),
            classes="candidate-parts",
        )
        short = Vertical(
            self._part_title("short"),
            self._pane("short", "after the summaries above"),
            classes="short-pane",
        )
        return [columns, short, self._audit]

    @property
    def body_mounted(self) -> bool:
        """Whether the panes and the audit were mounted (``mount_body``)."""
        return self._body_mounted

    async def mount_body(self) -> None:
        """Mount the panes and the audit under the title (once)."""
        if self._body_mounted:
            return
        body = self._body if self._body is not None else self._make_body()
        self._body, self._body_mounted = None, True
        await self.mount_all(body)

    def _part_title(self, part: str) -> Static:
        title = Static(Text(PART_TITLES[part]), classes="part-title", id=f"title-{part}")
        self.part_titles[part] = title
        return title

    def _pane(self, part: str, placeholder: str) -> StreamText:
        # The panel flushes every pane on one timer, so all of them cost one screen update.
        pane = StreamText(placeholder, id=f"pane-{part}", own_timer=False)
        self.panes[part] = pane
        return pane

    def _title_text(self) -> Text:
        """``#n label · status · stats``."""
        state = self.state
        title = Text(f"#{self.number} ", style="bold")
        title.append(sanitize(self.label, single_line=True, max_len=50), style="bold cyan")
        status_style = {
            "done": "green",
            "failed": "red",
            "cancelled": "yellow",
            "running": "blue",
        }.get(state.status, "dim")
        title.append(f"  {state.status}", style=status_style)
        if state.runs > 1:
            title.append(f" (run {state.runs})", style="dim")
        result = state.result
        if result is not None:
            title.append("  ·  ", style="dim")
            title.append(f"{approx_tokens(result.summary):,} tokens")
            title.append(f" / {len(result.summary):,} chars", style="dim")
            title.append("  ·  ", style="dim")
            title.append(f"audit {result.audit.coverage:.0%}")
            if state.seconds is not None:
                title.append("  ·  ", style="dim")
                title.append(f"{state.seconds:.1f} s")
        elif state.error:
            title.append(": ", style="dim")
            title.append(sanitize(state.error, single_line=True, max_len=120), style="red")
        return title

    def refresh_title(self) -> None:
        """Redraw the title line from the state."""
        self._title.update(self._title_text(), layout=False)

    def reset_for_run(self) -> None:
        """Empty every pane and the audit before a (re)run."""
        for pane in self.panes.values():
            pane.clear()
        self.cut_parts.clear()
        self.asked_parts.clear()
        for part, title in self.part_titles.items():
            title.update(Text(PART_TITLES[part]), layout=False)
        self._audit.update(Text(""))

    def handle_event(self, event: Event) -> None:
        """Apply one job event to the panes (called on the app's loop)."""
        pane = self.panes.get(event.part)
        title = self.part_titles.get(event.part)
        if pane is None or title is None:
            return
        heading = Text(PART_TITLES[event.part])
        self.asked_parts.add(event.part)
        if isinstance(event, PartStarted):
            pane.clear()
            heading.append(" · streaming", style="blue")
            if event.windows > 1:
                heading.append(f" · window {event.window}/{event.windows}", style="dim")
            if event.attempt > 1:
                heading.append(f" · restart {event.attempt}", style="yellow")
            if event.note:
                self.cut_parts.add(event.part)
            if event.part in self.cut_parts:
                heading.append(" · ⚠ cut to fit (see warnings)", style="bold yellow")
            title.update(heading, layout=False)  # one fixed row
        elif isinstance(event, PartDelta):
            pane.append(event.text)
        elif isinstance(event, PartFinished):
            if pane.text != event.text:
                pane.set_text(event.text)
            else:
                pane.flush()
            heading.append(f" · done in {event.seconds:.1f} s", style="green")
            if event.requests > 1:
                heading.append(f" · {event.requests} requests", style="dim")
            if event.part in self.cut_parts:
                heading.append(" · ⚠ cut to fit (see warnings)", style="bold yellow")
            title.update(heading, layout=False)  # one fixed row
        elif isinstance(event, PartFailed):
            pane.flush()
            if event.cancelled:
                heading.append(" · cancelled", style="yellow")
            else:
                heading.append(" · failed: ", style="red")
                heading.append(sanitize(event.error, single_line=True, max_len=100), style="red")
            title.update(heading, layout=False)  # one fixed row

    def show_result(self, result: CompactionResult) -> None:
        """Show the audit of a finished run, and what stands for a part the summarizer was
        not asked for (its pane said "waiting for the summarizer…" for ever): the text the
        entry carries in its place (``No prior history.``), or that the method writes none."""
        self._audit.update(format_audit(result))
        made = {
            "history": result.history_summary,
            "turn_prefix": result.turn_prefix_summary,
            "short": result.short_summary,
        }
        for part, pane in self.panes.items():
            if part in self.asked_parts:
                continue
            heading = Text(PART_TITLES[part])
            text = made.get(part)
            if text:
                heading.append(" · nothing to summarize; the entry says:", style="dim")
                pane.set_text(text)
            else:
                heading.append(" · none", style="dim")
                pane.placeholder = f"the {result.method} method writes none"
                pane.clear()
            self.part_titles[part].update(heading, layout=False)

    def fit_audit(self, short: bool) -> None:
        """At most ``AUDIT_ROWS_SHORT`` rows of audit when the panel is short, else the CSS's.

        Set on the audit itself: a class on the panel would make Textual match the CSS again
        for all of its ~50 widgets, in the frame that shows the panel.
        """
        if short != self._audit_short:
            self._audit_short = short
            self._audit.styles.max_height = AUDIT_ROWS_SHORT if short else None


class CompactionPanel(Vertical, can_focus=True):
    """Run one compaction (or several candidates) and let the user accept one result.

    Its keys are the app's review keys (``ui/review.py``: ``a`` accept, ``d`` discard, ``g`` /
    ``G`` regenerate, ``v`` diff, ``1``-``9`` a candidate, ``escape`` cancel), bound in one
    place and answering wherever the focus is; they call the public methods below. The panel
    binds none of its own: with the focus in it, a digit with no such candidate would have
    done nothing instead of showing its tab, and ``escape`` cancelled only the panel's runs.
    """

    DEFAULT_CSS = """
    CompactionPanel {
        height: 1fr;
    }
    CompactionPanel > #compaction-header {
        height: auto;
        padding: 0 1;
    }
    CompactionPanel > #compaction-readonly {
        height: auto;
        padding: 0 1;
    }
    CompactionPanel > #compaction-candidates {
        height: 1fr;
    }
    CompactionPanel > #compaction-diff {
        height: 1fr;
        display: none;
        border: round $accent;
    }
    CompactionPanel.-diff > #compaction-diff {
        display: block;
    }
    CompactionPanel.-diff > #compaction-candidates {
        display: none;
    }
    CompactionPanel > #compaction-buttons {
        height: auto;
        padding: 0 1;
    }
    CompactionPanel > #compaction-buttons Button {
        margin-right: 1;
        min-width: 0;
        width: auto;
    }
    """

    state: reactive[str] = reactive("running")
    """``running``, ``ready`` (a result can be accepted), ``failed``, ``accepted``,
    ``discarded`` or ``cancelled``."""

    class Accepted(Message):
        """The user accepted ``result`` of ``job``; the app proposes and applies it
        (``workbench.actions``)."""

        def __init__(
            self, panel: CompactionPanel, job: CompactionJob, result: CompactionResult
        ) -> None:
            super().__init__()
            self.panel = panel
            self.job = job
            self.result = result

        @property
        def control(self) -> CompactionPanel:
            """The panel that sent this message."""
            return self.panel

    class Discarded(Message):
        """The user discarded the results (or cancelled the run); nothing was written."""

        def __init__(self, panel: CompactionPanel, *, cancelled: bool = False) -> None:
            super().__init__()
            self.panel = panel
            self.cancelled = cancelled

        @property
        def control(self) -> CompactionPanel:
            """The panel that sent this message."""
            return self.panel

    class Failed(Message):
        """No candidate produced a result; ``error`` says why (first failure)."""

        def __init__(self, panel: CompactionPanel, error: str) -> None:
            super().__init__()
            self.panel = panel
            self.error = error

        @property
        def control(self) -> CompactionPanel:
            """The panel that sent this message."""
            return self.panel

    def __init__(
        self,
        jobs: CompactionJob | Sequence[CompactionJob],
        *,
        labels: Sequence[str] | None = None,
        autostart: bool = True,
        write_refusal: Callable[[], str | None] | None = None,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's parameter name
        classes: str | None = None,
    ) -> None:
        """Args:
        jobs: one job, or several candidates built on the same plan.
        labels: a name per job (default: the summarizer label, plus ``+ instructions``).
        autostart: start the runs when mounted (else call ``start()``).
        write_refusal: the session's one write gate, asked each time: why a result could not
            be written now (``Session.append_refusal``: a file that is read-only, or gone
            since the review opened), None when it could. While it refuses, the runs and the
            review work and Accept is disabled with the reason (``gate_changed``).
        """
        super().__init__(name=name, id=id, classes=classes)
        self.jobs: list[CompactionJob] = [jobs] if isinstance(jobs, CompactionJob) else list(jobs)
        if not self.jobs:
            raise ValueError("CompactionPanel needs at least one CompactionJob")
        self.labels = list(labels) if labels is not None else [_job_label(j) for j in self.jobs]
        self.autostart = autostart
        self._write_refusal = write_refusal
        self.selected = 0
        """Index of the candidate ``accept`` takes."""
        self.candidates: list[CandidateView] = []
        self._workers: dict[int, Worker[None]] = {}
        self._announced = False
        self._user_selected = False

    @property
    def accept_refusal(self) -> str | None:
        """Why the write gate refuses a result now (the button, ``a`` and quit read it)."""
        return self._write_refusal() if self._write_refusal is not None else None

    def gate_changed(self) -> None:
        """The write gate's answer may have changed: the notice and the buttons follow it."""
        if not self.is_attached:
            return
        self._show_refusal()
        self._update_buttons()

    def _refusal_notice(self) -> Text | None:
        """The read-only notice above the candidates while the gate refuses, else None."""
        refusal = self.accept_refusal
        if not refusal:
            return None
        notice = Text("read-only: review only, Accept is disabled — ", style="bold yellow")
        notice.append(sanitize(refusal, single_line=True, max_len=200))
        return notice

    def _show_refusal(self) -> None:
        """Show the read-only notice while the gate refuses, hide it when it no longer does."""
        shown = self.query_one("#compaction-readonly", Static)
        notice = self._refusal_notice()
        shown.display = notice is not None
        if notice is not None:
            shown.update(notice)

    @property
    def plan(self) -> Any:
        """The compaction plan every candidate summarizes."""
        return self.jobs[0].plan

    @property
    def running(self) -> bool:
        """True while any candidate still runs."""
        return any(view.state.status == "running" for view in self.candidates)

    @property
    def selected_result(self) -> CompactionResult | None:
        """The result ``accept`` would take, if the selected candidate has one."""
        if not self.candidates:
            return None
        return self.candidates[self.selected].state.result

    def compose(self) -> ComposeResult:
        """Header, candidate views, buttons."""
        plan = self.plan
        split = summarizes_turn_prefix(plan)
        stacked = len(self.jobs) > 1
        yield Static(self._header_text(), id="compaction-header")
        notice = self._refusal_notice()
        shown = Static(notice or "", id="compaction-readonly")
        shown.display = notice is not None
        yield shown
        with Horizontal(id="compaction-candidates"):
            for number, (job, label) in enumerate(zip(self.jobs, self.labels, strict=True), 1):
                view = CandidateView(job, label, number=number, stacked=stacked, split=split)
                self.candidates.append(view)
                yield view
        yield SummaryDiff(id="compaction-diff")
        with Horizontal(id="compaction-buttons"):
            yield Button(
                "Accept a", id="compaction-accept", variant="success", disabled=True, compact=True
            )
            yield Button("Discard d", id="compaction-discard", variant="error", compact=True)
            yield Button("Regenerate g", id="compaction-regenerate", disabled=True, compact=True)
            yield Button(
                "Keep missing G", id="compaction-regenerate-focus", disabled=True, compact=True
            )
            yield Button("Cancel esc", id="compaction-cancel", compact=True)
            yield Button("Diff v", id="compaction-toggle-diff", disabled=True, compact=True)

    def _header_text(self) -> Text:
        """What is being compacted: tokens before, per region, split turn, tokens after."""
        plan = self.plan
        regions = getattr(plan, "region_tokens", {}) or {}
        text = Text("Compaction ", style="bold")
        text.append(f"{getattr(plan, 'tokens_before', 0):,} tokens before", style="")
        text.append(f" · summarize {regions.get('summarize', 0):,}", style="dim")
        if summarizes_turn_prefix(plan):
            text.append(f" · turn prefix {regions.get('turn_prefix', 0):,}", style="dim")
            text.append(" · split turn", style="yellow")
        text.append(f" · keep {regions.get('keep', 0):,}", style="dim")
        tokens_after = getattr(plan, "tokens_after", None)
        if isinstance(tokens_after, int):
            text.append(f" · ≈{tokens_after:,} after", style="")
        if len(self.jobs) > 1:
            text.append(f"  ·  {len(self.jobs)} candidates", style="bold magenta")
        return text

    def on_resize(self) -> None:
        """Side by side where there is room, stacked where there is not (or with candidates)."""
        stacked = len(self.jobs) > 1 or self.size.width < STACK_BELOW
        short = self.size.height < SHORT_BELOW
        for view in self.candidates:
            view.set_class(stacked, "-stacked")
            view.fit_audit(short)

    def watch_state(self) -> None:
        """The keys that make sense changed (the app's footer follows the state)."""
        if self.is_mounted:
            self.app.refresh_bindings()

    def on_mount(self) -> None:
        """Start the shared flush timer and every candidate (unless ``autostart`` is off), and
        fill the candidates' panes in on the next frames."""
        self._mark_selected()
        self.set_interval(1 / FLUSH_HZ, self.flush_panes)
        if self.autostart:
            self.start()
        self._mount_bodies()

    @work(group="compaction-panes", exit_on_error=False)
    async def _mount_bodies(self) -> None:
        """Mount each candidate's panes and audit, one candidate a frame, after the frame that
        shows the panel: all at once they are ~35 more widgets to style, lay out and draw in
        that one frame (~35 ms of UI CPU with three candidates on the 100k session)."""
        for view in self.candidates:
            drawn = asyncio.Event()
            self.call_after_refresh(drawn.set)
            await drawn.wait()
            if not self.is_attached:
                return
            await view.mount_body()

    def on_unmount(self) -> None:
        """A panel that goes away takes its requests in flight with it (finished jobs stay
        acceptable: the app may remove the panel before it appends)."""
        for view in self.candidates:
            if view.state.status == "running":
                view.job.cancel()

    def start(self) -> None:
        """Run every candidate that is not running yet."""
        for number, view in enumerate(self.candidates):
            if view.state.status != "running":
                self._run(number, focus=False, regenerate=False)

    def _run(self, number: int, *, focus: bool, regenerate: bool) -> None:
        """Start candidate ``number`` in an async worker."""
        view = self.candidates[number]
        view.reset_for_run()
        view.state.status = "running"
        view.state.error = None
        view.state.result = None
        view.state.seconds = None
        view.state.runs += 1
        view.state.started = time.monotonic()
        view.refresh_title()
        self.state = "running"
        self._announced = False
        self._workers[number] = self.run_worker(
            self._run_candidate(number, focus=focus, regenerate=regenerate),
            name=f"compaction-{number + 1}",
            group="compaction",
            exit_on_error=False,
        )
        self._update_buttons()

    async def _run_candidate(self, number: int, *, focus: bool, regenerate: bool) -> None:
        """Run one job (async worker on the app's loop), then report the outcome."""
        view = self.candidates[number]
        job = view.job
        try:
            if regenerate and focus:
                result = await job.regenerate(view.handle_event)
            else:
                result = await job.run(view.handle_event)
        except CompactionCancelled:
            view.state.status = "cancelled"
        except asyncio.CancelledError:
            # The worker itself was cancelled (e.g. the app cancelled the "compaction" group):
            # stop the job's requests too and report it like escape would.
            job.cancel()
            view.state.status = "cancelled"
            view.refresh_title()
            if not self.running and self.state not in ("accepted", "discarded", "cancelled"):
                self.state = "cancelled"
                self._update_buttons()
                self.post_message(self.Discarded(self, cancelled=True))
            raise
        except Exception as error:  # noqa: BLE001 - any failure becomes a visible state
            view.state.status = "failed"
            view.state.error = str(error) or type(error).__name__
        else:
            view.state.status = "done"
            view.state.result = result
            view.state.seconds = result.seconds.get("total")
            view.show_result(result)
        for pane in view.panes.values():
            pane.flush()
        view.refresh_title()
        self._after_candidate()

    def _after_candidate(self) -> None:
        """When the last candidate finishes: pick the best, update the state, notify."""
        if self.running or self.state in ("accepted", "discarded", "cancelled"):
            self._update_buttons()
            return
        finished = [view for view in self.candidates if view.state.result is not None]
        if finished:
            best = max(
                finished,
                key=lambda v: (v.state.result.audit.coverage, -(v.state.seconds or 0.0)),  # type: ignore[union-attr]
            )
            # The best candidate is pre-selected until the user picks one themselves.
            if not self._user_selected or self.selected_result is None:
                self.selected = self.candidates.index(best)
            self._mark_selected()
            self.state = "ready"
        else:
            self.state = "failed"
            errors = [v.state.error for v in self.candidates if v.state.error]
            if errors and not self._announced:
                self._announced = True
                self.post_message(self.Failed(self, errors[0]))
        self._update_buttons()

    def flush_panes(self) -> None:
        """Draw what every pane buffered since the last tick, as one screen update."""
        panes = [pane for view in self.candidates for pane in view.panes.values()]
        if not any(pane.has_pending for pane in panes):
            return
        with self.app.batch_update():
            for pane in panes:
                pane.flush()

    def _mark_selected(self) -> None:
        """Highlight the selected candidate (only meaningful with several)."""
        for number, view in enumerate(self.candidates):
            view.set_class(len(self.candidates) > 1 and number == self.selected, "-selected")

    def _update_buttons(self) -> None:
        """Enable what makes sense now."""
        if not self.is_attached:  # removed (its runs cancelled): no buttons to update
            return
        finished = self.state in ("accepted", "discarded", "cancelled")
        accept_button = self.query_one("#compaction-accept", Button)
        refusal = self.why_not_accept()
        accept_button.disabled = refusal is not None
        accept_button.tooltip = refusal
        can_rerun = not self.running and not finished
        self.query_one("#compaction-regenerate", Button).disabled = not can_rerun
        missing = self.selected_result is not None and bool(self.selected_result.audit.missing)
        self.query_one("#compaction-regenerate-focus", Button).disabled = not (
            can_rerun and missing
        )
        # Offered only while something can be cancelled (esc on a finished review discards).
        self.query_one("#compaction-cancel", Button).display = self.running
        self.query_one("#compaction-toggle-diff", Button).disabled = self.selected_result is None
        self.query_one("#compaction-discard", Button).disabled = finished

    # -- actions (also the app's API) -------------------------------------------------------
    def why_not_accept(self) -> str | None:
        """Why ``accept`` cannot take a result now, as the user reads it; None when it can."""
        refusal = self.accept_refusal
        if refusal:
            return "read-only: " + sanitize(refusal, single_line=True, max_len=200)
        if self.running:
            return (
                f"the summary is still streaming: {key_of(self, 'accept')} accepts once it is "
                f"done ({key_of(self, 'cancel')} cancels)"
            )
        if self.state == "accepted":
            return "already accepted"
        if self.state in ("discarded", "cancelled"):
            return f"this compaction was {self.state}: {key_of(self, 'compact')} runs it again"
        if self.selected_result is None:
            return f"no summary to accept: {key_of(self, 'regenerate')} regenerates"
        return None

    def accept(self) -> bool:
        """Post ``Accepted`` for the selected candidate's result; False (and say why) if the
        result cannot be accepted now."""
        result = self.selected_result
        reason = self.why_not_accept()
        if result is None or reason is not None:
            self.app.bell()
            self.notify(
                reason or "nothing to accept", title="cannot accept", timeout=4, severity="warning"
            )
            return False
        self.state = "accepted"
        self._update_buttons()
        self.post_message(self.Accepted(self, self.candidates[self.selected].job, result))
        return True

    def discard(self) -> None:
        """Drop every result (cancelling runs in flight) and post ``Discarded``."""
        if self.state in ("accepted", "discarded", "cancelled"):
            return
        was_running = self.running
        self._cancel_jobs()
        self.state = "cancelled" if was_running else "discarded"
        self._update_buttons()
        self.post_message(self.Discarded(self, cancelled=was_running))

    def cancel(self) -> None:
        """Stop everything in flight; nothing is written. Same as ``discard``."""
        self.discard()

    def regenerate(self, with_missing: bool = False) -> bool:
        """Run the selected candidate again; ``with_missing`` adds the audit's missing anchors
        to its instructions. False when it cannot run now."""
        reason = None
        if self.running:
            reason = f"a summary is still streaming: {key_of(self, 'cancel')} cancels it first"
        elif self.state in ("accepted", "discarded", "cancelled"):
            reason = f"this compaction was {self.state}: {key_of(self, 'compact')} runs it again"
        view = self.candidates[self.selected]
        if (
            reason is None
            and with_missing
            and (view.state.result is None or not view.state.result.audit.missing)
        ):
            reason = f"the audit found nothing missing: {key_of(self, 'regenerate')} regenerates"
        if reason is not None:
            self.app.bell()
            self.notify(reason, title="cannot regenerate", timeout=4, severity="warning")
            return False
        self._run(self.selected, focus=with_missing, regenerate=True)
        return True

    def reopen(self) -> None:
        """Make an accepted result acceptable again (the app's append was refused or failed)."""
        if self.state == "accepted":
            self.state = "ready"
            self._update_buttons()

    def select(self, number: int) -> None:
        """Select candidate ``number`` (1-based) for ``accept``."""
        if 1 <= number <= len(self.candidates):
            self.selected = number - 1
            self._user_selected = True
            self._mark_selected()
            self._update_buttons()

    def _cancel_jobs(self) -> None:
        for number, view in enumerate(self.candidates):
            if view.state.status == "running":
                view.job.cancel()
                worker = self._workers.get(number)
                if worker is not None and not worker.is_finished:
                    worker.cancel()
                view.state.status = "cancelled"
                view.refresh_title()

    @property
    def showing_diff(self) -> bool:
        """True while the diff view replaces the candidates."""
        return self.has_class("-diff")

    def toggle_diff(self) -> bool:
        """Show (or hide) the selected result's summary against the previous summary."""
        if self.showing_diff:
            self.remove_class("-diff")
            return True
        result = self.selected_result
        if result is None:
            self.app.bell()
            return False
        previous = getattr(self.plan, "previous_summary", None) or ""
        self.query_one("#compaction-diff", SummaryDiff).show(previous, result.summary)
        self.add_class("-diff")
        return True

    @on(Button.Pressed, "#compaction-accept")
    def _accept_pressed(self) -> None:
        self.accept()

    @on(Button.Pressed, "#compaction-discard")
    def _discard_pressed(self) -> None:
        self.discard()

    @on(Button.Pressed, "#compaction-cancel")
    def _cancel_pressed(self) -> None:
        self.cancel()

    @on(Button.Pressed, "#compaction-regenerate")
    def _regenerate_pressed(self) -> None:
        self.regenerate(False)

    @on(Button.Pressed, "#compaction-toggle-diff")
    def _diff_pressed(self) -> None:
        self.toggle_diff()

    @on(Button.Pressed, "#compaction-regenerate-focus")
    def _regenerate_focus_pressed(self) -> None:
        self.regenerate(True)

    def on_click(self, event: Any) -> None:
        """Clicking a candidate selects it."""
        widget = getattr(event, "widget", None)
        while widget is not None and not isinstance(widget, CandidateView):
            widget = widget.parent
        if isinstance(widget, CandidateView) and widget in self.candidates:
            self.select(self.candidates.index(widget) + 1)


def summarizes_turn_prefix(plan: Any) -> bool:
    """The plan cuts a turn after its start, so the turn's prefix gets a summary (and a pane).

    A cut that itself starts a turn is "split" in pi's terms but has no prefix: the header must
    not call it a split turn (the plan pane says the same through ``has_turn_prefix``).
    """
    return bool(getattr(plan, "has_turn_prefix", False) and plan.turn_prefix_messages)


def _job_label(job: CompactionJob) -> str:
    """A candidate's default name: the summarizer label, noting custom instructions."""
    label = str(getattr(job.summarizer, "label", "summarizer"))
    if job.instructions:
        label += " + instructions"
    return label
