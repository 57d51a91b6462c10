"""The plan pane: where compaction would cut at the selected leaf and what it would summarize.

The tree colours each entry by region (summarize / turn prefix / keep / metadata); this pane
gives the legend, the tokens per region, the split-turn flag, the tokens after, the cut point's
place among the valid ones, and the budget editor: keep-recent, reserve and window, then the
rest of the seeds' settings (compaction threshold as percent or tokens, whether a cut may
split a turn, branch summaries: ask when navigating and their reserve, the summarizer's
reasoning effort and its own window). Edits re-plan as the user types (debounced by the app,
planned in a worker). Under the sweep, each setting it depends on with where its value came
from (default, config file, variable, flag, edited in the app), as ``plan`` prints them. The
last rows set how the next compaction is written: the method (``soft`` summaries or a
``handoff`` document) and a free-text focus, added to the default prompt or replacing it (the
CLI's ``--instructions`` / ``--replace-instructions``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from rich.console import RenderableType
from rich.styled import Styled
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Checkbox, Input, Label, Select, Static

from tui_compactor.textsafe import sanitize
from tui_compactor.ui.bindings import focus_input, key_of
from tui_compactor.ui.widgets.labels import format_tokens
from tui_compactor.ui.widgets.redraw import (
    InlineInput,
    LaidOutOnce,
    PaneText,
    RenderedOnce,
    update_static,
)
from tui_compactor.wording import count_of
from tui_compactor.workbench.settings import PLAN_SETTINGS

REGION_LEGEND: list[tuple[str, str, str]] = [
    ("summarize", "S", "summarized"),
    ("turn_prefix", "P", "turn prefix (summarized apart)"),
    ("keep", "K", "kept verbatim"),
    ("metadata", "·", "metadata (not sent)"),
]
"""Region key -> mark in the tree's plan column -> what it means."""


PLAN_ROWS = 16
"""Rows a plan's description takes at most at the usual widths (a split turn's note wrapped,
the previous summary's line): reserved while the first one is made, so that the plans of the
other valid cuts (``[`` / ``]``, a line longer or shorter) repaint the pane instead of
re-laying out the screen until the pane gives the rows back (``redraw.SHRINK_AFTER``)."""

NEIGHBOUR_CUTS = 2
"""Valid cuts listed on each side of the planned one (the ones ``[`` and ``]`` reach)."""

SWEEP_DEPENDENCIES_SHOWN = 8
"""Dependencies crossing the planned cut listed under the sweep (the rest are counted)."""

SWEEP_ROWS = 3 + 1 + (2 + 2 * NEIGHBOUR_CUTS) + 2 + SWEEP_DEPENDENCIES_SHOWN + 1
"""Rows the sweep takes at most at the plan pane's usual widths: its title and sparklines,
the planned cut, the cuts within reach, the fewer crossings (wrapped once), the dependencies
listed and their count. Reserved while the first one is made."""

SOURCE_ROWS = 2 + len(PLAN_SETTINGS)
"""Rows where the plan's settings came from take (``settings_text``: a title, a row each, one
of them wrapped), reserved while the first plan is made."""

EFFORTS = ("profile", "off", "minimal", "low", "medium", "high", "xhigh")
"""Reasoning effort choices for summary calls (``profile``: the profile's own setting)."""

MORE_INPUTS = (
    "plan-threshold-percent",
    "plan-threshold-tokens",
    "plan-branch-reserve",
    "plan-summary-window",
)


def _figure_or_none(text: str) -> float | None:
    """Parse a token figure the user typed (``20000``, ``20k``, ``1.5M``, ``1500.5``) as it
    reads; None if blank."""
    from tui_compactor.wording import token_figure

    cleaned = text.strip().replace(",", "")  # thousands: 1,500 (the flags list with commas)
    if not cleaned:
        return None
    value = token_figure(cleaned)
    if value < 0:
        raise ValueError("must not be negative")
    return value


def _int_or_none(text: str) -> int | None:
    """``_figure_or_none`` as a whole number of tokens."""
    value = _figure_or_none(text)
    return None if value is None else int(value)


