"""Command palette (ctrl+p) entries: only the actions that make sense in the current state."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from tui_compactor.ui.app import CompactorApp


class CompactorCommands(Provider):
    """Palette entries built from the app's state each time the palette opens."""

    def _commands(self) -> Iterator[tuple[str, Callable[[], object], str]]:
        """(title, callback, help) for every action available now."""
        app: CompactorApp = self.app  # type: ignore[assignment]
        session = app.session
        if session is None:
            return
        selected = app.selected_entry
        yield ("Search entries", app.action_search, "find text or an id (n / N: next, previous)")
        yield ("Jump to the file's leaf", app.action_jump_leaf, "where the agent continues")
        from tui_compactor.session.flavor import session_issues

        issues = session_issues(session, app.settings.rules)
        if issues:
            count = len(issues)
            yield (
                f"Show load issues ({count})",
                app.action_show_issues,
                "severity, line, byte and message of each; enter jumps to the entry",
            )
        from tui_compactor.ui.app import FILTER_NAMES

        for position, name in enumerate(FILTER_NAMES):
            if position != app.filter_index:
                label = name.lower().replace("_", " ")
                yield (
                    f"Filter: {label}",
                    partial(setattr, app, "filter_index", position),
                    "which entries the tree shows",
                )
        if app.state.folded:
            yield ("Unfold every branch", app.action_unfold_all, f"{len(app.state.folded)} folded")
        if selected is not None:
            yield (
                f"Plan compaction at #{selected}",
                app.action_plan,
                "where compaction would cut, what it would summarize (no LLM)",
            )
            if not session.append_refusal:
                verb = "Change or clear" if session.label_of(selected) else "Add"
                yield (
                    f"{verb} the label of #{selected}",
                    app.action_edit_label,
                    "appends a label entry, as pi's /tree does",
                )
            if session.complete and selected != session.leaf:
                yield (
                    f"Navigate to #{selected}",
                    app.action_select_node,
                    "move the leaf here, with or without a branch summary",
                )
            if session.entries[selected].type == "compaction" and not session.append_refusal:
                yield (
                    "Undo this compaction",
                    app.action_undo,
                    "move the leaf back above it (nothing is deleted)",
                )
        plan = app.plan
        if plan is not None and plan.prepared:
            yield (
                "Run compaction",
                app.action_run_compaction,
                "history and turn prefix summarized side by side",
            )
            yield (
                "Compare candidate summaries",
                app.action_run_candidates,
                "several profiles side by side: length, audit, time",
            )
            yield ("Move cut earlier", app.action_cut_earlier, "previous valid cut point")
            yield ("Move cut later", app.action_cut_later, "next valid cut point")
            yield (
                "Edit keep-recent / reserve / window",
                app.action_edit_settings,
                "the plan follows as you type",
            )
            yield (
                "Inspect the compaction's requests",
                app.action_inspect_requests,
                "the exact prompts, max_tokens and options it would send (none is sent)",
            )
        if plan is not None:
            yield ("Clear the plan", app.clear_plan, "remove the plan marks from the tree")
        panel = app.compaction_panel
        if panel is not None and panel.state == "ready":
            yield ("Accept compaction", app.action_accept_compaction, "append it to the file")
            yield ("Discard compaction", app.action_discard_compaction, "nothing is written")
        if panel is not None and panel.running:
            yield ("Cancel compaction", app.action_discard_compaction, "nothing is written")
        yield (
            "Compaction timeline",
            app.action_timeline,
            "every compaction and branch summary, hindsight scores; enter jumps",
        )
        from tui_compactor.ui.panes import TABS

        for title, tab_id in TABS:
            if tab_id == "tab-breakdown":
                title = "Window (what fills it)"
            yield (f"Show {title} tab", partial(app.action_show_tab, tab_id), "preview pane")
        from tui_compactor.ui.widgets.context_view import RULES_AGENT, ContextView

        agent = RULES_AGENT.get(app.settings.rules, app.settings.rules)
        context = app.view(ContextView)
        if context is not None and context.as_sent:
            yield ("Context: compact list", app.action_context_as_sent, "one row per block (s)")
        else:
            yield (
                f"Context: as {agent} sends it",
                app.action_context_as_sent,
                "every item's role and exact text, wrappers included (s)",
            )
        yield (
            f"Context as {agent} sends it, full screen",
            app.action_context_zoom,
            "the text gets the whole screen; S or esc gives the tree back (S)",
        )
        other = "pi" if app.settings.rules == "omp" else "omp"
        yield (
            f"Plan with {other} rules",
            app.action_toggle_rules,
            f"now {app.settings.rules} ({app.settings.source_of('rules')})",
        )
        yield ("Reload the file", app.action_reload, "re-read it from disk")

    async def discover(self) -> Hits:
        """Everything available, before the user types."""
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        """Fuzzy-match the available commands."""
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
