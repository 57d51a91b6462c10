"""The offline summarizer: deterministic, extractive, no network.

It builds the same sections the prompts ask a model for, straight from the messages: the
user's requests become the goal and constraints, tool calls with their outcomes become
Done / In Progress, error results become Blocked, files and commands go to Critical Context, and
the last unanswered request is kept verbatim. Output is streamed in small pieces like a model's,
and says that it is offline.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from tui_compactor.summarize.base import Summarizer, SummaryRequest
from tui_compactor.summarize.extract import (
    Transcript,
    code_names,
    error_lines,
    first_line,
    mentioned_paths,
    read_transcript,
    request_names,
    user_numbers,
)
from tui_compactor.summarize.outcomes import (
    Outcomes,
    command_core,
    command_kind,
    command_title,
    read_outcomes,
)
from tui_compactor.textsafe import utf8_length
from tui_compactor.wording import count_of

__all__ = ["OFFLINE_LABEL", "OfflineSummarizer", "offline_text", "parse_sections"]

OFFLINE_LABEL = "offline"
OFFLINE_NOTE = "Offline extractive summary (tui-compactor, no model was called)."

_CONSTRAINT_WORDS = re.compile(
    r"\b(?:must|mustn't|don't|do not|never|always|only|prefer|should|shouldn't|avoid|without|"
    r"keep|make sure|no more than|at most|at least|instead of|please use|use)\b",
    re.IGNORECASE,
)
# A constraint candidate must read as a directive, not as a fragment or a remark:
# it opens with a directive word ("don't", "never", "use", "keep"...),
_DIRECTIVE_START = re.compile(
    r"^(?:don'?t|do not|never|always|avoid|only|make sure|ensure|keep|use|prefer|stick to|"
    r"must|no\s+(?!,)\w)",
    re.IGNORECASE,
)
# or opens with a plain imperative verb and carries a constraint word ("write it without deps"),
_IMPERATIVE_START = re.compile(
    r"^(?:add|write|make|put|leave|run|test|name|store|limit|target|support|handle|follow|stop|"
    r"treat|return|call|commit|check|build|format|print|log|send|read|load|save|set|give|show|"
    r"report|refactor|split|move|rename|remove|delete|create|implement|fix|change|update|"
    r"replace|do)\b",
    re.IGNORECASE,
)
# or has a short subject followed by a modal ("tests must stay fast", "we should not..."),
_MODAL_CLAUSE = re.compile(
    r"^(?!(?:\S+\s+){0,3}?(?:where|which|who|whose|when|how|what|if|whether)\b)"
    r"(?:\S+\s+){1,3}?(?:must|mustn't|should|shouldn't|(?:is|are) not allowed|may not)\b",
    re.IGNORECASE,
)
# or states the user's own preference ("I prefer...", "we don't want...").
_PREFERENCE = re.compile(
    r"^(?:i|we)\s+(?:(?:really|would|do|don't|do not|'d|still)\s+)*"
    r"(?:prefer|want|like|rather)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"^(?:and|also|but|so|ok(?:ay)?|alright|oh|btw|then|plus|please|pls)\b[,:]?\s+",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^\s*(?:(?:[-*+•]|\d+[.)]|\[[ xX]\])\s+)+")
_ERROR_START = re.compile(r"^(?:[A-Z]\w*(?:Error|Exception)|Error|error|ERR!?|FAIL|fatal)\b[:\[ ]")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_DECISION_WORDS = re.compile(
    r"\b(?:decided|decision|instead of|because|rather than|going with|the fix is|"
    r"the cause is|root cause|switch(?:ed)? to|chose|we should|the plan is|trade-?off)\b",
    re.IGNORECASE,
)
_PROCEDURAL = re.compile(
    r"^(?:(?:now |first,? |next,? |then,? )?(?:let me|let's)|now i'll|now i will)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

MAX_FILES = 16
MAX_ACTIONS = 16
MAX_LIST = 8


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in _SENTENCE.split(text) if s and s.strip()]


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote(text: str) -> str:
    """``text`` as a Markdown block quote, verbatim (line breaks kept)."""
    return "\n".join("> " + line if line else ">" for line in text.strip().splitlines())


def _strip_marker(text: str) -> str:
    """``"- - foo"`` / ``"1. foo"`` -> ``"foo"`` (every leading list marker removed)."""
    return _LIST_MARKER.sub("", text).strip()


def _looks_pasted(line: str) -> bool:
    """A line of pasted data (JSON, logs, quotes, shell) rather than the user's own words."""
    stripped = line.strip()
    return (
        '{"' in stripped
        or '":' in stripped
        or "\\n" in stripped
        or stripped.startswith((">", "$ ", "{", "[", "at ", 'File "', "Traceback", "~/", "➜", "❯"))
        or line.startswith(("    ", "\t"))  # indented: code or a wrapped log line
        or (" " not in stripped and re.search(r"[:/\\]\w", stripped) is not None)  # node:fs:443
        or _ERROR_START.match(stripped) is not None
        or (len(stripped) > 400 and stripped.count(" ") < len(stripped) / 20)
    )


