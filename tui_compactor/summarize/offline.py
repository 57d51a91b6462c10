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

from tui_compactor.summarize.base import Summarizer, SummaryRequest
from tui_compactor.summarize.extract import Transcript, first_line, read_transcript
from tui_compactor.textsafe import utf8_length

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

MAX_DONE = 25
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
        or stripped.startswith((">", "$ ", "{", "[", "at ", "File \"", "Traceback"))
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
    return found[:MAX_LIST]


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
    return found[-MAX_LIST:]


def _progress(
    transcript: Transcript, *, note_open_request: bool = True
) -> tuple[list[str], list[str], list[str]]:
    """(done, in progress, blocked) bullet texts."""
    done: list[str] = []
    in_progress: list[str] = []
    blocked: list[str] = []
    for call in transcript.tool_calls:
        if call.result is None:
            in_progress.append(call.describe() + " (no result yet)")
        elif call.is_error:
            error = first_line(call.result, 160) or "failed"
            blocked.append(f"{call.describe()} failed: {error}")
        else:
            outcome = first_line(call.result, 100)
            done.append(call.describe() + (f" → {outcome}" if outcome else ""))
    if len(done) > MAX_DONE:
        hidden = len(done) - MAX_DONE
        done = [f"({hidden} earlier steps not listed)"] + done[-MAX_DONE:]
    if note_open_request and transcript.last_unanswered_request and not in_progress:
        in_progress.append("Answering the last request (quoted under Critical Context)")
    return done, in_progress, blocked


def _bullets(items: list[str], empty: str | None = None, prefix: str = "- ") -> list[str]:
    if not items:
        return [f"- {empty}"] if empty else []
    return [prefix + item for item in items]


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


def _handoff(transcript: Transcript, focus: str | None) -> dict[str, list[str]]:
    """The compaction-summary sections as ``{heading: lines}`` (ordered)."""
    requests = transcript.user_requests
    goal = [_clip(_prose(requests[0]), 400)] if requests else ["(no user request in this part)"]
    goal += [f"- Later: {_clip(_prose(r), 200)}" for r in requests[1:][-MAX_LIST:]]
    done, in_progress, blocked = _progress(transcript)
    next_steps: list[str] = []
    if transcript.last_unanswered_request:
        next_steps.append("1. Answer the user's last request (verbatim under Critical Context).")
    elif in_progress:
        next_steps.append(f"1. Finish: {in_progress[0]}")
    elif transcript.assistant_texts:
        next_steps.append(f"1. Continue from: {first_line(transcript.assistant_texts[-1], 200)}")
    else:
        next_steps.append("1. Continue with the goal above.")
    critical: list[str] = []
    if transcript.modified_files:
        modified = ", ".join(f"`{p}`" for p in transcript.modified_files)
        critical.append("- Modified files: " + modified)
    if transcript.read_files:
        critical.append("- Read files: " + ", ".join(f"`{p}`" for p in transcript.read_files))
    for command in transcript.commands[-MAX_LIST:]:
        critical.append(f"- Ran: `{first_line(command, 200)}`")
    for error in transcript.errors[-MAX_LIST:]:
        critical.append(f"- Error seen: {error}")
    if focus:
        critical.append(f"- Focus requested: {_clip(focus, 2000)}")
    if transcript.last_unanswered_request:
        critical.append("- Last user request, not yet answered (verbatim):")
        critical.append(_quote(transcript.last_unanswered_request))
    notes = [f"- {OFFLINE_NOTE}"]
    if transcript.summaries:
        notes.append(f"- The region held {len(transcript.summaries)} earlier summary block(s).")
    return {
        "Goal": goal,
        "Constraints & Preferences": _bullets(_constraints(transcript), "(none)"),
        "Progress": [],
        "Done": _bullets(done, prefix="- [x] "),
        "In Progress": _bullets(in_progress, prefix="- [ ] "),
        "Blocked": _bullets(blocked),
        "Key Decisions": _bullets([f"**{d}**" for d in _decisions(transcript)]),
        "Next Steps": next_steps,
        "Critical Context": critical,
        "Additional Notes": notes,
    }


_SUBSECTIONS = ("Done", "In Progress", "Blocked")


def _render(sections: dict[str, list[str]], keep_empty: tuple[str, ...] = ()) -> str:
    out: list[str] = []
    for heading, lines in sections.items():
        if not lines and heading not in keep_empty and heading != "Progress":
            continue
        if heading == "Progress" and not lines and not any(
            sections.get(s) for s in _SUBSECTIONS
        ):
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
    ("Constraints & Preferences", ("constraint", "preference", "requirement", "rule",
                                   "convention")),
    ("Blocked", ("blocked", "blocker")),
    ("In Progress", ("in progress", "current", "ongoing", "working on", "early progress")),
    ("Done", ("done", "completed", "complete", "finished", "accomplished")),
    ("Next Steps", ("next", "todo", "to do", "remaining")),
    ("Key Decisions", ("decision", "decided", "agreed", "design", "approach", "structure")),
    ("Goal", ("goal", "objective", "task", "request", "purpose")),
    ("Critical Context", ("context", "file", "command", "branch", "reference", "path",
                          "environment", "setup", "key")),
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
            item for item in items
            if OFFLINE_NOTE not in item and not _SPLIT_TURN_MARKER.match(item.strip())
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


