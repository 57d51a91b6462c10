"""What a stretch of agent work achieved, read from its tool calls (no model involved).

The offline summarizer reports outcomes, not logs: which files changed and how, which check
(tests, build, lint) passes or still fails at the end, what was committed, and which failures
are still open. A failure is *resolved* when a later run fixed it: a later passing run of the
same command (or of a broader one: ``pytest -q`` after ``pytest -q tests/x.py``), or a later
successful edit of the same file.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Literal

from tui_compactor.summarize.extract import (
    ToolCall,
    Transcript,
    defined_names,
    error_lines,
    first_line,
)

__all__ = [
    "CommandOutcome",
    "FileChange",
    "Failure",
    "Outcomes",
    "code_defined_names",
    "command_core",
    "command_title",
    "command_kind",
    "read_outcomes",
]

CommandKind = Literal["check", "commit", "explore", "action"]

_CD_PREFIX = re.compile(r"^\s*cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*")
_REDIRECT = re.compile(r"\s*(?:\d?>&\d|&?\d?>>?\s*/dev/null|\d?>\s*\S+)")
_CHECK = re.compile(
    r"(?:test|tests|pytest|jest|vitest|mocha|tox|nox|check|lint|build|tsc|tsgo|mypy|ruff|"
    r"flake8|eslint|biome|clippy|vet|typecheck|compile|test:\w+|check:\w+|lint:\w+)"
)
_EXPLORE = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "rg",
        "ag",
        "find",
        "fd",
        "wc",
        "awk",
        "echo",
        "pwd",
        "tree",
        "which",
        "file",
        "stat",
        "du",
        "less",
        "more",
        "diff",
        "type",
        "env",
        "printenv",
        "date",
        "whoami",
        "sort",
        "uniq",
        "cut",
        "jq",
        "true",
    }
)
_GIT_LOOK = frozenset({"status", "diff", "log", "show", "branch", "remote", "blame", "grep"})
_FAILED_OUTPUT = re.compile(
    r"(?:\b[1-9]\d* (?:failed|errors?|failures?)\b|\bFAILED\b|\berror TS\d+|^\s*error\b|"
    r"\bnpm (?:error|ERR!)|^FAIL\b|Traceback \(most recent call last\)|\bpanicked at\b|"
    r"Command exited with code [1-9])",
    re.MULTILINE | re.IGNORECASE,
)
_PASS_LINE = re.compile(
    r"(?:\b\d+ passed\b|\bChecked \d+ files?\b|\b0 (?:errors?|failed)\b|\bok\b|\bpassed\b|"
    r"\bSuccess|\bFinished\b|\bAll (?:checks|tests) passed|\bno issues found\b|\bNo fixes)",
    re.IGNORECASE,
)
_COMMIT_MESSAGE = re.compile(r"""\s-(?:a?m|-message)[= ]\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_NOISE_LINE = re.compile(r"^[.\sFEsx]*$|^\s*>|^\s*$")
_PROCEDURAL = re.compile(
    r"^(?:(?:ok(?:ay)?|good|great|now|first|next|then|alright)[,!.]?\s+)*"
    r"(?:let me|let's|i'll|i will|i need to|now i)\b",
    re.IGNORECASE,
)
_FLUFF = re.compile(
    r"^(?:yes|yeah|yep|no|ok(?:ay)?|good|great|perfect|excellent|nice|right|sure|done|got it|"
    r"you'?re (?:absolutely |totally |completely )?right|good (?:catch|point|idea)|"
    r"(?:that )?makes sense)\b",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    {
        "for",
        "with",
        "private",
        "public",
        "protected",
        "static",
        "const",
        "let",
        "var",
        "async",
        "the",
        "that",
        "this",
        "and",
        "declarations",
        "checking",
        "definitions",
        "annotations",
        "aliases",
        "parameters",
        "inference",
        "errors",
        "safety",
        "hints",
        "check",
        "is",
        "of",
    }
)


def command_core(command: str) -> str:
    """The command without directory changes, pipes to a pager/filter and redirections.

    ``cd /repo && npm run check 2>&1 | tail -10`` -> ``npm run check``.
    """
    lines = [line.strip() for line in command.strip().splitlines() if line.strip()]
    # A script: its first line that does more than change directory stands for it.
    steps = [
        line
        for line in lines
        if not re.fullmatch(r"cd\s+\S+\s*;?", line) and not line.startswith("#")
    ]
    text = " ".join((steps or lines or [""])[0].split())
    while True:
        shorter = _CD_PREFIX.sub("", text, count=1)
        if shorter == text:
            break
        text = shorter
    text = re.split(r"\s\|\s|\s\|(?=\S)|(?<=\S)\|\s", text, maxsplit=1)[0]
    text = _REDIRECT.sub("", text)
    return " ".join(text.split()).rstrip(";&") or " ".join(command.split())


