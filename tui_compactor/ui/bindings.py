"""Every app-level key binding, each with a stable id, and the user keymap from the config.

A user overrides keys in ``config.toml``::

    [ui.keymap]
    plan = "c,f5"          # binding id -> comma-separated keys

Ids are listed by ``?`` (help) next to each binding. Unknown ids are reported, not ignored.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.keys import _character_to_key, key_to_character

if TYPE_CHECKING:
    from typing import Any

    from textual.binding import BindingsMap
    from textual.screen import Screen
    from textual.widget import Widget

    _ScreenBase = Screen[Any]
else:
    _ScreenBase = object

APP_BINDINGS: list[Binding] = [
    Binding("q", "quit", "Quit", id="quit"),
    Binding("question_mark,f1", "help", "Help", id="help"),
    Binding("escape", "cancel", "Cancel", show=False, id="cancel", priority=False),
    Binding("slash", "search", "Search", id="search"),
    Binding("n", "search_next", "Next match", show=False, id="search_next"),
    Binding("N", "search_previous", "Previous match", show=False, id="search_previous"),
    Binding("f", "cycle_filter", "Filter", id="filter"),
    Binding("F", "cycle_filter_back", "Previous filter", show=False, id="filter_back"),
    Binding("l", "jump_leaf", "Jump to leaf", show=False, id="jump_leaf"),
    Binding("p", "jump_parent", "Jump to parent", show=False, id="jump_parent"),
    Binding("b", "jump_branch", "Next branch point", show=False, id="jump_branch"),
    Binding("B", "jump_branch_back", "Previous branch point", show=False, id="jump_branch_back"),
    Binding("c", "plan", "Plan", id="plan"),
    Binding(
        "left_square_bracket",
        "cut_earlier",
        "Cut earlier",
        show=False,
        id="cut_earlier",
    ),
    Binding(
        "right_square_bracket",
        "cut_later",
        "Cut later",
        show=False,
        id="cut_later",
    ),
    Binding("e", "edit_settings", "Edit budget", show=False, id="edit_settings"),
    Binding("r", "run_compaction", "Compact", id="compact"),
    Binding("R", "run_candidates", "Compare candidates", show=False, id="compact_candidates"),
    # The review's keys answer wherever focus is while a compaction is shown (ui/review.py).
    Binding("a", "accept_compaction", "Accept", id="accept", priority=True),
    Binding("d", "discard_compaction", "Discard", id="discard", priority=True),
    Binding("g", "regenerate_compaction(False)", "Regenerate", id="regenerate", priority=True),
    Binding(
        "G", "regenerate_compaction(True)", "Keep missing", id="regenerate_missing", priority=True
    ),
    Binding(
        "v",
        "compaction_diff",
        "Diff vs previous summary",
        show=False,
        id="compaction_diff",
        priority=True,
    ),
    Binding("z", "zoom_compaction", "Zoom", id="zoom_compaction", priority=True),
    *(
        Binding(
            str(n),
            f"pick_candidate({n})",
            f"Pick candidate {n}",
            show=False,
            id=f"candidate_{n}",
            priority=True,
        )
        for n in range(1, 10)
    ),
    Binding("u", "undo", "Undo compaction", show=False, id="undo"),
    Binding("L", "edit_label", "Label the entry", show=False, id="label"),
    Binding("I", "show_issues", "Load issues", show=False, id="issues"),
    Binding("1", "show_tab('tab-details')", "Details tab", show=False, id="tab_details"),
    Binding("2", "show_tab('tab-context')", "Context tab", show=False, id="tab_context"),
    Binding("3", "show_tab('tab-plan')", "Plan tab", show=False, id="tab_plan"),
    Binding("4", "show_tab('tab-diff')", "Summary diff tab", show=False, id="tab_diff"),
    Binding("5", "show_tab('tab-compaction')", "Compaction tab", show=False, id="tab_compaction"),
    Binding("s", "context_as_sent", "Context: list / as sent", show=False, id="context_as_sent"),
    Binding("S", "context_zoom", "Context as sent, full screen", show=False, id="context_zoom"),
    Binding(
        "6",
        "show_tab('tab-breakdown')",
        "Window tab (what fills it)",
        show=False,
        id="tab_breakdown",
    ),
    Binding("T", "timeline", "Compaction timeline", show=False, id="timeline"),
    Binding("i", "inspect_requests", "Inspect requests", show=False, id="inspect_requests"),
    Binding("ctrl+r", "reload", "Reload file", show=False, id="reload"),
    Binding("o", "toggle_rules", "Switch pi / oh-my-pi rules", show=False, id="toggle_rules"),
]
"""App bindings. Tree movement keys live on ``SessionTree`` (ids ``tree.*``).