def _update(previous: str, new: dict[str, list[str]]) -> dict[str, list[str]]:
    """Merge freshly extracted sections into a previous summary's sections.

    Every heading of the result appears once: the previous summary's sections are filed under
    the matching heading of this layout (``User Preferences`` under Constraints & Preferences,
    ``Key Files`` under Critical Context...) and duplicates are dropped.
    """
    old = _previous_items(previous, new)
    merged: dict[str, list[str]] = {}
    for heading, lines in new.items():
        before = old.get(heading, [])
        if heading == "Next Steps":
            merged[heading] = lines or before
        elif heading == "Goal":
            later = [
                line if line.startswith("- ") else f"- Then: {line}" for line in lines
            ] if before else lines
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
        done, in_progress, blocked = _progress(transcript, note_open_request=False)
        original = transcript.user_requests[0] if transcript.user_requests else "(not in this part)"
        context: list[str] = []
        if transcript.modified_files:
            context.append("- Modified: " + ", ".join(f"`{p}`" for p in transcript.modified_files))
        if transcript.read_files:
            context.append("- Read: " + ", ".join(f"`{p}`" for p in transcript.read_files))
        context += [f"- Error seen: {e}" for e in transcript.errors[-MAX_LIST:]]
        context += [f"- Pending: {item}" for item in in_progress]
        if transcript.assistant_texts:
            context.append(f"- Last note: {first_line(transcript.assistant_texts[-1], 200)}")
        progress = [f"- [x] {d}" for d in done] + [f"- Blocked: {b}" for b in blocked]
        text = _render({
            "Original Request": [_quote(original)],
            "Early Progress": progress or ["- (no tool work yet)"],
            "Context for Suffix": context or ["- (nothing beyond the request)"],
        })
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
            "Next Steps": sections["Next Steps"] + [
                line for line in sections["Critical Context"] if line.startswith(">")
            ],
        }
        text = _render(branch, keep_empty=("Constraints & Preferences",))
    else:
        sections = _handoff(transcript, request.focus)
        if request.previous_summary:
            sections = _update(request.previous_summary, sections)
        text = _render(_shrink(sections, _byte_limit(request.max_tokens)))
    return _fit(text, request.max_tokens)


# Lines dropped first when a summary is over budget: old finished steps, old commands, old
# errors, later goals. The last request, Next Steps and decisions are kept longest.
_SHRINKABLE = ("Done", "Critical Context", "Blocked", "Goal", "Key Decisions")


def _byte_limit(max_tokens: int) -> int:
    return max(256, max_tokens * 4)


def _shrink(sections: dict[str, list[str]], limit: int) -> dict[str, list[str]]:
    """Drop the oldest list items of the least important sections until the text fits."""
    sections = {heading: list(lines) for heading, lines in sections.items()}
    dropped: dict[str, int] = {}
    for heading in _SHRINKABLE:
        while utf8_length(_render(sections)) > limit:
            lines = sections.get(heading, [])
            # Keep the first line of Goal (the main goal) and quoted request lines.
            start = 1 if heading == "Goal" else 0
            removable = [
                i for i in range(start, len(lines))
                if lines[i].startswith("- ") and not lines[i].startswith("- (")
                and "verbatim" not in lines[i]
            ]
            if len(removable) <= 2:
                break
            for index in reversed(removable[: max(1, len(removable) // 2)]):
                del lines[index]
            dropped[heading] = dropped.get(heading, 0) + max(1, len(removable) // 2)
    for heading, count in dropped.items():
        sections[heading].insert(1 if heading == "Goal" else 0,
                                 f"- ({count} older items left out to fit the budget)")
    return sections


def _short(transcript: Transcript, previous_summary: str | None) -> str:
    """Two or three first-person sentences about what changed."""
    goal = None
    if previous_summary:
        goal_lines = parse_sections(previous_summary).get("Goal", [])
        if goal_lines:
            goal = goal_lines[0].lstrip("-> ").strip()
    if not goal and transcript.user_requests:
        goal = transcript.user_requests[0]
    sentences = [f"I worked on: {_clip(goal or 'the session', 160).rstrip('.')}."]
    modified = list(transcript.modified_files)
    if previous_summary:
        for line in parse_sections(previous_summary).get("Critical Context", []):
            if line.startswith("- Modified files:"):
                for path in re.findall(r"`([^`]+)`", line):
                    if path not in modified:
                        modified.append(path)
    if modified:
        shown = ", ".join(modified[:4])
        more = f" and {len(modified) - 4} more" if len(modified) > 4 else ""
        sentences.append(f"I changed {shown}{more}.")
    elif transcript.commands:
        sentences.append(f"I ran {len(transcript.commands)} command(s) without changing files.")
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


class OfflineSummarizer(Summarizer):
    """Extractive summarizer that needs no model; streams its text in small pieces."""

    def __init__(self, *, context_window: int = 128000, chunk_chars: int = 96) -> None:
        self.label = OFFLINE_LABEL
        self.context_window = context_window
        self.offline = True
        self.chunk_chars = chunk_chars

    async def stream(self, request: SummaryRequest) -> AsyncIterator[str]:  # type: ignore[override]
        """Yield the offline summary in chunks, letting other tasks run in between."""
        text = offline_text(request)
        for start in range(0, len(text), self.chunk_chars):
            await asyncio.sleep(0)
            yield text[start : start + self.chunk_chars]