def _prose_lines(text: str) -> list[str]:
    """The user's own lines of ``text``, list markers removed.

    Left out: fenced code, lines of pasted data, and the lines that follow a pasted line in
    the same paragraph (a wrapped log or error message goes on until a blank line).
    """
    lines: list[str] = []
    in_fence = False
    in_paste = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not line.strip():
            in_paste = False
            continue
        if in_paste or _looks_pasted(line):
            in_paste = True
            continue
        lines.append(_strip_marker(line))
    return [line for line in lines if line]


def _prose(text: str) -> str:
    """The user's own words of a request (pasted data left out), or the text if that is all."""
    return " ".join(_prose_lines(text)) or text


def _is_constraint(sentence: str) -> bool:
    """A complete directive or preference sentence (not a question, not a fragment)."""
    text = sentence.strip()
    if not text or text.endswith("?") or len(text) > 300 or len(text.split()) < 3:
        return False
    while True:
        shorter = _FILLER.sub("", text, count=1)
        if shorter == text:
            break
        text = shorter
    if _DIRECTIVE_START.match(text) or _PREFERENCE.match(text) or _MODAL_CLAUSE.match(text):
        return True
    return bool(_IMPERATIVE_START.match(text) and _CONSTRAINT_WORDS.search(text))


def _constraints(transcript: Transcript) -> list[str]:
    found: list[str] = []
    seen: set[str] = set()
    for request in transcript.user_requests:
        for line in _prose_lines(request):
            for sentence in _sentences(line):
                sentence = _strip_marker(sentence)
                if not _is_constraint(sentence):
                    continue
                clipped = _clip(sentence, 200)
                key = _item_key(clipped)
                if key not in seen:
                    seen.add(key)
                    found.append(clipped)
    return found


def _decisions(transcript: Transcript) -> list[str]:
    found: list[str] = []
    for text in transcript.assistant_texts:
        for sentence in _sentences(text):
            if (
                _DECISION_WORDS.search(sentence)
                and not sentence.startswith("#")
                and not _PROCEDURAL.match(sentence)
                and len(sentence) <= 300
            ):
                clipped = _clip(sentence, 200)
                if clipped not in found:
                    found.append(clipped)
    return found


def _progress(
    transcript: Transcript,
    outcomes: Outcomes,
    focus: Focus | None = None,
    *,
    note_open_request: bool = True,
) -> tuple[list[str], list[str], list[str]]:
    """(done, in progress, blocked) bullet texts: outcomes, not a log of tool calls.

    Done: each changed file once (how, and what the assistant said it was for), each check
    with its final status, commits, other commands that changed something. Blocked: only the
    failures no later run fixed. Items matching ``focus`` come first and are never cut.
    """
    files = [
        f for f in sorted(outcomes.files.values(), key=lambda f: f.order) if f.edits or f.writes
    ]
    base = _common_dir([f.path for f in files])
    changed: list[str] = []
    for change in files:
        text = f"`{change.path[len(base) :]}`: {change.describe()}"
        details = [*change.changes[-1:]]
        if change.names:
            details.append("defines " + ", ".join(f"`{n}`" for n in change.names[:4]))
        if details:
            text += " (" + "; ".join(details) + ")"
        if change.note:
            text += f" — {change.note}"
        changed.append(text)
    checks: list[str] = []
    for check in outcomes.checks():
        if not check.passes:
            continue
        text = f"`{check.core}` passes: {check.last.line}"
        failures = [(check.core, run) for run in check.failures] + check.fixed
        if failures:
            first_core, first = failures[0]
            of = f" of `{first_core}`" if first_core != check.core else ""
            text += f" (after {count_of(len(failures), 'failed run')}; first{of}: {first.line})"
        if check.last.command.strip() != check.core:
            text += f" — ran as `{command_title(check.last.command)}`"
        checks.append(text)
    actions = [
        f"Ran `{command_title(action.last.command)}`"
        + (f" → {action.last.line}" if action.last.line != "(no output)" else "")
        for action in outcomes.actions()
        if action.passes
    ]
    # Changed files and checks matter most; commits and other commands are the newest few.
    done = [
        *_rank(changed, focus, keep=MAX_FILES),
        *_rank(checks, focus, keep=MAX_LIST),
        *_rank([f"Committed: “{m}”" for m in outcomes.commits], focus, keep=MAX_LIST),
        *_rank(actions, focus, keep=MAX_ACTIONS),
    ]
    in_progress = [f"{call.describe()} (no result yet)" for call in outcomes.pending]
    if note_open_request and transcript.last_unanswered_request and not in_progress:
        in_progress.append("Answering the last request (quoted under Critical Context)")
    blocked: list[str] = []
    for failure in outcomes.open_failures:
        what = _clip_code(failure.what)
        if failure.kind == "command":
            blocked.append(f"{what} still fails: {failure.error}")
        else:
            blocked.append(f"{what} failed: {failure.error}")
    blocked = _rank(_dedupe(blocked), focus, keep=MAX_LIST)
    return done, in_progress, blocked


def _common_dir(paths: list[str]) -> str:
    """The directory all ``paths`` share (with its trailing ``/``), when there are two or more
    (the full paths stay in Critical Context and the file list)."""
    if len(paths) < 2:
        return ""
    parts = [p.split("/")[:-1] for p in paths]
    common: list[str] = []
    for names in zip(*parts, strict=False):
        if len(set(names)) != 1:
            break
        common.append(names[0])
    return "/".join(common) + "/" if len(common) > 1 else ""