def command_title(command: str) -> str:
    """How a command is shown: its first line when it is one line, else the script's first
    comment (``# Fix imports``) or first real step, with the number of lines."""
    lines = [line.strip() for line in command.strip().splitlines() if line.strip()]
    if len(lines) <= 1:
        return first_line(command, 160)
    comment = next((line.lstrip("# ").strip() for line in lines if line.startswith("#")), None)
    title = comment or command_core(command)
    return f"{first_line(title, 120)} ({len(lines)}-line script)"


def _words(core: str) -> list[str]:
    try:
        return shlex.split(core)
    except ValueError:
        return core.split()


def command_kind(command: str) -> CommandKind:
    """``check`` (tests, build, lint), ``commit``, ``explore`` (looking around) or ``action``."""
    core = command_core(command)
    words = _words(core)
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program == "git" and len(words) > 1:
        if words[1] == "commit" or re.search(r"&&\s*git commit\b", command):
            return "commit"
        if words[1] in _GIT_LOOK:
            return "explore"
    if re.search(r"\bgit commit\b", command):
        return "commit"
    if program in _EXPLORE or (program == "sed" and "-n" in words[1:3]):
        return "explore"
    # The program and its subcommands name a check (`npm run check`, `cargo test`, `pytest`),
    # not its arguments (`sed -i ... test/a.ts` is an edit).
    head = [w for w in words[:4] if not (w.startswith("-") or "/" in w or "." in w.strip("."))]
    if any(_CHECK.fullmatch(w.rsplit("/", 1)[-1]) for w in [program, *head]):
        return "check"
    return "action"


def _broader_or_same(passing: str, failing: str) -> bool:
    """Whether a passing run of ``passing`` covers what ``failing`` ran."""
    if passing == failing:
        return True
    a, b = _words(passing), _words(failing)
    if not a or not b or a[0] != b[0]:
        return False
    if len(a) > 1 and len(b) > 1 and not a[1].startswith("-") and a[1] != b[1]:
        return False  # another subcommand: `npm run lint` does not cover `npm run test`
    targets_a = {w for w in a[1:] if not w.startswith("-")}
    targets_b = {w for w in b[1:] if not w.startswith("-")}
    return targets_a <= targets_b


def _failed(call: ToolCall, kind: CommandKind) -> bool:
    if call.is_error:
        return True
    return kind == "check" and bool(call.result) and bool(_FAILED_OUTPUT.search(call.result or ""))


def _result_line(call: ToolCall, failed: bool) -> str:
    """The line of a result that says how it went."""
    text = call.result or ""
    if failed:
        for line in error_lines(text, 3):
            if not line.startswith(">"):
                return first_line(line, 160)
        return first_line(text, 160) or "failed"
    lines = [line.strip() for line in text.splitlines()]
    for line in reversed(lines):
        if _PASS_LINE.search(line) and not _NOISE_LINE.match(line):
            return first_line(line, 120)
    for line in lines:
        if not _NOISE_LINE.match(line):
            return first_line(line, 120)
    return "(no output)"


def _note(text: str | None) -> str | None:
    """The first telling sentence of an assistant's remark (not "Good catch.", not "Let me
    check the file"), or None."""
    if not text:
        return None
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text.strip())[:3]:
        sentence = sentence.strip().rstrip(":")
        if len(sentence) < 12 or _PROCEDURAL.match(sentence) or _FLUFF.match(sentence):
            continue
        return sentence if len(sentence) <= 160 else sentence[:159] + "…"
    return None


def code_defined_names(text: str) -> list[str]:
    """``defined_names`` without the English words a comment can put after ``type``/``for``."""
    return [name for name in defined_names(text) if name.lower() not in _NOT_NAMES]


@dataclass
class FileChange:
    """What happened to one file."""

    path: str
    edits: int = 0
    writes: int = 0
    created: bool = False
    failed_edits: int = 0
    changes: list[str] = field(default_factory=list)
    """Short descriptions of the last changes (``ttl = 60`` → ``ttl = 120``, ``+12 −3 lines``)."""
    names: list[str] = field(default_factory=list)
    """Names the new text defines."""
    note: str | None = None
    """What the assistant said when it made the last change."""
    order: int = 0

    def describe(self) -> str:
        """``3 edits`` / ``created`` / ``written, 2 edits``."""
        parts = []
        if self.created:
            parts.append("created")
        elif self.writes:
            parts.append("rewritten" if self.writes == 1 else f"rewritten {self.writes}×")
        if self.edits:
            parts.append("1 edit" if self.edits == 1 else f"{self.edits} edits")
        return ", ".join(parts) or "changed"