No ``key_display``: Textual splits a binding of two keys into one per key, each shown by the
footer, and a fixed display would name the other key (``f1`` shown as ``?``) or the old one
after a ``[ui.keymap]`` change; Textual's own display of each key is the one typed."""

APP_ACTIONS: frozenset[str] = frozenset(binding.action.split("(")[0] for binding in APP_BINDINGS)
"""The action names of this app's own bindings (Textual's built-ins, such as ``focus_next`` for
Tab, are not among them)."""

LIST_BINDINGS: list[Binding] = [
    Binding("j", "list_step(1)", "Down", show=False, id="list.down"),
    Binding("k", "list_step(-1)", "Up", show=False, id="list.up"),
]
"""``j`` / ``k`` in a screen's list of rows (the timeline, the issues) as in the tree; the arrows
are the table's own keys. The screen takes ``ListSteps``' action."""


class ListSteps(_ScreenBase):
    """The action of ``LIST_BINDINGS``: move the cursor of the screen's one table."""

    def action_list_step(self, step: int) -> None:
        """One row down (``step`` 1) or up (-1)."""
        from textual.widgets import DataTable

        table = self.query_one(DataTable)
        if step > 0:
            table.action_cursor_down()
        else:
            table.action_cursor_up()


INPUT_OPENERS: frozenset[str] = frozenset({"edit_settings", "search", "edit_label", "timeline"})
"""The actions that open an input and give it the focus (or the timeline, whose rows are computed
after it opens): the keys typed right after one of them belong to what it opened
(``CompactorApp.hold_keys``), not to the screen behind it."""


_NAMED_CHARACTERS = {_character_to_key(char): char for char in string.punctuation}
"""Key name -> the character it types, for the names ``key_to_character`` does not know
(``slash``: Unicode calls ``/`` SOLIDUS)."""


def takes_text(widget: Widget | None, key: str = "a") -> bool:
    """True when ``widget`` (an input being typed in) takes ``key`` as text, not as a binding's
    key: Textual's ``check_consume_key``. Without ``key``: whether it takes letters, that is
    whether the user is typing into it. The one rule for "typing": the footer's keys, the
    review's keys, the keys that open an input and the keys held for one follow it."""
    if widget is None:
        return False
    character = key_to_character(key) or _NAMED_CHARACTERS.get(key)
    return bool(widget.check_consume_key(key, character))


def opener_keys(
    bindings: BindingsMap, keymap: Mapping[str, str], actions: Iterable[str] = INPUT_OPENERS
) -> dict[str, str]:
    """Key -> the action it runs, for the ``actions`` (the ``INPUT_OPENERS`` unless told) among
    ``bindings`` with the user's ``keymap`` applied (as Textual applies it when it dispatches
    a key)."""
    if keymap:
        bindings = bindings.copy()
        bindings.apply_keymap(dict(keymap))
    wanted = set(actions)
    openers: dict[str, str] = {}
    for key, key_bindings in bindings.key_to_bindings.items():
        for binding in key_bindings:
            if binding.action in wanted:
                openers.setdefault(key, binding.action)
    return openers


def focus_input(widget: Widget) -> None:
    """Give ``widget``, an input the keys typed meanwhile are held for (``hold_keys``), the
    focus. The app hands them over when the input takes the focus; an input that has it
    already takes it no more, so they are handed over at once."""
    if not widget.has_focus:
        widget.focus()
        return
    release_keys = getattr(widget.app, "release_keys", None)
    if release_keys is not None:
        release_keys()


