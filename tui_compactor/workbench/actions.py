"""Write actions in two steps: a *proposal* (exactly what would be appended, where, what leaves
the active path, why it is allowed) and ``apply`` through the writer's append gate.

A proposal remembers the generation of the session it was made against and the file's leaf at
that time. ``apply`` re-validates both while holding the session alone: if the file grew (our
refresh saw it, or the writer's gate found new complete lines), nothing is written and
``StaleProposal`` asks the caller to plan again and ask the user again. A write therefore never
lands on a leaf that is no longer the file's leaf.

The same functions decide for the app and the commands (``undo``'s refusals are the app's ``u``
refusals, with the same words).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tui_compactor.session.writer import (
    AppendResult,
    SessionChanged,
    append_entry,
    is_leaf_marker,
    make_label_entry,
    make_leaf_marker,
    seal_tail,
)
from tui_compactor.workbench.exits import Refusal

if TYPE_CHECKING:
    from tui_compactor.engine.branch import NavigationPlan
    from tui_compactor.engine.plan import CompactionPlan
    from tui_compactor.session.session import Session
    from tui_compactor.workbench.handle import SessionHandle, Snapshot

__all__ = [
    "MAX_REPLANS",
    "ActionRefused",
    "Proposal",
    "StaleProposal",
    "apply",
    "entries_after_on_path",
    "find_last_compaction",
    "label_text",
    "propose_compaction",
    "propose_label",
    "propose_navigation",
    "propose_seal",
    "propose_undo",
]

ActionKind = Literal["compaction", "navigate", "undo", "seal", "label"]

MAX_REPLANS = 3
"""How often a writing command plans again after a ``StaleProposal`` (the file grew between
proposal and apply) before it gives up and writes nothing."""


class ActionRefused(Exception):
    """The action is not allowed; ``reason`` says why in the user's words.

    ``needs_force`` marks the one refusal a user may override after being asked (entries would
    leave the active path): ``undo --force`` on the command line, a confirmation in the app.
    """

    def __init__(
        self, reason: str, code: str, *, hint: str | None = None, needs_force: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
        """The rule (``workbench.exits.REFUSAL_CODES``), a JSON report's ``refusedCode``."""
        self.hint = hint
        """What to do about it (a JSON report's ``hint``); None when the rule has no advice.
        The app asks instead of advising where it can (``needs_force``: a confirmation)."""
        self.needs_force = needs_force

    @property
    def words(self) -> str:
        """The reason and its advice, as a command prints them."""
        return f"{self.reason}; {self.hint}" if self.hint else self.reason

    @classmethod
    def of(cls, refusal: Refusal) -> ActionRefused:
        """The exception for a ``Refusal`` the workbench decided."""
        return cls(refusal.reason, refusal.code, hint=refusal.hint)


class StaleProposal(Exception):
    """The file changed since the proposal was made: nothing was written; plan and ask again."""

    def __init__(
        self,
        proposal: Proposal | None,
        generation: int,
        leaf: int | None,
        *,
        reloaded: bool = False,
    ) -> None:
        self.proposal = proposal
        """None when nothing could be proposed (``_check_same_load``)."""
        self.generation = generation
        self.leaf = leaf
        self.reloaded = reloaded
        """True: proposed on an earlier load of the file, which was rewritten since."""
        super().__init__(
            "the file was rewritten on disk and loaded again since this was planned: nothing "
            "was written; it has to be planned and confirmed again on the file as it is now"
            if reloaded
            else "the session grew since this was planned (new entries after the leaf it was "
            "planned at): nothing was written; it has to be planned and confirmed again"
        )