def form_values(settings: Any) -> tuple[dict[str, str], dict[str, bool], str, str | None]:
    """What the form shows for ``settings`` (a ``workbench.Settings``): input id -> text,
    checkbox id -> flag, the summary effort, and the reserve input's placeholder: the figure a
    reserve left to its default stands for (the gauge's), when the window is known."""
    from tui_compactor.engine.settings import effective_reserve
    from tui_compactor.workbench.settings import number_text

    def figure(value: int | None) -> str:
        return "" if value is None else str(value)

    def number(value: Any) -> str:
        return "" if value is None or value <= 0 else number_text(value)

    texts = {
        "plan-keep": figure(settings.keep_recent_tokens),
        "plan-reserve": figure(settings.reserve_tokens),
        "plan-window": figure(settings.context_window),
        "plan-threshold-percent": number(settings.threshold_percent),
        "plan-threshold-tokens": number(settings.threshold_tokens),
        "plan-branch-reserve": str(settings.branch_summary_reserve_tokens),
        "plan-summary-window": number(settings.summary_window),
    }
    flags = {"plan-split-turns": bool(settings.split_turns),
             "plan-branch-ask": bool(settings.branch_summary_enabled)}  # fmt: skip
    reserve_hint = None
    if settings.context_window:
        compaction = settings.compaction().with_changes(reserve_tokens=None)
        reserve_hint = str(effective_reserve(settings.context_window, compaction))
    return texts, flags, settings.summary_reasoning_effort or "profile", reserve_hint


def plan_summary(
    plan: Any,
    session: Any,
    region_styles: dict[str, str],
    refusal: str | None = None,
    notes: list[str] | None = None,
) -> Text:
    """The plan in a few readable lines; ``refusal`` says why it cannot be run, if so."""
    out = Text()
    leaf_entry = session.entries[plan.leaf] if plan.leaf is not None else None
    leaf_id = sanitize(str(leaf_entry.id), single_line=True, max_len=40) if leaf_entry else "?"
    out.append(f"Plan for leaf #{plan.leaf} ({leaf_id})\n", style="bold")
    if not plan.prepared:
        out.append("nothing to compact: ", style="bold yellow")
        out.append(sanitize(str(plan.reason or "no reason given"), max_len=300))
        if plan.effective_keep_recent_tokens != plan.keep_recent_tokens:
            out.append(f"\n{plan.keep_recent_text}", style="dim")  # as ``plan`` heads it
        nearest = getattr(plan, "nearest_cut_points", None) or []
        if nearest:
            shown = ", ".join(f"#{plan.branch[i]}" for i in nearest[:6] if i < len(plan.branch))
            out.append(f"\nnearest valid cut points: {shown}", style="dim")
        out.append("\n")
        return out
    regions = plan.region_tokens
    counts = {
        "summarize": len(plan.messages_to_summarize),
        "turn_prefix": len(plan.turn_prefix_messages),
        "keep": len(plan.recent_messages),
    }
    for key, mark, meaning in REGION_LEGEND:
        out.append(f" {mark} ", style=region_styles.get(key, ""))
        out.append(f" {meaning}")
        if key in regions:
            out.append(
                f": {count_of(counts.get(key, 0), 'msg')}, {format_tokens(regions[key])} tokens",
                style="bold",
            )
        out.append("\n")
    out.append(
        f"tokens {format_tokens(plan.tokens_before)} → ~{format_tokens(plan.tokens_after)}"
        " after (summary not counted)\n",
        style="bold",
    )
    if plan.effective_keep_recent_tokens != plan.keep_recent_tokens:
        out.append(f"{plan.keep_recent_text}\n", style="dim")
    cut_entry = plan.branch[plan.first_kept_index]
    cuts = list(plan.valid_cut_points)
    place = cuts.index(plan.first_kept_index) + 1 if plan.first_kept_index in cuts else "?"
    out.append(f"cut before #{cut_entry} · valid cut {place} of {len(cuts)}  ")
    out.append("[ earlier  ] later\n", style="dim")
    if plan.is_split_turn and plan.has_turn_prefix:
        turn_entry = plan.branch[plan.turn_start_index]
        count = len(plan.turn_prefix_messages)
        before = (
            "1 message before the cut gets its"
            if count == 1
            else f"{count} messages before the cut get their"
        )
        out.append(
            f"split turn: the turn starting at #{turn_entry} is cut in the middle; its "
            f"{before} own summary\n",
            style="yellow",
        )
    elif plan.is_split_turn:
        out.append(f"{plan.split_turn_note}\n", style="dim")
    else:
        out.append("no split turn: the cut falls on a turn boundary\n", style="dim")
    if plan.previous_summary:
        out.append("updates the previous compaction's summary\n", style="dim")
    for note in notes or []:
        out.append(f"{sanitize(note, max_len=300)}\n", style="yellow")
    try:
        files = plan.file_ops.to_json()
        read, edited = len(files["readFiles"]), len(files["modifiedFiles"])
    except Exception:  # file lists are a convenience; never let them hide the plan
        read = edited = 0
    out.append(f"files: {read} read, {edited} modified\n", style="dim")
    if refusal is not None:
        out.append("cannot run: ", style="bold red")
        out.append(sanitize(refusal, max_len=400))
    else:
        out.append(
            "r runs the compaction (offline or the configured profile); below: method "
            "and focus; i shows its requests",
            style="dim",
        )
    return out