def known_binding_ids(*binding_lists: list[Binding]) -> set[str]:
    """Every binding id in the given lists."""
    return {binding.id for bindings in binding_lists for binding in bindings if binding.id}


def keymap_conflicts(keymap: Mapping[str, str], bindings: BindingsMap) -> list[str]:
    """Keys the user's ``keymap`` gives a binding that another binding of ``bindings`` had (one
    the keymap does not move), each saying what happens, as Textual resolves the keymap
    (``BindingsMap.apply_keymap``, what the app dispatches with): the key runs the keymap's
    binding, and the other keeps its other keys (``quit`` keeps ``ctrl+q`` when ``plan = "q"``)
    or has none left (the docs' ``compact = "c"`` took ``c`` from the plan)."""
    from textual.app import App

    wanted = App._normalize_keymap(dict(keymap))
    resolved = bindings.copy()
    resolved.apply_keymap(wanted)
    moved = set(keymap)
    problems: list[str] = []
    for binding_id, keys in wanted.items():
        for key in keys.split(","):
            for other in bindings.key_to_bindings.get(key, ()):
                if not other.id or other.id == binding_id or other.id in moved:
                    continue
                runs = next((b.id for b in resolved.key_to_bindings.get(key, ()) if b.id), None)
                left = [
                    other_key
                    for other_key, on_key in resolved.key_to_bindings.items()
                    if any(b.action == other.action for b in on_key)
                ]
                said = f"[ui.keymap] {binding_id} = {key!r} takes {key} from {other.id}: "
                said += f"{key} runs {runs or binding_id}, not {other.id}"
                if left:
                    said += f"; {other.id} is left with {', '.join(left)}"
                else:
                    said += f"; {other.id} has no key left: give it one in [ui.keymap]"
                problems.append(said)
    return problems


def validated_keymap(
    keymap: Mapping[str, str], known_ids: set[str]
) -> tuple[dict[str, str], list[str]]:
    """Split a user keymap into (usable entries, problems to report)."""
    usable: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in keymap.items():
        if binding_id not in known_ids:
            problems.append(f"unknown binding id {binding_id!r} in [ui.keymap]")
        elif not isinstance(keys, str) or not keys.strip():
            problems.append(f"empty keys for {binding_id!r} in [ui.keymap]")
        else:
            usable[binding_id] = ",".join(part.strip() for part in keys.split(","))
    return usable, problems


def key_shown(bindings: BindingsMap, keymap: Mapping[str, str], binding_id: str) -> str:
    """The key that runs the binding ``binding_id`` now, as the user types it (``c`` for the
    plan, ``f5`` after ``[ui.keymap] plan = "f5"``): the one answer for every hint that names a
    key. ``bindings`` with the user's ``keymap`` applied, as Textual dispatches; its first key
    when it has several; ``<binding_id>: no key`` when the keymap took its keys away."""
    from tui_compactor.ui.widgets.help import key_label

    if keymap:
        from textual.app import App

        bindings = bindings.copy()
        bindings.apply_keymap(App._normalize_keymap(dict(keymap)))
    for key, key_bindings in bindings.key_to_bindings.items():
        if any(binding.id == binding_id for binding in key_bindings):
            return key_label(key)
    return f"<{binding_id}: no key>"


def key_of(node: object, binding_id: str) -> str:
    """``key_shown`` for the app ``node`` runs in (a widget or the app itself: its
    ``key_for``); the default key when it runs in none (a widget built alone)."""
    from textual._context import NoActiveAppError

    try:
        key_for = getattr(getattr(node, "app", node), "key_for", None)
    except NoActiveAppError:  # a widget built outside an app
        key_for = None
    if key_for is not None:
        return str(key_for(binding_id))
    from tui_compactor.ui.widgets.help import key_label

    default = next((b.key for b in APP_BINDINGS if b.id == binding_id), binding_id)
    return key_label(default.split(",")[0])
