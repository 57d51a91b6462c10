"""Which agent wrote a session: pi or oh-my-pi, from where the file lives and what is in it.

The rules a session is planned under follow the agent that will continue it. Location decides
first: files under ``~/.omp/`` belong to oh-my-pi, files under ``~/.pi/`` to pi. Elsewhere the
content decides: oh-my-pi's title slot on line 1, entry types only oh-my-pi writes, and
compaction fields only oh-my-pi writes (``method``, ``shortSummary``, ``preserveData``,
``warning``). A compaction tui-compactor wrote counts by its ``method`` alone: under pi rules
it writes none but keeps its short summary, and the session stays pi's. Nothing found means pi.
A flag or the config file always overrides the guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tui_compactor.session.session import Session

__all__ = [
    "MALFORMED_CODES",
    "OMP_ONLY_COMPACTION_FIELDS",
    "OMP_ONLY_TYPES",
    "SessionFlavor",
    "detect_flavor",
    "omp_compaction_field",
    "omp_rewrite_reason",
    "session_issues",
]

OMP_ONLY_TYPES = frozenset(
    {
        "reset_boundary",
        "title_change",
        "ttsr_injection",
        "session_init",
        "mode_change",
        "persona_change",
        "credential_pin",
        "model_usage",
        "archive",
        "service_tier_change",
    }
)
"""Entry types oh-my-pi writes and pi does not."""

OMP_ONLY_COMPACTION_FIELDS = (
    "method",
    "shortSummary",
    "preserveData",
    "warning",
    "providerReplayThroughEntryId",
)
"""Fields of a ``compaction`` record only oh-my-pi writes."""

MAX_COMPACTIONS_READ = 50
"""Compactions whose fields decide (the newest ones; a session has few)."""


@dataclass(frozen=True, slots=True)
class SessionFlavor:
    """The rules a session calls for, and why (shown in the app header)."""

    rules: Literal["pi", "omp"]
    reason: str


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def omp_compaction_field(record: Mapping[str, Any], ours: bool) -> str | None:
    """The oh-my-pi-only field a ``compaction`` record carries, worded for the header
    (``omp compaction method remote``), or None. The reader notes it while indexing; ``ours``:
    the record is this tool's (``model.written_by_us``, which the reader decides once)."""
    fields = ("method",) if ours else OMP_ONLY_COMPACTION_FIELDS
    for name in fields:
        value = record.get(name)
        if value is not None:
            detail = f" {value}" if name == "method" and isinstance(value, str) else ""
            return f"omp compaction {name}{detail}"
    return None


def detect_flavor(session: Session, home: Path | None = None) -> SessionFlavor:
    """pi or oh-my-pi rules for ``session`` (see the module doc); never raises.

    O(1) in the session's size: the entry types and compaction fields it needs were noted by
    the reader while indexing, so no record is re-read (the app decides this as a file opens).
    """
    home = home if home is not None else Path.home()
    path = session.path
    for candidate in {path.absolute(), _resolved(path)}:
        if _under(candidate, home / ".omp"):
            return SessionFlavor("omp", "under ~/.omp")
        if _under(candidate, home / ".pi"):
            return SessionFlavor("pi", "under ~/.pi")
    if session.title_slot is not None:
        return SessionFlavor("omp", "omp title slot")
    if session._omp_entry_type is not None:
        return SessionFlavor("omp", f"omp {session._omp_entry_type} entry")
    for index in list(session._compactions)[-MAX_COMPACTIONS_READ:]:
        reason = session._omp_compactions.get(index)
        if reason is not None:
            return SessionFlavor("omp", reason)
    return SessionFlavor("pi", "no omp content")


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


MALFORMED_CODES = frozenset({"invalid-json", "torn-tail"})
"""Diagnostics of lines oh-my-pi's loader also counts as malformed records (checked with
oh-my-pi 18.2.3: each unparseable line and an unparseable last line count; invalid UTF-8 is
decoded with replacement characters and does not)."""


def omp_rewrite_reason(session: Any) -> str | None:
    """Why oh-my-pi's next append would rewrite this whole file, or None.

    oh-my-pi opens such a file without touching it but remembers that a rewrite is due when the
    file was migrated from an older version or had malformed lines; its first append then
    writes the file anew (new ids for v1 files, a title slot first, malformed lines dropped).
    """
    reasons = []
    version = getattr(session, "version", None)
    if isinstance(version, int) and version < 3:
        reasons.append(f"it is a version {version} file (oh-my-pi migrates it to version 3)")
    malformed = sum(1 for d in session.diagnostics if d.code in MALFORMED_CODES)
    if malformed:
        lines = "line" if malformed == 1 else "lines"
        reasons.append(f"it has {malformed} malformed {lines} (oh-my-pi drops them)")
    if not reasons:
        return None
    return (
        "oh-my-pi's next append will rewrite this whole file, because "
        + " and ".join(reasons)
        + "; keep a copy if those bytes matter"
    )


PI_NO_HEADER = "pi-no-header"
"""Issue code under pi's rules: pi finds no session header in the file."""
PI_TITLE_SLOT = (
    "line 1 is oh-my-pi's title slot, which pi reads as its session header: pi finds no "
    "session in this file, and opening it with `pi --session` would overwrite it with an "
    "empty session (copy it first)"
)
"""What pi does with a file that starts with a title slot (pi 0.73.1's loadEntriesFromFile
returns no entries when the first record is not a ``session`` with a string id)."""


def pi_problems(session: Any) -> list[Any]:
    """What pi does not accept in this file that our reader does (``lint --rules pi`` and the
    app's Issues view under pi's rules list it): a title slot on line 1, which pi reads as
    its session header."""
    from tui_compactor.session.model import Diagnostic, Severity

    if getattr(session, "title_slot", None) is None or getattr(session, "preview", False):
        return []
    return [Diagnostic(Severity.WARNING, PI_NO_HEADER, PI_TITLE_SLOT, str(session.path), 1, 0)]


def session_issues(session: Any, rules: str | None = None) -> list[Any]:
    """The load diagnostics plus the file-wide warning of ``omp_rewrite_reason``, and under
    oh-my-pi's rules why oh-my-pi would refuse the file or hang on it
    (``omp_open.omp_open_problems``): the list ``lint`` prints and the app's Issues view shows
    and counts."""
    from tui_compactor.session.model import Diagnostic, Severity

    issues = list(session.diagnostics)
    if rules == "omp":
        from tui_compactor.session.omp_open import omp_open_problems

        issues.extend(omp_open_problems(session))
    else:
        issues.extend(pi_problems(session))
    rewrite = omp_rewrite_reason(session)
    if rewrite is not None:
        issues.append(Diagnostic(Severity.WARNING, "omp-rewrite", rewrite, str(session.path)))
    return issues
