"""Find a running pi / oh-my-pi agent that works on a session file.

pi keeps its leaf in memory and appends with a fresh ``open`` per entry, so a session whose
agent sits idle at its prompt looks untouched on disk; whatever we append then ends up on a
dead side branch as soon as the agent writes its next entry. So before an append the gate asks
this module which processes are working on the file, from what the OS says about them (Linux
``/proc``; only processes we may inspect, usually our own user's, are seen):

* **open file**: the process holds the session open (oh-my-pi keeps its descriptor; any
  process with it open for writing counts, agent or not);
* **command line**: an agent or runtime (``pi``, ``omp``, ``node``, ``bun``) whose arguments
  name the session file, its basename or its session id (``pi --session FILE``);
* **lock**: oh-my-pi's ``.<name>.lock`` names a live pid;
* **directory**: a pi / oh-my-pi process whose working directory is the ``cwd`` the session
  was recorded in, and whose arguments name no other session file (pi ``-c`` continues the
  newest session of its directory, and any agent there may be about to resume this one).

Each finding names the process (pid and command) and the evidence. The user can override the
refusal explicitly (``--ignore-agent``); nothing here reads the session's content beyond the
header fields passed in. Pure standard library; returns nothing on systems without ``/proc``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_compactor.session.lock import read_publish_lock, resolved_session_path

if TYPE_CHECKING:
    from tui_compactor.session.session import Session

__all__ = ["AgentProcess", "describe_agents", "find_agents"]

AGENT_NAMES = frozenset({"pi", "omp", "oh-my-pi"})
"""Program names of the agents (``pi``, oh-my-pi's ``omp``)."""
AGENT_PACKAGES = ("pi-coding-agent", "oh-my-pi", "@oh-my-pi")
"""Path fragments of the agents' installed packages (``node …/pi-coding-agent/dist/cli.js``)."""
RUNTIMES = frozenset({"node", "nodejs", "bun", "deno"})
"""Interpreters an agent (or a script driving its SessionManager) runs in."""
PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class AgentProcess:
    """A process working on the session, and why we think so."""

    pid: int
    command: str
    """Its command line, shortened, for messages."""
    evidence: str
    """What was seen: ``has the session open for writing``, ``names it on its command line``…"""

    def describe(self) -> str:
        """``pid 1234 (pi --session s.jsonl) has the session open``."""
        return f"pid {self.pid} ({self.command}) {self.evidence}"


def describe_agents(agents: Iterable[AgentProcess]) -> str:
    """One sentence naming every agent found."""
    return "; ".join(agent.describe() for agent in agents)


def _read_cmdline(pid_dir: Path) -> list[str]:
    try:
        raw = (pid_dir / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _short_command(argv: list[str], limit: int = 80) -> str:
    shown = " ".join([os.path.basename(argv[0]), *argv[1:]]) if argv else "?"
    shown = " ".join(shown.split())  # one line, whatever the arguments hold
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _program_names(argv: list[str]) -> list[str]:
    """Basenames without extension of argv[0] and, for a runtime, its script."""
    names = []
    for arg in argv[:3]:
        if arg.startswith("-"):
            continue
        base = os.path.basename(arg)
        names.append(base.split(".")[0] if base else base)
    return names


def _is_agent(argv: list[str]) -> bool:
    """The command line of pi or oh-my-pi."""
    if not argv:
        return False
    names = _program_names(argv)
    if names and names[0] in AGENT_NAMES:
        return True
    if names and names[0] in RUNTIMES:
        return any(name in AGENT_NAMES for name in names[1:]) or any(
            package in arg for arg in argv[1:3] for package in AGENT_PACKAGES
        )
    return False


def _is_runtime_or_agent(argv: list[str]) -> bool:
    names = _program_names(argv)
    return bool(names) and (names[0] in RUNTIMES or names[0] in AGENT_NAMES or _is_agent(argv))


def _fd_state(pid_dir: Path, identity: tuple[int, int]) -> str | None:
    """``"write"`` / ``"read"`` when the process holds the file open, else None."""
    fd_dir = pid_dir / "fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return None
    state = None
    for fd in fds:
        try:
            info = os.stat(fd_dir / fd)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) != identity:
            continue
        try:
            fdinfo = (pid_dir / "fdinfo" / fd).read_text()
        except OSError:
            fdinfo = ""
        flags = 0
        for line in fdinfo.splitlines():
            if line.startswith("flags:"):
                flags = int(line.split()[1], 8)
                break
        if flags & (os.O_WRONLY | os.O_RDWR):
            return "write"
        state = "read"
    return state


def _names_session(
    argv: list[str], cwd: str | None, real: Path, session_id: str | None, *, agent: bool
) -> bool:
    """Whether an argument is the session file (resolved from the process's cwd) or, for an
    agent, the session id. A bare basename is not enough: ``s.jsonl`` names many files."""
    for arg in argv[1:]:
        value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        if not value or value.startswith("-"):
            continue
        if agent and session_id and len(session_id) >= 8 and session_id in value:
            return True
        if real.name in value:
            candidate = value if os.path.isabs(value) or cwd is None else os.path.join(cwd, value)
            try:
                if Path(os.path.realpath(candidate)) == real:
                    return True
            except (OSError, ValueError):
                continue
    return False


def _names_other_session(argv: list[str], real: Path) -> bool:
    return any(arg.endswith(".jsonl") and real.name not in arg for arg in argv[1:])


def find_agents(
    session_path: str | os.PathLike[str],
    *,
    session_cwd: str | None = None,
    session_id: str | None = None,
    proc: Path = PROC,
) -> list[AgentProcess]:
    """Processes working on the session now (see the module doc); empty if none or no /proc.

    Args:
        session_path: the session file.
        session_cwd: the header's ``cwd`` (the directory the agent ran in), if known.
        session_id: the header's ``id``, if known.
        proc: the proc filesystem (a test may point it elsewhere).
    """
    real = resolved_session_path(session_path)
    found: dict[int, AgentProcess] = {}
    me = os.getpid()
    lock = read_publish_lock(real)
    if lock is not None and lock.alive and lock.pid is not None and lock.pid != me:
        argv = _read_cmdline(proc / str(lock.pid))
        found[lock.pid] = AgentProcess(
            lock.pid, _short_command(argv), f"holds oh-my-pi's lock {lock.path.name}"
        )
    try:
        target = os.stat(real)
        identity: tuple[int, int] | None = (target.st_dev, target.st_ino)
    except OSError:
        identity = None
    try:
        pids = [int(name) for name in os.listdir(proc) if name.isdigit()]
    except OSError:
        return list(found.values())
    wanted_cwd = os.path.realpath(session_cwd) if session_cwd else None
    for pid in sorted(pids):
        if pid == me or pid in found:
            continue
        pid_dir = proc / str(pid)
        argv = _read_cmdline(pid_dir)
        if not argv:
            continue  # kernel threads, zombies, processes we may not inspect
        agent = _is_agent(argv)
        try:
            cwd: str | None = os.readlink(pid_dir / "cwd")
        except OSError:
            cwd = None
        evidence = None
        state = _fd_state(pid_dir, identity) if identity is not None else None
        if state == "write":
            evidence = "has the session open for writing"
        elif state == "read" and _is_runtime_or_agent(argv):
            evidence = "has the session open"
        elif _is_runtime_or_agent(argv) and _names_session(
            argv, cwd, real, session_id, agent=agent
        ):
            evidence = "names the session on its command line"
        elif (
            agent
            and wanted_cwd is not None
            and cwd is not None
            and os.path.realpath(cwd) == wanted_cwd
            and not _names_other_session(argv, real)
        ):
            evidence = f"is an agent running in {cwd}, the directory this session belongs to"
        if evidence is not None:
            found[pid] = AgentProcess(pid, _short_command(argv), evidence)
    return list(found.values())


# -- the safety net: our entries an agent's later entry left behind --------------------------


@dataclass(frozen=True, slots=True)
class OrphanedAppend:
    """An entry we appended that an agent's later entry left off the active path."""

    index: int
    """Our entry (its index in the session)."""
    bypassed_by: int
    """The agent's entry that continued from where the file's leaf was before ours."""

    def message(self, session: object) -> str:
        """What happened and the fix, for ``lint`` and the app."""
        entries = session.entries  # type: ignore[attr-defined]
        ours, theirs = entries[self.index], entries[self.bypassed_by]
        return (
            f"our {ours.type} {ours.id} (line {ours.line}) is off the active path: a later "
            f"entry {theirs.id} (line {theirs.line}) continued from {theirs.parent_id}, where "
            "the agent still was (it kept its place in memory). To put ours back, move the "
            f"leaf to it: `tui-compactor navigate {session.path} --to {ours.id}` "  # type: ignore[attr-defined]
            "(the agent's later entries stay in the file, on a side branch)."
        )


def orphaned_appends(session: Session) -> list[OrphanedAppend]:
    """Our entries that a later foreign entry bypassed, and that are off the active path.

    pi appends each entry to its in-memory leaf. If it ran while we appended ``E``, its next
    entry's parent is the entry that was the file's last one before ``E`` (the leaf pi still
    had), not ``E`` or what ``E`` moved the leaf to: that later entry is the evidence.
    Which entries are ours the reader noted while indexing (``Session.written_by_us``), so a
    session we never appended to costs nothing here.
    """
    entries = session.entries
    leaf = session.leaf
    if leaf is None:
        return []
    ours = [i for i in session.ours if i > 0 and not session.is_ancestor(i, leaf)]
    if not ours:
        return []
    # The entry before each of ours: its foreign children after ours are the evidence.
    wanted = {entries[i - 1].id for i in ours}
    foreign_children: dict[str, list[int]] = {}
    for position in range(ours[0], len(entries)):  # no copy of the tail
        entry = entries[position]
        if entry.parent_id in wanted and not session.written_by_us(entry.index):
            foreign_children.setdefault(entry.parent_id, []).append(entry.index)
    found = []
    for index in ours:
        later = [i for i in foreign_children.get(entries[index - 1].id, []) if i > index]
        if later:
            found.append(OrphanedAppend(index, later[0]))
    return found