@dataclass
class CommandRun:
    """One run of a command."""

    command: str
    ok: bool
    line: str


@dataclass
class CommandOutcome:
    """Every run of one command (``core``), in order."""

    core: str
    kind: CommandKind
    runs: list[CommandRun] = field(default_factory=list)
    order: int = 0
    fixed_by: str | None = None
    """The command whose later passing run covered this one's failure (``pytest -q`` for a
    failed ``pytest -q tests/x.py``)."""
    fixed: list[tuple[str, CommandRun]] = field(default_factory=list)
    """Failed runs of other commands this one's passing run covered: (their core, the run)."""

    @property
    def last(self) -> CommandRun:
        """The latest run."""
        return self.runs[-1]

    @property
    def passes(self) -> bool:
        """Whether the latest run succeeded."""
        return self.last.ok

    @property
    def failures(self) -> list[CommandRun]:
        """Runs that failed."""
        return [run for run in self.runs if not run.ok]

    @property
    def still_fails(self) -> bool:
        """The latest run failed and no later run of it (or of a broader command) passed."""
        return not self.passes and self.fixed_by is None


@dataclass
class Failure:
    """A failed tool call and, when a later run fixed it, what fixed it."""

    what: str
    error: str
    resolved_by: str | None = None
    kind: str = "tool"


@dataclass
class Outcomes:
    """The outcomes of a region, in the order things happened."""

    files: dict[str, FileChange] = field(default_factory=dict)
    commands: dict[str, CommandOutcome] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    pending: list[ToolCall] = field(default_factory=list)
    reads: int = 0
    looked: int = 0
    defined: dict[str, list[str]] = field(default_factory=dict)
    """Names defined in the files read or written, by path."""

    @property
    def open_failures(self) -> list[Failure]:
        """Failures no later run fixed."""
        return [f for f in self.failures if f.resolved_by is None]

    @property
    def resolved_failures(self) -> list[Failure]:
        """Failures a later run fixed."""
        return [f for f in self.failures if f.resolved_by is not None]

    def fixes(self, text: str) -> bool:
        """Whether this region fixed a failure an older summary reports in ``text``: a command
        in backticks that passes here (the same or a broader run), or a file edited here."""
        for span in re.findall(r"`([^`]+)`", text):
            if span in self.files and (self.files[span].edits or self.files[span].writes):
                return True
            core = command_core(span)
            if any(
                c.passes and c.kind in ("check", "action") and _broader_or_same(c.core, core)
                for c in self.commands.values()
            ):
                return True
        return False

    def checks(self) -> list[CommandOutcome]:
        """Check commands (tests, build, lint), newest last."""
        return sorted(
            (c for c in self.commands.values() if c.kind == "check"), key=lambda c: c.order
        )

    def actions(self) -> list[CommandOutcome]:
        """Commands that changed something (not checks, commits or looking around)."""
        return sorted(
            (c for c in self.commands.values() if c.kind == "action"), key=lambda c: c.order
        )


def _one_line(text: str, limit: int = 50) -> str | None:
    text = text.strip()
    if "\n" in text or len(text) > limit or "`" in text:
        return None
    return text


def _edit_pairs(arguments: dict[str, object]) -> list[tuple[str, str]]:
    """(old, new) texts of an edit call, in pi's (``oldText``/``newText``) or a list form."""
    pairs: list[tuple[str, str]] = []
    old, new = (
        arguments.get("oldText", arguments.get("old_string")),
        arguments.get("newText", arguments.get("new_string")),
    )
    if isinstance(old, str) and isinstance(new, str):
        pairs.append((old, new))
    edits = arguments.get("edits")
    for item in edits if isinstance(edits, list) else []:
        if isinstance(item, dict):
            old, new = (
                item.get("oldText", item.get("old_string")),
                item.get("newText", item.get("new_string")),
            )
            if isinstance(old, str) and isinstance(new, str):
                pairs.append((old, new))
    return pairs


