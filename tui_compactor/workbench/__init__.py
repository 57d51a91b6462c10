"""The headless workbench: every decision the app and the commands share, made once.

Both front-ends (``tui_compactor.ui`` and ``tui_compactor.commands``) call this layer instead of
re-deciding: they parse input, call the workbench, and show what it returns. It imports no
Textual and no Rich (``tests/engine/test_purity.py``).

Modules:

* ``settings``: ``Settings``, resolved once (defaults < config file < ``TUI_COMPACTOR_*`` <
  flags < edits in the app), typed and validated (``Settings.problems``).
* ``exits``: the exit codes every command returns, with their one meaning, and ``Refusal``,
  the one shape of a refusal (reason, code, hint).
* ``refs``: ``resolve_ref``, the one reading of ``ID`` / ``#N`` entry references.
* ``plans``: ``make_plan`` and ``plan_refusal`` (``run_refusal`` its words), the plan both
  front-ends show and the one rule for whether it may be run or accepted.
* ``handle``: ``SessionHandle``, the loaded session, its refresh and generation, read through
  consistent snapshots.
* ``views``: what the app draws, computed off the UI thread.
* ``actions``: write proposals (compaction, navigation, undo, seal, label) and ``apply``.
* ``preview``: ``entry_preview``, the one line saying what an entry holds.
"""

from __future__ import annotations
