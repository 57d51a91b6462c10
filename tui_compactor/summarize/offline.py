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

__all__ = ["OFFLINE_LABEL", "OfflineSummarizer", "offline_text", "parse_sections"]

OFFLINE_LABEL = "offline"
OFFLINE_NOTE = "Offline extractive summary (tui-compactor, no model was called)."

_CONSTRAINT_WORDS = re.compile(
    r"\b(?:must|mustn't|don't|do not|never|always|only|prefer|should|shouldn't|avoid|without|"
    r"keep|make sure|no more than|at most|at least|instead of|please use|use)\b",
    re.IGNORECASE,
)
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


def _constraints(transcript: Transcript) -> list[str]:
    found: list[str] = []
    for request in transcript.user_requests:
        for sentence in _sentences(request):
            # Pasted logs and JSON are not the user's constraints.
            if _CONSTRAINT_WORDS.search(sentence) and len(sentence) <= 300 and '{"' not in sentence:
                clipped = _clip(sentence, 200)
                if clipped not in found:
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
    """Split a Markdown summary into ``{heading: body lines}`` (``##`` and ``###`` headings)."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        heading = re.match(r"^(#{2,3})\s+(.*\S)\s*$", line)
        if heading:
            current = heading.group(2)
            sections.setdefault(current, [])
        elif line.strip():
            sections.setdefault(current, []).append(line.rstrip())
    return sections


def _merge_lines(previous: list[str], new: list[str]) -> list[str]:
    merged = list(previous)
    for line in new:
        if line not in merged:
            merged.append(line)
    return merged


def _handoff(transcript: Transcript, focus: str | None) -> dict[str, list[str]]:
    """The compaction-summary sections as ``{heading: lines}`` (ordered)."""
    requests = transcript.user_requests
    goal = [_clip(requests[0], 400)] if requests else ["(no user request in this part)"]
    goal += [f"- Later: {_clip(r, 200)}" for r in requests[1:][-MAX_LIST:]]
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
        if heading == "Progress" and not any(sections.get(s) for s in _SUBSECTIONS):
            continue
        level = "###" if heading in _SUBSECTIONS else "##"
        out.append(f"{level} {heading}")
        out.extend(lines)
        out.append("")
    return "\n".join(out).strip() + "\n"


def _update(previous: str, new: dict[str, list[str]]) -> dict[str, list[str]]:
    """Merge freshly extracted sections into a previous summary's sections."""
    old = parse_sections(previous)
    merged: dict[str, list[str]] = {}
    for heading, lines in new.items():
        before = [line for line in old.get(heading, []) if OFFLINE_NOTE not in line]
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
        else:
            merged[heading] = _merge_lines(before, lines)
    # Sections of the previous summary this layout does not know are kept at the end.
    for heading, lines in old.items():
        if heading and heading not in merged:
            merged[heading] = lines
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
        while len(_render(sections).encode("utf-8")) > limit:
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
    if len(text.encode("utf-8")) <= limit:
        return text
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        size = len(line.encode("utf-8"))
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