@dataclass(frozen=True)
class Proposal:
    """Exactly what a write action would append, and under which conditions.

    Attributes:
        kind: ``compaction``, ``navigate``, ``undo``, ``seal`` or ``label``.
        record: the entry body to append (None for ``seal``, which appends one newline).
        parent: entry index the new entry hangs from (None: a new root, or ``seal``).
        parent_id: its id, for the user.
        generation: the session generation the proposal was made against.
        leaf: the file's leaf at that generation (re-checked at apply).
        leaving: entry indices that leave the active path when this is written.
        allowed: why the action is allowed (shown with the confirmation).
        description: one line saying what will be appended.
    """

    kind: ActionKind
    record: Mapping[str, Any] | None
    parent: int | None
    parent_id: str | None
    generation: int
    leaf: int | None
    leaving: tuple[int, ...] = ()
    allowed: str = ""
    description: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Facts a front-end reports (the undone compaction's id, line numbers...)."""


def _path_after(session: Session, ancestor: int | None, leaf: int | None) -> tuple[int, ...]:
    """Entries on the path to ``leaf`` strictly after ``ancestor`` (all of it for None)."""
    if leaf is None:
        return ()
    path = session.path_to(leaf)
    if ancestor is None:
        return tuple(path)
    try:
        position = path.index(ancestor)
    except ValueError:
        return tuple(path)
    return tuple(path[position + 1 :])


def entry_place(session: Session, index: int) -> str:
    """Where entry ``index`` is, as the app and the commands name it: ``#163`` (its index among
    the entries, the app's ``#`` everywhere) and ``line 165`` (its line in the file, which
    counts the header and any line that is no entry): ``#163, line 165``."""
    return f"#{index}, line {session.entries[index].line}"


def find_last_compaction(session: Session) -> int | None:
    """Index of the last ``compaction`` entry on the path to the file's leaf, or None."""
    if session.leaf is None:
        return None
    for index in reversed(session.path_to(session.leaf)):
        if session.entries[index].type == "compaction":
            return index
    return None


def entries_after_on_path(session: Session, compaction: int) -> list[int]:
    """Entries after ``compaction`` on the leaf's path that an undo takes off the active path.

    Our own leaf markers (``tui-compactor/leaf``) are not counted: they only move the leaf.
    """
    return [
        index
        for index in _path_after(session, compaction, session.leaf)
        if not (
            session.entries[index].type == "custom" and is_leaf_marker(session.entries[index].data)
        )
    ]


def _check_same_load(snapshot: Snapshot, generation: int | None) -> None:
    """A plan made at ``generation`` on an earlier load of the file (rewritten on disk and
    loaded again since) names entries by that file's indices: nothing is proposed from it.

    Raises:
        StaleProposal: ``reloaded``, as ``apply`` says of a proposal made on an earlier load.
    """
    if generation is not None and not snapshot.is_loaded_at(generation):
        raise StaleProposal(None, snapshot.generation, snapshot.leaf, reloaded=True)


def propose_undo(
    snapshot: Snapshot, compaction: int | None = None, *, force: bool = False
) -> Proposal:
    """Undo the last compaction on the active path: a leaf marker under its parent.

    Args:
        snapshot: the session as read now.
        compaction: the compaction the user pointed at (the app's selection); None = the last
            one on the active path (the command).
        force: allow entries written after the compaction to leave the active path (the user
            confirmed, or ``--force``).

    Raises:
        ActionRefused: nothing to undo, not the last compaction on the active path, no parent
            to resume at, or (without ``force``) later entries would leave the active path.
    """
    session = snapshot.session
    last = find_last_compaction(session)
    if last is None:
        raise ActionRefused("no compaction on the active path; nothing to undo", "nothing-to-undo")
    if compaction is not None and compaction != last:
        chosen = session.entries[compaction]
        what = "a compaction" if chosen.type == "compaction" else "an entry"
        raise ActionRefused(
            f"{chosen.id} is not the last compaction on the active path; undo moves the leaf "
            f"back above the last one ({session.entries[last].id}) only"
            if chosen.type == "compaction"
            else f"{chosen.id} is not {what}; select the last compaction on the active path",
            "not-last-compaction",
        )
    entry = session.entries[last]
    if entry.parent is None:
        raise ActionRefused(
            f"compaction {entry.id} has no parent entry; there is nothing above it to resume at",
            "no-parent",
        )
    parent = session.entries[entry.parent]
    leaving = entries_after_on_path(session, last)
    count = len(leaving)
    noun = "entry" if count == 1 else "entries"
    if leaving and not force:
        raise ActionRefused(
            f"refusing to undo: {count} {noun} written after this compaction would leave the "
            "active path",
            "needs-force",
            hint="pass --force to undo anyway",
            needs_force=True,
        )
    leaf = snapshot.leaf
    record = make_leaf_marker(
        reason="undo", undone_entry_id=entry.id,
        previous_leaf_id=session.entries[leaf].id if leaf is not None else None,
    )  # fmt: skip
    return Proposal(
        kind="undo", record=record, parent=entry.parent, parent_id=parent.id,
        generation=snapshot.generation, leaf=leaf, leaving=tuple(leaving),
        allowed=(f"compaction {entry.id} is the last one on the active path"
                 + (f"; {count} later {noun} leave the active path (confirmed)" if count else "")),
        description=(
            f"undo compaction {entry.id} ({entry_place(session, last)}): the agent will "
            f"resume at {parent.id} ({entry_place(session, entry.parent)}); the compaction "
            "stays in the file on a side "
            f"branch\n{count} {noun} after it leave the active path (nothing is deleted)"
        ),
        extra={"compactionId": entry.id, "compactionLine": entry.line,
               "previousLeafId": session.entries[leaf].id if leaf is not None else None,
               "newLeafParentId": parent.id},
    )  # fmt: skip


def propose_compaction(
    snapshot: Snapshot,
    plan: CompactionPlan,
    record: Mapping[str, Any],
    *,
    generation: int,
    file_leaf: int | None,
) -> Proposal:
    """Append the compaction entry ``record`` at the plan's leaf.

    Args:
        snapshot: the session as read now.
        plan: the plan the summaries were made for.
        record: the compaction entry (``CompactionResult.entry``).
        generation: the session generation the plan was made at.
        file_leaf: the file's leaf when the plan was made.

    Raises:
        ActionRefused: the plan cannot be accepted (not prepared, or summarizes nothing).
        StaleProposal: the plan was made on an earlier load of the file.
    """
    _check_same_load(snapshot, generation)
    session = snapshot.session
    from tui_compactor.workbench.plans import plan_refusal

    refusal = plan_refusal(plan, None)
    if refusal is not None:
        raise ActionRefused.of(refusal)
    leaf = plan.leaf
    assert leaf is not None  # a prepared plan has a leaf
    leaving = _path_after(session, leaf, file_leaf) if file_leaf != leaf else ()
    return Proposal(
        kind="compaction", record=record, parent=leaf, parent_id=session.entries[leaf].id,
        generation=generation, leaf=file_leaf, leaving=leaving,
        allowed="the plan summarizes something and was made at the current file state",
        description=f"a compaction entry after {session.entries[leaf].id}",
    )  # fmt: skip


NOTHING_TO_DO = "nothing to do: the target is the current leaf"
"""What a move to the current leaf says (nothing is appended), in the app and ``navigate``."""


def propose_navigation(
    snapshot: Snapshot,
    nav_plan: NavigationPlan,
    record: Mapping[str, Any] | None = None,
    *,
    generation: int | None = None,
) -> Proposal:
    """Move the leaf to ``nav_plan.new_leaf``: a branch summary ``record`` or a leaf marker.

    ``generation`` is the session generation ``nav_plan`` was made at (default: now).

    Raises:
        ActionRefused: the target is the current leaf (nothing to move).
        StaleProposal: ``nav_plan`` was made on an earlier load of the file.
    """
    _check_same_load(snapshot, generation)
    session = snapshot.session
    if nav_plan.noop:
        raise ActionRefused(NOTHING_TO_DO, "nothing-to-do")
    old_leaf = nav_plan.old_leaf
    if record is None:
        record = make_leaf_marker(
            reason="navigate",
            previous_leaf_id=session.entries[old_leaf].id if old_leaf is not None else None,
        )
    new_leaf = nav_plan.new_leaf
    ancestor = (
        session.common_ancestor(old_leaf, new_leaf)
        if (old_leaf is not None and new_leaf is not None)
        else None
    )
    return Proposal(
        kind="navigate", record=record, parent=new_leaf,
        parent_id=session.entries[new_leaf].id if new_leaf is not None else None,
        generation=snapshot.generation if generation is None else generation, leaf=old_leaf,
        leaving=_path_after(session, ancestor, old_leaf),
        allowed="navigation keeps every entry in the file; only the leaf moves",
        description=("a branch summary" if record.get("type") == "branch_summary"
                     else "a leaf marker") + " at the new leaf",
    )  # fmt: skip


def label_text(text: str) -> str:
    """A label as it is written: one line, no runs of spaces ("" clears the label)."""
    return " ".join(text.split())


def propose_label(
    snapshot: Snapshot,
    target: int,
    text: str,
    *,
    generation: int | None = None,
    file_leaf: int | None = None,
) -> Proposal:
    """Set (or, with an empty ``text``, clear) the label of entry ``target``.

    A pi ``label`` entry is appended as a child of the file's leaf (as pi's
    ``appendLabelChange`` does); nothing leaves the active path. ``generation`` and
    ``file_leaf`` are the session state the user chose the label at (default: now); the
    entry hangs from that leaf, so ``apply`` refuses it if the file grew meanwhile.

    Raises:
        ActionRefused: no such entry, or the label would not change.
    """
    session = snapshot.session
    if not 0 <= target < len(session.entries):
        raise ActionRefused(f"there is no entry #{target} in this session", "no-such-entry")
    entry = session.entries[target]
    label = label_text(text)
    current = session.label_of(target)
    if label == (current or ""):
        raise ActionRefused(
            f"{entry.id} already has the label “{label}”; nothing to write"
            if label
            else f"{entry.id} has no label; nothing to clear",
            "label-unchanged",
        )
    leaf = snapshot.leaf if generation is None else file_leaf
    return Proposal(
        kind="label", record=make_label_entry(target_id=entry.id, label=label),
        parent=leaf, parent_id=session.entries[leaf].id if leaf is not None else None,
        generation=snapshot.generation if generation is None else generation, leaf=leaf,
        allowed="a label entry only names an entry; the context the agent sees stays the same",
        description=(f"a label entry setting “{label}” on {entry.id}" if label
                     else f"a label entry clearing the label of {entry.id}"),
        extra={"targetId": entry.id, "label": label},
    )  # fmt: skip


def propose_seal(snapshot: Snapshot) -> Proposal:
    """End a torn last line with one newline (the fragment stays in the file)."""
    return Proposal(
        kind="seal", record=None, parent=None, parent_id=None,
        generation=snapshot.generation, leaf=snapshot.leaf,
        allowed="the last line is torn; a newline ends it so appends can proceed",
        description="one newline after the torn last line",
    )  # fmt: skip


def apply(handle: SessionHandle, proposal: Proposal, **append_options: Any) -> AppendResult:
    """Write ``proposal`` through the writer's append gate, if the session is unchanged.

    Holds the session alone while it checks and writes, then refreshes it (a new generation).
    ``append_options`` go to the writer (``quiet_seconds``, ``lock_wait_seconds``, ``ops``).

    Raises:
        StaleProposal: the session grew since the proposal (nothing written; the session is
            refreshed, so planning again sees the new entries).
        AppendRefused: the gate refused (nothing written).
    """
    options = {key: value for key, value in append_options.items() if key != "refresh"}
    with handle.exclusive() as session:
        if not handle.is_loaded_at(proposal.generation):
            raise StaleProposal(proposal, handle.generation, session.leaf, reloaded=True)
        if handle.generation != proposal.generation or session.leaf != proposal.leaf:
            raise StaleProposal(proposal, handle.generation, session.leaf)
        try:
            if proposal.kind == "seal":
                result = seal_tail(session, refresh=False, **options)
            else:
                assert proposal.record is not None
                result = append_entry(
                    session, proposal.record, parent_index=proposal.parent, refresh=False, **options
                )
        except SessionChanged:
            handle.refresh_locked()
            raise StaleProposal(proposal, handle.generation, session.leaf) from None
        handle.refresh_locked()
        return result