def _clip_code(text: str, limit: int = 100) -> str:
    """A backticked command shortened to ``limit`` characters, still in backticks."""
    if text.startswith("`") and text.endswith("`") and len(text) > limit + 2:
        return text[: limit + 1] + "…`"
    return text


def _dedupe(items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _rank(
    items: list[str],
    focus: Focus | None,
    *,
    keep: int,
    newest: bool = True,
    what: str = "items",
) -> list[str]:
    """Items matching ``focus`` first (all kept), then others up to ``keep`` (the newest, or
    the first ones with ``newest=False``), with a count of those left out."""
    matching = [item for item in items if focus is not None and focus.matches(item)]
    others = [item for item in items if item not in matching]
    room = max(0, keep - len(matching))
    hidden = len(others) - room
    if hidden <= 0:
        return [*matching, *others]
    if newest:
        return [*matching, f"({hidden} earlier {what} not listed)", *others[len(others) - room :]]
    return [*matching, *others[:room], f"({hidden} more {what} not listed)"]


def _bullets(items: list[str], empty: str | None = None, prefix: str = "- ") -> list[str]:
    if not items:
        return [f"- {empty}"] if empty else []
    return [("- " if item.startswith("(") else prefix) + item for item in items]


def parse_sections(text: str) -> dict[str, list[str]]:
    """Split a Markdown summary into ``{heading: body lines}`` (``##`` and ``###`` headings).

    Blank lines are dropped; ``#`` lines inside fenced code are not headings.
    """
    return {
        heading: [line for item in items for line in item.splitlines() if line.strip()]
        for heading, items in _section_items(text).items()
    }


def _section_items(text: str) -> dict[str, list[str]]:
    """``{heading: items}``: an item is one bullet with its continuation lines, one paragraph
    or one fenced code block (kept whole, blank lines included). Text before the first heading
    is under ``""``."""
    sections: dict[str, list[str]] = {}
    current = ""
    item: list[str] = []
    in_fence = False

    def flush() -> None:
        if item:
            sections.setdefault(current, []).append("\n".join(item).rstrip())
            item.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            if not in_fence:
                flush()
            item.append(line.rstrip())
            in_fence = not in_fence
            if not in_fence:
                flush()
            continue
        if in_fence:
            item.append(line.rstrip())
            continue
        heading = re.match(r"^(#{2,3})\s+(.*\S)\s*$", line)
        if heading:
            flush()
            current = heading.group(2)
            sections.setdefault(current, [])
        elif not line.strip():
            flush()
        elif _LIST_MARKER.match(line) and not line.startswith((" ", "\t")):
            flush()
            item.append(line.rstrip())
        elif line.startswith(">") and item and not item[-1].startswith(">"):
            flush()
            item.append(line.rstrip())
        else:
            item.append(line.rstrip())
    flush()
    return sections


def _item_key(item: str) -> str:
    """What two items are compared by when deduplicating (markers, emphasis, case ignored)."""
    text = _strip_marker(item)
    text = text.replace("**", "").replace("[x]", "").replace("[ ]", "")
    return " ".join(text.lower().split())


def _merge_lines(previous: list[str], new: list[str]) -> list[str]:
    merged: list[str] = []
    seen: set[str] = set()
    for line in [*previous, *new]:
        key = _item_key(line)
        if key not in seen:
            seen.add(key)
            merged.append(line)
    return merged


_STOPWORDS = frozenset(
    """
a about above after again all also an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has
have having he her here hers him his how i if in into is it its itself just me more most my no
nor not now of off on once only or other our ours out over own same she should so some such
than that the their them then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours
focus focusing keep keeping mention mentions mentioned include including summary summarize
summarise please make sure details detail especially particular particularly important
regarding around things stuff everything anything something exactly written write
""".split()
)
_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”|(?<!\w)'([^'\n]+)'(?!\w)")
_LABELLED = re.compile(r"^\s*[-*]\s+[\w ()]+:\s+(.+?)\s*$")
_WORD = re.compile(r"[A-Za-z][\w-]{3,}")
_BARE_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:%|ms|s|k|KB|MB|GB)?(?![\w.])")
MAX_FOCUS_EXCERPTS = 16