def settings_text(items: list[tuple[str, str, str]]) -> Text:
    """Where each setting the plan depends on came from, a row each under the sweep:
    ``keep-recent 20000 · from config file PATH`` (``items``: ``Settings.plan_source_items``,
    the same rows ``plan`` prints under ``settings``)."""
    from tui_compactor.workbench.settings import source_phrase

    out = Text()
    out.append("settings", style="bold")
    for label, value, source in items:
        out.append(f"\n{label} {value}")
        out.append(f" · {sanitize(source_phrase(source), single_line=True)}", style="dim")
    return out


class FormHint(PaneText, can_focus=True):
    """Where the plan pane's form goes until it is made: a line saying how to reach it. Given
    the focus (tab, a click), it makes the form and hands the focus to the form's first
    field."""

    DEFAULT_CSS = """
    FormHint { height: auto; margin-top: 1; }
    FormHint:focus { background: $accent 30%; }
    """

    def on_focus(self) -> None:
        """Make the form; its first field takes the focus."""
        view = self.parent
        if isinstance(view, PlanView):
            view.focus_inputs()


class PlanView(LaidOutOnce, VerticalScroll):
    """Plan summary plus in-place budget inputs."""

    DEFAULT_CSS = """
    PlanView { padding: 0 1; }
    PlanView > #plan-text { height: auto; }
    PlanView > #plan-sweep { height: auto; margin-top: 1; }
    PlanView > #plan-sources { height: auto; margin-top: 1; }
    PlanView > #plan-inputs { height: auto; margin-top: 1; }
    PlanView #plan-inputs > Label { width: auto; padding: 0 1 0 0; }
    PlanView #plan-inputs > Input { width: 10; height: 1; border: none; padding: 0 1;
                                    margin-right: 2; background: $boost; }
    PlanView #plan-inputs > Input:focus { background: $accent 30%; }
    PlanView > .plan-row { height: auto; }
    PlanView > #plan-thresholds { margin-top: 1; }
    PlanView .plan-row > Label { width: auto; padding: 0 1 0 0; }
    PlanView .plan-row > Input { width: 10; height: 1; border: none; padding: 0 1;
                                 margin-right: 2; background: $boost; }
    PlanView .plan-row > Input:focus { background: $accent 30%; }
    PlanView .plan-row > Checkbox { width: auto; height: 1; border: none; padding: 0 1; }
    PlanView .plan-row > Select { width: 14; margin-right: 2; }
    PlanView > #plan-options { height: auto; margin-top: 1; }
    PlanView #plan-options > Label { width: auto; padding: 0 1 0 0; }
    PlanView #plan-options > Select { width: 14; margin-right: 2; }
    PlanView #plan-options > Checkbox { width: auto; height: 1; border: none; padding: 0 1; }
    PlanView > #plan-focus-row { height: auto; margin-top: 1; }
    PlanView #plan-focus-row > Label { width: auto; padding: 0 1 0 0; }
    PlanView #plan-focus-row > Input { width: 1fr; height: 1; border: none; padding: 0 1;
                                       background: $boost; }
    PlanView #plan-focus-row > Input:focus { background: $accent 30%; }
    PlanView.-stacked #plan-inputs, PlanView.-stacked .plan-row, PlanView.-stacked #plan-options {
        layout: grid; grid-size: 2; grid-columns: auto 1fr; grid-rows: auto; }
    PlanView.-stacked #plan-flags, PlanView.-stacked #plan-options { grid-size: 1; }
    """

    STACK_BELOW = 58
    """Below this width a row's fields no longer fit side by side: each label and its field
    get a line of their own (at 80 columns the side pane is ~40 wide)."""

    class MoreSettingsEdited(Message):
        """The user changed one of the further settings (``changes``: field -> value)."""

        def __init__(self, changes: dict[str, Any]) -> None:
            super().__init__()
            self.changes = changes

    class OptionsEdited(Message):
        """The user changed the method or the focus of the next compaction."""

        def __init__(self, method: str, focus: str, replace: bool) -> None:
            super().__init__()
            self.method = method
            self.focus = focus
            self.replace = replace

    class SettingsEdited(Message):
        """The user changed keep-recent / reserve / window (already parsed)."""

        def __init__(self, keep_recent: int, reserve: int | None, window: int | None) -> None:
            super().__init__()
            self.keep_recent = keep_recent
            self.reserve = reserve
            self.window = window

    def __init__(
        self,
        settings: Any = None,
        *,
        planning: bool = False,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self._first_plan_on_its_way = planning
        """Rows are (or are about to be) reserved for the first plan (``show_planning``): the
        place of the form is not where it will be once the plan is shown (``planning``: the
        pane is built for a plan asked already)."""
        self._sweep_on_its_way = False
        """A sweep is being made (``show_sweeping``): its rows may be given back before it
        comes (``redraw.SHRINK_AFTER``), which does not leave the form's place where it will
        be."""
        self._settings = settings
        """The settings the form is made with (None: blank until ``show_settings``)."""
        self._fields: dict[str, Input | Checkbox | Select[str]] = {}
        """The form's inputs, by id, once made (each row is made as it is mounted)."""
        self._row_makers: list[Callable[[], Horizontal]] = []
        """What makes each of the form's rows while the form is not made (``_form_rows``)."""

    plan_text: Text | None = None
    """The plan drawn last (kept, dimmed, while the next one is being made)."""
    sweep: RenderableType | None = None
    """The cut sweep drawn last (kept, dimmed, while the next one is being made)."""
    _sweep_drawn: RenderedOnce = RenderedOnce(Text())
    """``sweep`` as drawn: laid out once per width."""

    def compose(self) -> ComposeResult:
        """The plan's text, its sweep and where its settings came from (the sweep first: it
        is what a user moving the cut looks at); below them, until the form is made, a line
        saying how to reach it (``FormHint``)."""
        yield PaneText(
            Text(
                f"press {key_of(self, 'plan')} for the compaction plan of the selected node",
                style="dim",
            ),
            id="plan-text",
        )
        yield PaneText(id="plan-sweep")
        yield PaneText(id="plan-sources")
        yield FormHint(
            Text("e or tab: edit these settings, the method and the focus", style="dim"),
            id="plan-form-hint",
        )

    def on_resize(self, event: events.Resize) -> None:
        """Stack the form's fields on a narrow pane (``STACK_BELOW``)."""
        self.set_class(event.size.width < self.STACK_BELOW, "-stacked")

    def on_mount(self) -> None:
        """Make the form when its place first comes into view (checked after each layout or
        scroll of the screen), or when the user goes to it (``focus_inputs``, ``FormHint``).

        The form is ~40 widgets: mounting them is a few layouts of the whole screen (10-20 ms
        of the UI thread each, more for their first paint); made while a plan is shown they
        stalled every frame of it, though at the usual heights they lie below the plan, its
        sweep and its settings, out of view."""
        self._row_makers = self._form_rows()
        self.screen.screen_layout_refresh_signal.subscribe(self, self._mount_form_in_view)

    def _mount_form_in_view(self, _screen: object = None) -> None:
        """Make and mount the form if its place shows on screen."""
        if not self._row_makers or self._first_plan_on_its_way or self._sweep_on_its_way:
            return
        hints = self.query(FormHint)
        if not hints:
            return
        try:
            geometry = self.screen.find_widget(hints.first())
        except Exception:  # not arranged: the tab is hidden or the pane not laid out yet
            return
        if geometry.visible_region:
            self._mount_form_now()

    def _mount_form_now(self) -> None:
        """Make and mount the form in place of its hint, all rows at once (one batch: a
        few layouts instead of one per row)."""
        makers, self._row_makers = self._row_makers, []
        if not makers:
            return
        hints = self.query(FormHint)
        rows = [self._make_row(make) for make in makers]
        if hints:
            hint = hints.first()
            self.mount_all(rows, before=hint)
            hint.remove()
        else:
            self.mount_all(rows)

    def _make_row(self, make: Callable[[], Horizontal]) -> Horizontal:
        """One row of the form, made with its values: nothing it posts while made or mounted
        is an edit."""
        with self.prevent(Input.Changed, Checkbox.Changed, Select.Changed):
            return make()

    def _form_rows(self) -> list[Callable[[], Horizontal]]:
        """The form's rows, each made when it is mounted, showing the settings of that moment
        (``show_settings`` keeps them): filled in as they are made, not changed once shown
        (each change of a shown input re-measures it and lays the screen out again).
        ``_fields`` holds the inputs made so far by id."""
        fields = self._fields
        figures = r"[0-9kKmM.,_]*"

        def values() -> tuple[dict[str, str], dict[str, bool], str, str | None]:
            if self._settings is None:
                return {}, {}, self._effort_shown, None
            return form_values(self._settings)

        def field(texts: dict[str, str], widget_id: str, restrict: str,
                  placeholder: str = "") -> Input:  # fmt: skip
            made = InlineInput(texts.get(widget_id) or None, placeholder, id=widget_id,
                               restrict=restrict)  # fmt: skip
            fields[widget_id] = made
            return made

        def flag(
            flags: dict[str, bool], label: str, widget_id: str, value: bool = True
        ) -> Checkbox:
            made = Checkbox(label, flags.get(widget_id, value), id=widget_id, compact=True)
            fields[widget_id] = made
            return made

        def select(widget_id: str, options: list[tuple[str, str]], value: str) -> Select[str]:
            made: Select[str] = Select(options, value=value, allow_blank=False, id=widget_id,
                                       compact=True)  # fmt: skip
            fields[widget_id] = made
            return made

        def budget() -> Horizontal:
            texts, _flags, _effort, hint = values()
            return Horizontal(Label("keep"), field(texts, "plan-keep", figures),
                              Label("reserve"),
                              field(texts, "plan-reserve", figures, hint or "default"),
                              Label("window"), field(texts, "plan-window", figures),
                              id="plan-inputs")  # fmt: skip

        def thresholds() -> Horizontal:
            texts = values()[0]
            return Horizontal(Label("threshold %"),
                              field(texts, "plan-threshold-percent", r"[0-9.]*", "auto"),
                              Label("or tokens"),
                              field(texts, "plan-threshold-tokens", figures, "auto"),
                              id="plan-thresholds", classes="plan-row")  # fmt: skip

        def turn_flags() -> Horizontal:
            flags = values()[1]
            return Horizontal(flag(flags, "cut may split a turn", "plan-split-turns"),
                              flag(flags, "ask on navigate", "plan-branch-ask"),
                              id="plan-flags", classes="plan-row")  # fmt: skip

        def branch() -> Horizontal:
            texts = values()[0]
            return Horizontal(Label("branch reserve"),
                              field(texts, "plan-branch-reserve", figures),
                              Label("summary window"),
                              field(texts, "plan-summary-window", figures, "profile"),
                              id="plan-branch", classes="plan-row")  # fmt: skip

        def summarizer() -> Horizontal:
            self._effort_shown = values()[2]
            return Horizontal(Label("summary effort"),
                              select("plan-effort", [(name, name) for name in EFFORTS],
                                     self._effort_shown),
                              id="plan-summarizer", classes="plan-row")  # fmt: skip

        def method() -> Horizontal:
            return Horizontal(Label("method"),
                              select("plan-method", [("soft", "soft"), ("handoff", "handoff"),
                                                     ("shake (preview)", "shake")], "soft"),
                              flag({}, "focus replaces the prompt", "plan-replace", False),
                              id="plan-options")  # fmt: skip

        def focus() -> Horizontal:
            return Horizontal(Label("focus"),
                              field({}, "plan-focus", "", "what the summary must keep (optional)"),
                              id="plan-focus-row")  # fmt: skip

        return [budget, thresholds, turn_flags, branch, summarizer, method, focus]

    def show_settings(self, settings: Any) -> None:
        """Show the settings (a ``workbench.Settings``) without firing an edit; only what
        differs from what is shown is set (a row not mounted yet is set as it waits)."""
        self._settings = settings  # the rows not made yet are made with these
        texts, flags, effort, hint = form_values(settings)
        fields = self._fields
        for widget_id, text in texts.items():
            if widget_id in fields:
                _set_quietly(cast(Input, fields[widget_id]), text, Input.Changed)
        if "plan-reserve" in fields:  # as the row is made: the gauge's figure, else "default"
            cast(Input, fields["plan-reserve"]).placeholder = hint or "default"
        for widget_id, value in flags.items():
            if widget_id in fields:
                _set_quietly(cast(Checkbox, fields[widget_id]), value, Checkbox.Changed)
        if "plan-effort" in fields and effort != self._effort_shown:
            self._effort_shown = effort
            _set_quietly(cast("Select[str]", fields["plan-effort"]), effort, Select.Changed)

    def show_plan(self, text: Text, sources: Text) -> None:
        """Show a plan's description (``plan_summary``, made in the plan worker) and, under
        the sweep, where its settings came from (``settings_text``)."""
        self.plan_text = text
        self._first_plan_on_its_way = False
        update_static(self.query_one("#plan-text", Static), text, shrink=False)
        update_static(self.query_one("#plan-sources", Static), sources, shrink=False)

    def show_planning(self, text: str) -> None:
        """Say a new plan is being made. The last plan stays, dimmed, under ``text`` in place
        of its title line until the new one arrives: the pane keeps its height, so moving the
        cut repaints this pane only instead of re-laying out the screen. Before the first plan,
        rows are reserved for it, its sweep and its settings' sources (``PLAN_ROWS``,
        ``SWEEP_ROWS``, ``SOURCE_ROWS``) for the same reason: when they arrive, each is a
        repaint of its own rows."""
        shown = self.plan_text
        if shown is None:
            self._first_plan_on_its_way = True
            self.sweep = None
            update_static(
                self.query_one("#plan-text", Static),
                Text(text + "\n" * (PLAN_ROWS - 1), style="dim"),
                shrink=False,
            )
            update_static(
                self.query_one("#plan-sweep", Static), Text("\n" * (SWEEP_ROWS - 1)), shrink=False
            )
            update_static(
                self.query_one("#plan-sources", Static),
                Text("\n" * (SOURCE_ROWS - 1)),
                shrink=False,
            )
            self._scroll_bar_before_first_layout()
            return
        title_end = shown.plain.find("\n")
        rest = shown[title_end:] if title_end >= 0 else Text()
        rest.stylize("dim")
        update_static(
            self.query_one("#plan-text", Static),
            Text.assemble(Text(text, style="bold"), rest),
            shrink=False,
        )

    def _scroll_bar_before_first_layout(self) -> None:
        """Give the pane its scroll bar before its first layout when the rows kept for the
        first plan are more than the screen has (so more than the pane has): that layout
        then makes room for the bar, instead of a second layout of the whole screen (~15 ms
        of the UI thread on a big session) once the first finds the rows do not fit. The bar
        is the one the first layout would have shown; a pane laid out already is left to
        Textual."""
        if self.size.height or self.styles.overflow_y != "auto":
            return
        if self.app.size.height <= PLAN_ROWS + SWEEP_ROWS + SOURCE_ROWS:
            self.show_vertical_scrollbar = True

    def show_plan_failed(self, text: str) -> None:
        """Say the plan asked for will not come, as ``show_planning`` says one is being made
        (the last plan stays, dimmed): nothing is on its way, so the form's place is where it
        stays and the form is made once it shows."""
        self.show_planning(text)
        self._first_plan_on_its_way = False
        self.call_after_refresh(self._mount_form_in_view)

    def show_message(self, text: str) -> None:
        """Show a status line instead of a plan (no plan, or an error)."""
        self.plan_text = self.sweep = None
        self._first_plan_on_its_way = self._sweep_on_its_way = False
        update_static(self.query_one("#plan-text", Static), Text(text, style="dim"))
        update_static(self.query_one("#plan-sweep", Static), "")
        update_static(self.query_one("#plan-sources", Static), "")

    def show_sweep(self, sweep: RenderableType) -> None:
        """Show the sweep over every valid cut under the plan (rendered once per width: it is
        measured, painted, given back its reserved rows and dimmed while the next is made)."""
        self.sweep = sweep
        self._sweep_drawn = RenderedOnce(sweep)
        self._sweep_on_its_way = False
        update_static(self.query_one("#plan-sweep", Static), self._sweep_drawn, shrink=False)
        self.call_after_refresh(self._mount_form_in_view)

    def show_sweeping(self, text: str) -> None:
        """Say the sweep is being made; the last one stays, dimmed, until it arrives."""
        self._sweep_on_its_way = True
        shown = self._sweep_drawn if self.sweep is not None else None
        update_static(
            self.query_one("#plan-sweep", Static),
            Text(text, style="dim") if shown is None else Styled(shown, "dim"),
            shrink=False,
        )

    def focus_inputs(self) -> None:
        """Put the focus on the first input (once the form is mounted)."""
        field = self._fields.get("plan-keep")
        if self._row_makers or field is None or not field.is_mounted:
            self._mount_form_now()
            self.call_after_refresh(self.focus_inputs)
            return
        assert isinstance(field, Input)
        field.select_all()  # typing replaces the figure
        focus_input(field)

    def options(self) -> tuple[str, str, bool]:
        """The method, focus text and replace flag shown now."""
        fields = self._fields
        method = cast("Select[str] | None", fields.get("plan-method"))
        focus = cast("Input | None", fields.get("plan-focus"))
        replace = cast("Checkbox | None", fields.get("plan-replace"))
        return (
            method.value if method is not None and isinstance(method.value, str) else "soft",
            "" if focus is None else focus.value,
            replace is not None and bool(replace.value),
        )

    @on(Checkbox.Changed, "#plan-split-turns")
    @on(Checkbox.Changed, "#plan-branch-ask")
    def _flag_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        name = {"plan-split-turns": "split_turns", "plan-branch-ask": "branch_summary_enabled"}[
            event.checkbox.id or ""
        ]
        self.post_message(self.MoreSettingsEdited({name: bool(event.value)}))

    _effort_shown = "profile"
    """The effort the select shows: a Select posts Changed when it is mounted too, which is
    not an edit (it would re-plan and drop a moved cut)."""

    @on(Select.Changed, "#plan-effort")
    def _effort_changed(self, event: Select.Changed) -> None:
        event.stop()
        value = event.value if isinstance(event.value, str) else "profile"
        if value == self._effort_shown:
            return
        self._effort_shown = value
        self.post_message(
            self.MoreSettingsEdited(
                {"summary_reasoning_effort": None if value == "profile" else value}
            )
        )

    def _more_input_changed(self, field_id: str, text: str) -> None:
        """Parse one of the further number inputs and post the change (blank = unset)."""
        try:
            if field_id == "plan-threshold-percent":
                percent = float(text) if text.strip() else -1.0
                self.post_message(self.MoreSettingsEdited({"threshold_percent": percent}))
                return
            figure = _figure_or_none(text)
            value = None if figure is None else int(figure)
        except (ValueError, OverflowError):  # not a number, or past a float's range
            return
        if field_id == "plan-threshold-tokens":
            # As typed: the settings keep the whole tokens it stands for (whole_tokens).
            changes: dict[str, Any] = {"threshold_tokens": figure if figure else -1}
        elif field_id == "plan-branch-reserve":
            if value is None:
                return
            changes = {"branch_summary_reserve_tokens": value}
        else:
            changes = {"summary_window": value or None}
        self.post_message(self.MoreSettingsEdited(changes))

    @on(Select.Changed, "#plan-method")
    @on(Checkbox.Changed, "#plan-replace")
    def _options_changed(self, event: Select.Changed | Checkbox.Changed) -> None:
        event.stop()
        self.post_message(self.OptionsEdited(*self.options()))

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        """Parse all three inputs; post an edit when they make sense."""
        event.stop()
        if event.input.id == "plan-focus":
            self.post_message(self.OptionsEdited(*self.options()))
            return
        if event.input.id in MORE_INPUTS:
            self._more_input_changed(event.input.id, event.value)
            return
        try:
            keep = _int_or_none(cast(Input, self._fields["plan-keep"]).value)
            reserve = _int_or_none(cast(Input, self._fields["plan-reserve"]).value)
            window = _int_or_none(cast(Input, self._fields["plan-window"]).value)
        except ValueError:
            return
        if keep is None:
            return
        self.post_message(self.SettingsEdited(keep, reserve, window))


def _set_quietly(field: Input | Checkbox | Select[str], value: Any, changed: type[Message]) -> None:
    """Show ``value`` in ``field`` if it shows another, without the change message an edit
    by the user would post."""
    if field.value != value:
        with field.prevent(changed):
            field.value = value