def _describe_edit(pairs: list[tuple[str, str]]) -> tuple[str | None, list[str]]:
    """A short description of an edit and the names its new text defines."""
    names = [name for _, new in pairs for name in code_defined_names(new)]
    if len(pairs) == 1:
        old, new = (_one_line(pairs[0][0]), _one_line(pairs[0][1]))
        if old is not None and new is not None and old and new:
            return f"`{old}` → `{new}`", names
    if not pairs:
        return None, names
    added = sum(new.count("\n") + 1 for _, new in pairs)
    removed = sum(old.count("\n") + 1 for old, _ in pairs)
    return f"+{added} −{removed} lines", names


def read_outcomes(transcript: Transcript) -> Outcomes:
    """Outcomes of the tool calls of ``transcript`` (see the module doc)."""
    outcomes = Outcomes()
    read_before: set[str] = set()
    step = 0
    for call in transcript.tool_calls:
        step += 1
        path = call.path
        if call.result is None:
            outcomes.pending.append(call)
            continue
        if call.command:
            _command(outcomes, call, step)
            continue
        if call.name == "read":
            outcomes.reads += 1
            if path and not call.is_error:
                read_before.add(path)
                for name in code_defined_names(call.result):
                    _remember(outcomes.defined, path, name)
            continue
        if call.name in ("write", "edit") and path:
            change = outcomes.files.get(path)
            if call.is_error:
                if change is None:
                    change = outcomes.files[path] = FileChange(path, order=step)
                change.failed_edits += 1
                outcomes.failures.append(
                    Failure(
                        f"{call.name} `{path}`",
                        first_line(call.result, 160) or "failed",
                        kind="file",
                    )
                )
                continue
            if change is None:
                change = outcomes.files[path] = FileChange(path)
            change.order = step
            if call.name == "write":
                content = call.arguments.get("content")
                if change.edits == 0 and change.writes == 0 and path not in read_before:
                    change.created = True
                change.writes += 1
                if isinstance(content, str):
                    lines = content.count("\n") + (not content.endswith("\n"))
                    change.changes.append(f"{lines} lines")
                    for name in code_defined_names(content):
                        _remember(outcomes.defined, path, name)
                        _add_unique(change.names, name)
            else:
                change.edits += 1
                description, names = _describe_edit(_edit_pairs(call.arguments))
                if description:
                    change.changes.append(description)
                for name in names:
                    _add_unique(change.names, name)
                    _remember(outcomes.defined, path, name)
            change.note = _note(call.note) or change.note
            del change.changes[:-2]
            for failure in outcomes.failures:
                if (
                    failure.resolved_by is None
                    and failure.kind == "file"
                    and (failure.what.endswith(f"`{path}`"))
                ):
                    failure.resolved_by = f"a later {call.name} of `{path}` succeeded"
            continue
        if call.is_error:
            outcomes.failures.append(
                Failure(call.describe(), first_line(call.result, 160) or "failed", kind=call.name)
            )
        else:
            for failure in outcomes.failures:
                if (
                    failure.resolved_by is None
                    and failure.kind == call.name
                    and (failure.what == call.describe())
                ):
                    failure.resolved_by = "a later call succeeded"
    return outcomes


def _command(outcomes: Outcomes, call: ToolCall, step: int) -> None:
    command = call.command or ""
    kind = command_kind(command)
    core = command_core(command)
    failed = _failed(call, kind)
    if kind == "explore":
        outcomes.looked += 1
        return
    if kind == "commit" and not failed:
        match = _COMMIT_MESSAGE.search(command)
        message = (match.group(1) or match.group(2)) if match else None
        if message:
            _add_unique(outcomes.commits, first_line(message.replace('\\"', '"'), 120))
    outcome = outcomes.commands.get(core)
    if outcome is None:
        outcome = outcomes.commands[core] = CommandOutcome(core, kind)
    outcome.order = step
    outcome.runs.append(CommandRun(command, not failed, _result_line(call, failed)))
    if failed:
        outcomes.failures.append(Failure(f"`{core}`", outcome.runs[-1].line, kind="command"))
        return
    for failure in outcomes.failures:
        if (
            failure.resolved_by is None
            and failure.kind == "command"
            and _broader_or_same(core, failure.what.strip("`"))
        ):
            failure.resolved_by = f"`{core}` passed later"
    for other in outcomes.commands.values():
        if (
            other is not outcome
            and not other.passes
            and other.fixed_by is None
            and (_broader_or_same(core, other.core))
        ):
            other.fixed_by = core
            outcome.fixed += [(other.core, run) for run in other.failures]


def _add_unique(target: list[str], value: str) -> None:
    if value not in target:
        target.append(value)


def _remember(defined: dict[str, list[str]], path: str, name: str) -> None:
    names = defined.setdefault(path, [])
    if name not in names:
        names.append(name)