@dataclass
class Focus:
    """Custom instructions as the offline summarizer can honour them: terms to match.

    The offline summarizer cannot follow an instruction; it can find what the instruction
    names (quoted text, numbers, paths, code names, other words) in the region, rank the
    matching items first, never cut them, and quote where each term appears.
    """

    instruction: str
    terms: list[str]
    _patterns: list[re.Pattern[str]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._patterns = [_term_pattern(term) for term in self.terms]

    def matches(self, text: str) -> bool:
        """Whether ``text`` contains any of the terms."""
        return any(p.search(text) for p in self._patterns)

    def found(self, term: str, text: str) -> re.Match[str] | None:
        """Where ``term`` (one of ``terms``) occurs in ``text``."""
        return self._patterns[self.terms.index(term)].search(text)


def _term_pattern(term: str) -> re.Pattern[str]:
    """Numbers match as whole numbers (``37`` not in ``137``); words at a word start."""
    escaped = re.escape(term)
    if _BARE_NUMBER.fullmatch(term):
        return re.compile(r"(?<![\d.])" + escaped + r"(?![\d])")
    if re.fullmatch(r"[A-Za-z][\w-]*", term):
        return re.compile(r"(?<![\w])" + escaped, re.IGNORECASE)
    return re.compile(escaped, re.IGNORECASE)


def read_focus(instruction: str | None) -> Focus | None:
    """The terms of custom instructions (None without instructions)."""
    if not instruction or not instruction.strip():
        return None
    terms: list[str] = []

    def add(term: str) -> None:
        term = term.strip().strip(".,;:")
        if term and term.lower() not in {t.lower() for t in terms}:
            terms.append(term)

    rest: list[str] = []
    for line in instruction.splitlines():
        labelled = _LABELLED.match(line)
        if labelled:  # "- file path: src/a.py" (the audit's regenerate instructions)
            add(first_line(labelled.group(1), 200))
        else:
            rest.append(line)
    text = "\n".join(rest)
    for match in _QUOTED.finditer(text):
        add(next(g for g in match.groups() if g))
    text = _QUOTED.sub(" ", text)
    for term in [*mentioned_paths(text), *code_names(text), *request_names(text)]:
        add(term)
    for match in _BARE_NUMBER.finditer(text):
        add(match.group(0))
    for match in _WORD.finditer(text):
        word = match.group(0)
        if word.lower() not in _STOPWORDS and not any(word in t for t in terms):
            add(word)
    return Focus(instruction.strip(), terms)


def _region_lines(transcript: Transcript) -> list[tuple[str, str]]:
    """(where, line) for every line of the region the focus can be found in."""
    lines: list[tuple[str, str]] = []
    for text in transcript.user_requests:
        lines += [("user", line) for line in text.splitlines()]
    for text in transcript.assistant_texts:
        lines += [("assistant", line) for line in text.splitlines()]
    for call in transcript.tool_calls:
        lines.append(("call", call.describe()))
        for value in call.arguments.values():
            if isinstance(value, str) and value != call.path and value != call.command:
                lines += [(call.describe(), line) for line in value.splitlines()]
        if call.result:
            where = f"result of {call.describe()}"
            lines += [(where, line) for line in call.result.splitlines()]
    return lines


def _excerpt(line: str, start: int, end: int, width: int = 160) -> str:
    """``line`` cut to about ``width`` characters around ``start:end`` (the match kept whole)."""
    line = line.strip()
    if len(line) <= width:
        return line
    room = max(20, (width - (end - start)) // 2)
    left = max(0, start - room)
    right = min(len(line), end + room)
    return ("…" if left else "") + line[left:right] + ("…" if right < len(line) else "")


def _focus_context(focus: Focus, transcript: Transcript) -> list[str]:
    """Critical Context lines for a focus: what was found where, what was not, and the limit."""
    out = [f"- Focus requested: {_clip(focus.instruction, 400)}"]
    if not focus.terms:
        out.append(
            "- This instruction cannot be followed offline: it names nothing to look "
            "for (no quoted text, names, numbers or words). Use a model profile to "
            "apply it."
        )
        return out
    out.append(
        "- Offline, instructions are not followed, only matched: items mentioning "
        + ", ".join(f"“{_clip(t, 60)}”" for t in focus.terms[:12])
        + " are listed first and kept whole; a model profile can apply the rest."
    )
    region = _region_lines(transcript)
    missing: list[str] = []
    shown = 0
    per_term = max(1, min(3, MAX_FOCUS_EXCERPTS // max(1, len(focus.terms))))
    for term in focus.terms:
        hits = 0
        for where, line in region:
            match = focus.found(term, line)
            if match is None:
                continue
            excerpt = _excerpt(line, match.start(), match.end())
            item = f"- “{_clip(term, 60)}” in {where}: {excerpt}"
            if item not in out:
                out.append(item)
                hits += 1
                shown += 1
            if hits >= per_term or (shown >= MAX_FOCUS_EXCERPTS and hits):
                break
        if not hits:
            missing.append(term)
    if missing:
        out.append(
            "- Not found in this part of the session: "
            + ", ".join(f"“{_clip(t, 60)}”" for t in missing)
        )
    return out


def _reported_errors(transcript: Transcript) -> list[str]:
    """Error lines the user pasted into requests (``Error: ENOENT ...``), each once."""
    found: list[str] = []
    for request in transcript.user_requests:
        if _prose(request) == request:
            continue  # nothing pasted
        for line in error_lines(request, 2):
            if _ERROR_START.match(line) or "Error" in line or "error" in line:
                clipped = _clip(line, 160)
                if clipped not in found:
                    found.append(clipped)
    return found[-MAX_LIST:]


def _gist(text: str, limit: int) -> str:
    """A request in about ``limit`` characters: its first sentence, then the sentences that
    carry names, paths or numbers (the details a handoff needs), in order."""
    own = " ".join(_prose_lines(text))
    if not own or (len(own.split()) <= 4 and text.count("\n") >= 3):
        # Nothing (or a stray word) but pasted output: say what it shows.
        shown = next(iter(error_lines(text, 1)), None) or first_line(text, limit)
        return _clip(f"(pasted output) {shown}", limit)
    prose = _prose(text)
    whole = " ".join(prose.split())
    if len(whole) <= limit:
        return whole
    sentences = _sentences(prose)
    kept = [sentences[0]]
    for sentence in sentences[1:]:
        if (
            mentioned_paths(sentence)
            or request_names(sentence)
            or code_names(sentence)
            or (user_numbers(sentence))
        ):
            kept.append(sentence)
    return _clip(" … ".join(kept), limit)


def _trivial(request: str) -> bool:
    """A request too short to be a goal (``ok``, ``yo``, ``ls``, ``can leave it``)."""
    prose = _prose(request)
    return len(prose.split()) <= 3 and not (
        mentioned_paths(prose)
        or request_names(prose)
        or code_names(prose)
        or user_numbers(prose)
        or prose.rstrip().endswith("?")
        or _IMPERATIVE_START.match(prose.strip())
    )


def _names_by_file(outcomes: Outcomes, transcript: Transcript, focus: Focus | None) -> list[str]:
    """``- Names by file: `a.py`: `load`, `Loader`; ...`` (modified files first)."""
    order = [*transcript.modified_files, *transcript.read_files]
    parts: list[str] = []
    for path in order:
        names = outcomes.defined.get(path)
        if not names:
            continue
        ranked = [n for n in names if focus is not None and focus.matches(n)]
        ranked += [n for n in names if n not in ranked]
        parts.append(f"`{path.rsplit('/', 1)[-1]}`: " + ", ".join(f"`{n}`" for n in ranked[:8]))
        if len(parts) >= MAX_LIST:
            break
    return ["- Names by file: " + "; ".join(parts)] if parts else []


def _handoff(transcript: Transcript, focus_text: str | None) -> dict[str, list[str]]:
    """The compaction-summary sections as ``{heading: lines}`` (ordered)."""
    focus = read_focus(focus_text)
    outcomes = read_outcomes(transcript)
    requests = transcript.user_requests
    real = [r for r in requests if not _trivial(r)] or requests[:1]
    goal = [_gist(real[0], 400)] if real else ["(no user request in this part)"]
    later = [f"- Later: {_gist(r, 240)}" for r in real[1:]]
    goal += _rank(later, focus, keep=MAX_LIST, what="requests")
    done, in_progress, blocked = _progress(transcript, outcomes, focus)
    next_steps: list[str] = []
    if transcript.last_unanswered_request:
        next_steps.append("Answer the user's last request (verbatim under Critical Context).")
    next_steps += [
        f"Fix: {item.split(' still fails:')[0].split(' failed:')[0]} (under Blocked)"
        for item in blocked
        if not item.startswith("(")
    ][:3]
    next_steps += [f"Finish: {item}" for item in in_progress if not item.startswith("Answering")][
        :2
    ]
    if not next_steps:
        if transcript.assistant_texts:
            next_steps.append(f"Continue from: {first_line(transcript.assistant_texts[-1], 200)}")
        else:
            next_steps.append("Continue with the goal above.")
    critical: list[str] = []
    if focus is not None:
        critical += _focus_context(focus, transcript)
    if transcript.modified_files:
        modified = ", ".join(f"`{p}`" for p in transcript.modified_files)
        critical.append("- Modified files: " + modified)
    if transcript.read_files:
        critical.append("- Read files: " + ", ".join(f"`{p}`" for p in transcript.read_files))
    critical += _names_by_file(outcomes, transcript, focus)
    reported = _reported_errors(transcript)
    if reported:
        critical.append("- Errors the user reported: " + " · ".join(reported))
    looked = [count_of(outcomes.reads, "file read")] if outcomes.reads else []
    if outcomes.looked:
        looked.append(count_of(outcomes.looked, "search or listing", "searches or listings"))
    if looked:
        critical.append(f"- Looked around: {', '.join(looked)} (not listed).")
    if transcript.last_unanswered_request:
        critical.append("- Last user request, not yet answered (verbatim):")
        critical.append(_quote(transcript.last_unanswered_request))
    notes = [f"- {OFFLINE_NOTE}"]
    if transcript.summaries:
        notes.append(f"- The region held {len(transcript.summaries)} earlier summary block(s).")
    resolved = outcomes.resolved_failures
    for failure in resolved[-MAX_LIST:]:
        notes.append(
            f"- Failed, then fixed: {_clip_code(failure.what)}: {failure.error} "
            f"({failure.resolved_by})"
        )
    if len(resolved) > MAX_LIST:
        notes.append(f"- ({len(resolved) - MAX_LIST} earlier fixed failures not listed)")
    return {
        "Goal": goal,
        "Constraints & Preferences": _bullets(
            _rank(_constraints(transcript), focus, keep=MAX_LIST, newest=False), "(none)"
        ),
        "Progress": [],
        "Done": _bullets(done, prefix="- [x] "),
        "In Progress": _bullets(in_progress, prefix="- [ ] "),
        "Blocked": _bullets(blocked),
        "Key Decisions": _bullets(
            [f"**{d}**" for d in _rank(_decisions(transcript), focus, keep=MAX_LIST)]
        ),
        "Next Steps": [f"{i}. {step}" for i, step in enumerate(next_steps, 1)],
        "Critical Context": critical,
        "Additional Notes": notes,
    }


_SUBSECTIONS = ("Done", "In Progress", "Blocked")


def _render(sections: dict[str, list[str]], keep_empty: tuple[str, ...] = ()) -> str:
    out: list[str] = []
    for heading, lines in sections.items():
        if not lines and heading not in keep_empty and heading != "Progress":
            continue
        if heading == "Progress" and not lines and not any(sections.get(s) for s in _SUBSECTIONS):
            continue
        level = "###" if heading in _SUBSECTIONS else "##"
        out.append(f"{level} {heading}")
        out.extend(lines)
        out.append("")
    return "\n".join(out).strip() + "\n"


# Where a previous summary's own headings go in this layout (first keyword found wins; the
# order matters: "Current Task" is work in progress, not the goal). Anything else goes to
# Additional Notes.
_HEADING_TARGETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Constraints & Preferences",
        ("constraint", "preference", "requirement", "rule", "convention"),
    ),
    ("Blocked", ("blocked", "blocker")),
    ("In Progress", ("in progress", "current", "ongoing", "working on", "early progress")),
    ("Done", ("done", "completed", "complete", "finished", "accomplished")),
    ("Next Steps", ("next", "todo", "to do", "remaining")),
    ("Key Decisions", ("decision", "decided", "agreed", "design", "approach", "structure")),
    ("Goal", ("goal", "objective", "task", "request", "purpose")),
    (
        "Critical Context",
        (
            "context",
            "file",
            "command",
            "branch",
            "reference",
            "path",
            "environment",
            "setup",
            "key",
        ),
    ),
)
_SPLIT_TURN_MARKER = re.compile(r"^(?:-{3,}|\*\*Turn Context \(split turn\):\*\*)$")


def _target_heading(heading: str, layout: dict[str, list[str]]) -> str:
    """The section of ``layout`` a previous summary's ``heading`` merges into."""
    for known in layout:
        if heading.strip().lower() == known.lower():
            return known
    lowered = heading.lower()
    for target, words in _HEADING_TARGETS:
        if any(word in lowered for word in words):
            return target
    return "Additional Notes"


def _as_bullet(item: str) -> str:
    """A previous summary's item as a list item: ``- - x`` -> ``- x``; paragraphs get ``- ``;
    checkboxes, numbered steps, quotes and code blocks stay as they are."""
    first = item.lstrip()
    if first.startswith(("```", "~~~", ">")) or re.match(r"\d+[.)]\s", first):
        return item
    head, _, rest = item.partition("\n")
    box = re.match(r"^\s*[-*+]\s+(\[[ xX]\])\s+", head)
    body = _strip_marker(head)
    if box:
        head = f"- {box.group(1)} {body}"
    else:
        head = f"- {body}"
    return head + ("\n" + rest if rest else "")


def _previous_items(previous: str, layout: dict[str, list[str]]) -> dict[str, list[str]]:
    """The previous summary's items regrouped under this layout's headings.

    File-list blocks are dropped (a fresh one is appended), so are titles and split-turn
    separators. A section filed under another heading keeps its name as a label.
    """
    from tui_compactor.engine.fileops import strip_file_blocks

    grouped: dict[str, list[str]] = {}
    for heading, items in _section_items(strip_file_blocks(previous)).items():
        items = [
            item
            for item in items
            if OFFLINE_NOTE not in item
            and not _SPLIT_TURN_MARKER.match(item.strip())
            and not item.lstrip().startswith("# ")
        ]
        if not items:
            continue
        target = _target_heading(heading, layout) if heading else "Additional Notes"
        if target in ("Goal", "Next Steps") and target.lower() == heading.lower():
            shaped = items  # the main goal line and numbered steps keep their form
        else:
            shaped = [_as_bullet(item) for item in items]
        if heading and target.lower() != heading.lower():
            single = len(shaped) == 1 and "\n" not in shaped[0] and shaped[0].startswith("- ")
            if single and not shaped[0].startswith(("- [x]", "- [ ]")):
                shaped = [f"- {heading}: {shaped[0][2:]}"]
            else:
                shaped = [f"- {heading}:", *shaped]
        grouped.setdefault(target, []).extend(shaped)
    return grouped


_OPEN_REQUEST_LABEL = "- Last user request, not yet answered (verbatim):"


def _drop_answered(before: list[str], new: dict[str, list[str]]) -> list[str]:
    """Drop the previous part's open request (label and quote) once the talk went on.

    The newer part has its own user requests then (it always starts with one), so the old
    request is no longer the last one; the newest open request is the one kept verbatim.
    """
    goal = new.get("Goal", [])
    if not goal or goal[0].startswith("(no user request"):
        return before
    out: list[str] = []
    skip_quote = False
    for item in before:
        if item.strip() == _OPEN_REQUEST_LABEL:
            skip_quote = True
            continue
        if skip_quote and item.lstrip().startswith(">"):
            skip_quote = False
            continue
        skip_quote = False
        out.append(item)
    return out


_FILE_LABELS = ("- Modified files:", "- Read files:")


def _merge_file_lines(lines: list[str]) -> list[str]:
    """One ``- Modified files:`` and one ``- Read files:`` line, their paths merged in order."""
    out: list[str] = []
    positions: dict[str, int] = {}
    paths: dict[str, list[str]] = {}
    for line in lines:
        label = next((p for p in _FILE_LABELS if line.startswith(p)), None)
        if label is None:
            out.append(line)
            continue
        found = re.findall(r"`([^`]+)`", line)
        if label not in positions:
            positions[label] = len(out)
            paths[label] = []
            out.append(line)
        paths[label].extend(path for path in found if path not in paths[label])
    for label, index in positions.items():
        out[index] = f"{label} " + ", ".join(f"`{path}`" for path in paths[label])
    modified = set(paths.get("- Modified files:", []))
    if "- Read files:" in positions and modified:
        # A file modified in either part is listed as modified only.
        index = positions["- Read files:"]
        read = [path for path in paths["- Read files:"] if path not in modified]
        out[index] = "- Read files: " + ", ".join(f"`{path}`" for path in read) if read else ""
    return [line for line in out if line]


def _update(
    previous: str, new: dict[str, list[str]], outcomes: Outcomes | None = None
) -> dict[str, list[str]]:
    """Merge freshly extracted sections into a previous summary's sections.

    Every heading of the result appears once: the previous summary's sections are filed under
    the matching heading of this layout (``User Preferences`` under Constraints & Preferences,
    ``Key Files`` under Critical Context...) and duplicates are dropped. A failure the previous
    summary lists as blocked is dropped when ``outcomes`` (of the new part)
    fixed it.
    """
    old = _previous_items(previous, new)
    if outcomes is not None and old.get("Blocked"):
        old["Blocked"] = [line for line in old["Blocked"] if not outcomes.fixes(line)]
    merged: dict[str, list[str]] = {}
    for heading, lines in new.items():
        before = old.get(heading, [])
        if heading == "Next Steps":
            merged[heading] = lines or before
        elif heading == "Goal":
            lines = [line for line in lines if not line.startswith("(no user request")]
            later = (
                [
                    line
                    if line.startswith("- ")
                    else f"- {line}"
                    if line.startswith("(")
                    else f"- Then: {line}"
                    for line in lines
                ]
                if before
                else lines
            )
            merged[heading] = _merge_lines(before, later)
        elif heading == "Constraints & Preferences":
            kept = [line for line in before if line.strip() != "- (none)"]
            fresh = [line for line in lines if line.strip() != "- (none)"]
            merged[heading] = _merge_lines(kept, fresh) or ["- (none)"]
        elif heading == "Critical Context":
            merged[heading] = _merge_file_lines(_merge_lines(_drop_answered(before, new), lines))
        elif heading == "Additional Notes":
            # The offline note first, then what the previous summary had.
            merged[heading] = _merge_lines(lines, before)
        else:
            merged[heading] = _merge_lines(before, lines)
    return merged


def offline_text(request: SummaryRequest) -> str:
    """The whole offline summary for ``request`` (deterministic)."""
    transcript = read_transcript(request.messages)
    if request.kind == "turn_prefix":
        outcomes = read_outcomes(transcript)
        focus = read_focus(request.focus)
        done, in_progress, blocked = _progress(transcript, outcomes, focus, note_open_request=False)
        original = transcript.user_requests[0] if transcript.user_requests else "(not in this part)"
        context: list[str] = _focus_context(focus, transcript) if focus is not None else []
        if transcript.modified_files:
            context.append("- Modified: " + ", ".join(f"`{p}`" for p in transcript.modified_files))
        if transcript.read_files:
            context.append("- Read: " + ", ".join(f"`{p}`" for p in transcript.read_files))
        context += _names_by_file(outcomes, transcript, focus)
        context += [f"- Pending: {item}" for item in in_progress]
        if transcript.assistant_texts:
            context.append(f"- Last note: {first_line(transcript.assistant_texts[-1], 200)}")
        progress = [f"- [x] {d}" for d in done] + [f"- Blocked: {b}" for b in blocked]
        text = _render(
            {
                "Original Request": [_quote(original)],
                "Early Progress": progress or ["- (no tool work yet)"],
                "Context for Suffix": context or ["- (nothing beyond the request)"],
            }
        )
    elif request.kind == "short":
        text = _short(transcript, request.previous_summary)
    elif request.kind == "branch":
        sections = _handoff(transcript, request.focus)
        branch = {
            "Goal": sections["Goal"],
            "Constraints & Preferences": sections["Constraints & Preferences"],
            "Progress": [],
            "Done": sections["Done"],
            "In Progress": sections["In Progress"],
            "Blocked": sections["Blocked"],
            "Key Decisions": sections["Key Decisions"],
            "Next Steps": sections["Next Steps"]
            + [line for line in sections["Critical Context"] if line.startswith(">")],
            "Additional Notes": [
                line
                for line in sections["Critical Context"]
                if line.startswith(
                    (
                        "- Focus requested",
                        "- Offline, instructions",
                        "- “",
                        "- Not found in this part",
                        "- This instruction",
                    )
                )
            ],
        }
        text = _render(branch, keep_empty=("Constraints & Preferences",))
    else:
        sections = _handoff(transcript, request.focus)
        if request.previous_summary:
            sections = _update(request.previous_summary, sections, read_outcomes(transcript))
        text = _render(
            _shrink(sections, _byte_limit(request.max_tokens), read_focus(request.focus))
        )
    return _fit(text, request.max_tokens)


# Lines dropped first when a summary is over budget: old finished steps, old commands, old
# errors, later goals. The last request, Next Steps and decisions are kept longest.
_SHRINKABLE = ("Done", "Critical Context", "Blocked", "Goal", "Key Decisions")


def _byte_limit(max_tokens: int) -> int:
    return max(256, max_tokens * 4)


_FOCUS_LINES = (
    "- Focus requested",
    "- Offline, instructions",
    "- “",
    "- Not found in this",
    "- This instruction",
)


def _shrink(
    sections: dict[str, list[str]], limit: int, focus: Focus | None = None
) -> dict[str, list[str]]:
    """Drop the oldest list items of the least important sections until the text fits.

    Lines that match ``focus``, and the focus report itself, are never dropped.
    """
    sections = {heading: list(lines) for heading, lines in sections.items()}
    dropped: dict[str, int] = {}
    for heading in _SHRINKABLE:
        while utf8_length(_render(sections)) > limit:
            lines = sections.get(heading, [])
            # Keep the first line of Goal (the main goal) and quoted request lines.
            start = 1 if heading == "Goal" else 0
            removable = [
                i
                for i in range(start, len(lines))
                if lines[i].startswith("- ")
                and not lines[i].startswith(("- (", *_FOCUS_LINES))
                and "verbatim" not in lines[i]
                and not (focus is not None and focus.matches(lines[i]))
            ]
            if len(removable) <= 2:
                break
            for index in reversed(removable[: max(1, len(removable) // 2)]):
                del lines[index]
            dropped[heading] = dropped.get(heading, 0) + max(1, len(removable) // 2)
    for heading, count in dropped.items():
        sections[heading].insert(
            1 if heading == "Goal" else 0, f"- ({count} older items left out to fit the budget)"
        )
    return sections


_PASSES = re.compile(r"`([^`]+)` passes\b")
_STILL_FAILS = re.compile(r"^- `([^`]+)` still fails: (.*)")


def _short(transcript: Transcript, previous_summary: str | None) -> str:
    """Two or three sentences on what the work achieved, PR-description style: what changed,
    whether the checks pass, what is still open. Not a restatement of the request."""
    outcomes = read_outcomes(transcript)
    modified = list(transcript.modified_files)
    previous = parse_sections(previous_summary) if previous_summary else {}
    for line in previous.get("Critical Context", []):
        if line.startswith("- Modified files:"):
            modified += [p for p in re.findall(r"`([^`]+)`", line) if p not in modified]
    sentences: list[str] = []
    if modified:
        names = [path.rsplit("/", 1)[-1] for path in modified]
        shown = ", ".join(names[:3])
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        sentences.append(f"Changed {count_of(len(names), 'file')}: {shown}{more}.")
    passing: list[str] = []
    failing: dict[str, str] = {}
    for line in previous.get("Done", []):
        passing += [match.group(1) for match in _PASSES.finditer(line)]
    for line in previous.get("Blocked", []):
        found = _STILL_FAILS.search(line)
        if found and command_kind(found.group(1)) == "check":
            failing[command_core(found.group(1))] = found.group(2)
    for check in outcomes.checks():  # the kept messages are newer than the summary
        if check.still_fails:
            failing[check.core] = check.last.line
            passing = [p for p in passing if p != check.core]
        elif check.passes:
            passing.append(check.core)
            failing.pop(check.core, None)
    if failing:
        core, error = next(reversed(failing.items()))
        others = f" ({len(failing) - 1} more failing)" if len(failing) > 1 else ""
        sentences.append(f"`{core}` still fails: {_clip(error, 100).rstrip('.')}{others}.")
    elif passing:
        unique = list(dict.fromkeys(passing))
        sentences.append(
            ", ".join(f"`{c}`" for c in unique[-2:])
            + (" passes." if len(unique[-2:]) == 1 else " pass.")
        )
    if transcript.last_unanswered_request:
        sentences.append(f"Open: “{_clip(_prose(transcript.last_unanswered_request), 120)}”.")
    elif not sentences:
        commands = len(outcomes.commands)
        sentences.append(
            "No files changed"
            + (f"; ran {count_of(commands, 'command')}." if commands else " and no checks ran.")
        )
    sentences.append("(Offline summary.)")
    return " ".join(sentences) + "\n"


def _fit(text: str, max_tokens: int) -> str:
    """Cut ``text`` at a line boundary to about ``max_tokens`` (4 bytes per token)."""
    limit = max(256, max_tokens * 4)
    if utf8_length(text) <= limit:
        return text
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        size = utf8_length(line)
        if used + size > limit - 40:
            break
        kept.append(line)
        used += size
    return "".join(kept).rstrip() + "\n[… offline summary cut to its token budget …]\n"


OFFLINE_INPUT_WINDOW = 1 << 40
"""The offline summarizer reads a region of any size at once: it is never folded into windows
(folding would split an outcome, such as a failure and the run that fixed it, across them)."""


class OfflineSummarizer(Summarizer):
    """Extractive summarizer that needs no model; streams its text in small pieces."""

    def __init__(self, *, chunk_chars: int = 96) -> None:
        self.label = OFFLINE_LABEL
        self.context_window = OFFLINE_INPUT_WINDOW
        self.offline = True
        self.chunk_chars = chunk_chars

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:  # type: ignore[override]
        """Yield the offline summary in chunks, letting other tasks run in between."""
        text = offline_text(request)
        for start in range(0, len(text), self.chunk_chars):
            await asyncio.sleep(0)
            yield text[start : start + self.chunk_chars]
