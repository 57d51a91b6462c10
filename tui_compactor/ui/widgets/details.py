"""The entry details pane: the full entry under the cursor.

Text blocks render as Markdown (user and assistant messages, summaries), tool calls as their
arguments, tool results and thinking as plain text. Every string from the session passes through
``textsafe.sanitize`` and becomes ``Text`` or ``Markdown`` source — never Rich markup — so
brackets, escape sequences and control characters show as what they are.

The Markdown renderer loads after the app's first screen (``load_markdown``): an entry shown
before that shows its text plain, and keeps that look while it stays selected (no visible swap
from plain text to Markdown under the reader's eyes); the next entry shown is Markdown.
"""

from __future__ import annotations

import json
from typing import Any, cast

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual, visualize

from tui_compactor.engine.methods import (
    SNAPCOMPACT_FRAME_TOKENS,
    compaction_method,
    method_info,
    remote_info,
    shaken_result,
    snapcompact_archive,
)
from tui_compactor.textsafe import sanitize
from tui_compactor.ui.widgets.labels import entry_kind, format_tokens
from tui_compactor.ui.widgets.redraw import set_virtual_size

MAX_BLOCK_CHARS = 20_000
"""Longest text block shown in full; the rest is counted, not drawn (huge tool outputs)."""


def _safe(text: Any, max_len: int = MAX_BLOCK_CHARS) -> str:
    """Sanitized text capped at ``max_len`` characters with a note on what was left out."""
    raw = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)
    clean = sanitize(raw, max_len=max_len)
    if len(raw) > max_len:
        clean += f"\n… {len(raw) - max_len:,} more characters"
    return clean


_markdown_class: Any = None
"""``rich.markdown.Markdown`` once ``load_markdown`` has imported it."""


def load_markdown() -> None:
    """Import the Markdown renderer (markdown-it and pygments: 20-40 ms, more under load), which
    the first screen would otherwise wait for when its entry is a message. Idempotent; any
    thread."""
    global _markdown_class
    if _markdown_class is None:
        from rich.markdown import Markdown

        _markdown_class = Markdown


def markdown_loaded() -> bool:
    """Whether text blocks render as Markdown yet (``load_markdown``)."""
    return _markdown_class is not None


def _markdown(text: str, markdown: bool = True) -> RenderableType:
    """Markdown from already sanitized text, without terminal hyperlinks (plain text until
    ``load_markdown``, or when not ``markdown``)."""
    if _markdown_class is None or not markdown:
        return Text(text)
    return cast("RenderableType", _markdown_class(text, hyperlinks=False))


def content_renderables(content: Any, *, markdown: bool) -> list[RenderableType]:
    """Render a message ``content`` (string or blocks) as a list of renderables."""
    if isinstance(content, str):
        return [_markdown(_safe(content), markdown)]
    if not isinstance(content, list):
        return [Text("(no content)", style="dim")]
    parts: list[RenderableType] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(Text(_safe(block), style="dim"))
            continue
        kind = block.get("type")
        if kind == "text":
            text = _safe(block.get("text", ""))
            parts.append(_markdown(text, markdown))
        elif kind == "thinking":
            parts.append(Text("thinking", style="bold dim"))
            parts.append(Text(_safe(block.get("thinking", "")), style="dim italic"))
        elif kind == "toolCall":
            name = sanitize(str(block.get("name", "?")), single_line=True, max_len=80)
            arguments = json.dumps(
                block.get("arguments"), indent=2, ensure_ascii=False, default=str
            )
            parts.append(Text(f"→ {name}", style="bold"))
            parts.append(Text(_safe(arguments)))
        elif kind == "image":
            mime = sanitize(str(block.get("mimeType", "image")), single_line=True, max_len=40)
            size = len(block.get("data", "")) if isinstance(block.get("data"), str) else 0
            parts.append(Text(f"[image {mime}, {size:,} base64 chars]", style="dim"))
        else:
            parts.append(Text(_safe(block), style="dim"))
    return parts


def entry_renderable(
    entry: Any,
    tokens: int | None,
    label: str | None,
    *,
    rules: str,
    located: bool = True,
    markdown: bool = True,
) -> RenderableType:
    """Everything about one entry, as one renderable; ``located`` False while the entry comes
    from a tail-first preview (its index and line in the file are not known yet); ``rules``:
    whose extension flag names a compaction's author; ``markdown`` False: text blocks plain
    (as before the renderer loads)."""
    kind = entry_kind(entry)
    header = Text(no_wrap=False)
    header.append(kind, style="bold reverse")
    if located:
        header.append(f"  #{entry.index}  line {entry.line}  ")
    else:
        header.append("  #…  line …  ")
    header.append(sanitize(str(entry.id), single_line=True, max_len=60), style="dim")
    if tokens is not None:
        header.append(f"  {format_tokens(tokens)} tokens", style="bold")
    if label:
        header.append(f"  [{sanitize(label, single_line=True, max_len=60)}]", style="italic")
    header.append(f"\n{sanitize(str(entry.timestamp), single_line=True, max_len=40)}", style="dim")
    parts: list[RenderableType] = [header, Rule(style="dim")]
    try:
        data = entry.data
    except Exception as error:
        parts.append(Text(sanitize(f"record unreadable: {error}"), style="bold red"))
        return Group(*parts)
    if entry.type == "message":
        message = data.get("message")
        if not isinstance(message, dict):
            parts.append(Text("(no message object)", style="dim"))
            return Group(*parts)
        role = message.get("role")
        if role == "toolResult":
            name = sanitize(str(message.get("toolName", "tool")), single_line=True, max_len=80)
            status = " (error)" if message.get("isError") else ""
            parts.append(Text(f"result of {name}{status}", style="bold"))
            if shaken_result(message):
                when = sanitize(str(message.get("prunedAt")), single_line=True, max_len=40)
                parts.append(
                    Text(
                        f"shaken ({when}): oh-my-pi replaced this output with the placeholder "
                        "below; the model receives the placeholder, not the original",
                        style="bold yellow",
                    )
                )
            parts.extend(content_renderables(message.get("content"), markdown=False))
        elif role == "bashExecution":
            parts.append(Text(f"$ {_safe(message.get('command', ''))}", style="bold"))
            parts.append(Text(_safe(message.get("output", ""))))
        else:
            parts.extend(content_renderables(message.get("content"), markdown=markdown))
        usage = message.get("usage")
        if isinstance(usage, dict):
            numbers = ", ".join(
                f"{key} {value:,}" for key, value in usage.items() if isinstance(value, int)
            )
            parts.append(Text(f"usage: {numbers}", style="dim"))
    elif entry.type == "compaction":
        parts.extend(compaction_renderables(data, rules, markdown=markdown))
    elif entry.type == "branch_summary":
        source = sanitize(str(data.get("fromId", "?")), single_line=True, max_len=60)
        parts.append(Text(f"summary of the branch left at {source}", style="bold"))
        summary = data.get("summary")
        parts.append(
            _markdown(_safe(summary), markdown)
            if isinstance(summary, str)
            else Text("(no summary text)", style="dim")
        )
        _append_details(parts, data)
    elif entry.type == "custom_message":
        parts.extend(content_renderables(data.get("content"), markdown=markdown))
    else:
        shown = {key: value for key, value in data.items() if key not in ("id", "parentId")}
        parts.append(Text(_safe(json.dumps(shown, indent=2, ensure_ascii=False, default=str))))
    return Group(*parts)


def _append_details(parts: list[RenderableType], data: dict[str, Any]) -> None:
    if data.get("details") is not None:
        parts.append(Text("details", style="bold dim"))
        parts.append(Text(_safe(json.dumps(data.get("details"), indent=2, default=str))))


def compaction_renderables(
    data: dict[str, Any], rules: str, *, markdown: bool = True
) -> list[RenderableType]:
    """A compaction by its method: warning first, method and whether we can write it, the
    divider text, the summary (``markdown``: as Markdown once loaded), and what snapcompact and
    remote compactions hand the model."""
    parts: list[RenderableType] = []
    warning = data.get("warning")
    if isinstance(warning, str) and warning.strip():
        parts.append(Text(f"⚠ warning: {_safe(warning)}", style="bold white on red"))
    method = compaction_method(data, rules)
    info = method_info(method)
    line = Text()
    line.append(f"method {sanitize(method, single_line=True, max_len=40)}", style="bold")
    line.append(f" — {info.title}")
    parts.append(line)
    if info.produces != "yes":
        parts.append(Text(info.note, style="italic yellow"))
    kept = sanitize(str(data.get("firstKeptEntryId", "?")), single_line=True, max_len=60)
    before = data.get("tokensBefore")
    after = data.get("tokensAfter")
    numbers = f"first kept entry {kept} · "
    numbers += f"{before:,} tokens before" if isinstance(before, int) else "? tokens before"
    if isinstance(after, int) and not isinstance(after, bool):
        numbers += f" · {after:,} after"
    parts.append(Text(numbers, style="bold"))
    short = data.get("shortSummary")
    if isinstance(short, str) and short.strip():
        parts.append(Text("divider text (shortSummary, never sent to the model)", style="bold dim"))
        parts.append(Text(_safe(short), style="italic"))
    summary = data.get("summary")
    remote = remote_info(data)
    if remote is not None:
        parts.append(Text("placeholder summary (what the file holds)", style="bold dim"))
    elif method == "handoff":
        parts.append(
            Text(
                "handoff document (the model gets it inside oh-my-pi's handoff wrapper)",
                style="bold dim",
            )
        )
    parts.append(
        _markdown(_safe(summary), markdown)
        if isinstance(summary, str)
        else Text("(no summary text)", style="dim")
    )
    archive = snapcompact_archive(data)
    if archive is not None:
        parts.append(Rule("snapcompact archive", style="dim"))
        facts = (
            f"{archive.frames} image frame(s) (~{archive.frame_tokens:,} tokens, "
            f"{SNAPCOMPACT_FRAME_TOKENS:,} per frame)"
        )
        if archive.total_chars is not None:
            facts += f" · {archive.total_chars:,} characters archived"
        if archive.truncated_chars:
            facts += f" · {archive.truncated_chars:,} dropped to fit"
        parts.append(Text(facts, style="bold"))
        parts.append(
            Text(
                "after the summary the model receives the archive's verbatim text "
                "edges (below) and the frames as images",
                style="dim",
            )
        )
        for title, text in (("text head", archive.text_head), ("text tail", archive.text_tail)):
            if text:
                parts.append(Text(f"{title} ({len(text):,} characters)", style="bold dim"))
                parts.append(Text(_safe(text)))
    if remote is not None:
        parts.append(Rule("remote compaction payload", style="dim"))
        parts.append(
            Text(
                f"provider {sanitize(remote.provider, single_line=True, max_len=40)}: "
                "instead of the "
                f"kept messages, {len(remote.items)} replacement item(s) are sent to this provider",
                style="bold",
            )
        )
        for item_line in remote.item_lines():
            parts.append(Text("• " + _safe(item_line, 2000)))
    _append_details(parts, data)
    preserve = data.get("preserveData")
    if isinstance(preserve, dict) and preserve:
        keys = ", ".join(sanitize(str(key), single_line=True, max_len=40) for key in preserve)
        parts.append(Text(f"preserveData: {keys}", style="dim"))
    return parts


class EntryDetails(ScrollView, can_focus=True):
    """Scrollable full view of one entry, drawn line by line from its rendered strips.

    A new entry never lays the screen out again: the entry is rendered once at the pane's
    width (when the pane is next drawn: not at all while another tab is shown) and the pane
    only scrolls through its lines. Its scrollbar always shows: the width the text wraps to
    does not depend on the entry's length, and no entry shows or hides it (which would lay the
    screen out again too).
    """

    DEFAULT_CSS = """
    EntryDetails {
        width: 1fr;
        height: 1fr;
        padding: 0 1;
        overflow-x: hidden;
        overflow-y: scroll;
    }
    """

    shown_entry: int | None = None
    """Index of the entry on display."""
    shown_id: str | None = None
    """Id of the entry on display (its index changes when a preview's file is indexed)."""
    shown_plain: bool = False
    """Whether its text is drawn plain: it was first drawn before the Markdown renderer loaded
    (``markdown_loaded``), and it stays so while it is shown (drawn again for its token count
    or the indexed file, it does not change its look under the reader's eyes)."""
    shown_as: tuple[Any, ...] | None = None
    """What the shower said the display was made from (``show_entry`` forgets it, the caller
    sets it after), so that it can tell the same thing asked again from a change."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._renderable: RenderableType = Text("select an entry", style="dim")
        self._lines: list[Strip] = []
        self._lines_key: tuple[int, int] | None = None
        """(width, shown count) the lines were rendered for; None: render them again."""
        self._shown = 0
        """Bumped per renderable shown."""

    def show_entry(
        self, entry: Any, tokens: int | None, label: str | None, *, rules: str, located: bool = True
    ) -> None:
        """Show ``entry`` from the top (``located``: see ``entry_renderable``)."""
        same = self.shown_id is not None and entry.id == self.shown_id
        self.shown_as = None
        self.shown_plain = not markdown_loaded() or (same and self.shown_plain)
        self.shown_entry = entry.index
        self.shown_id = entry.id
        self._renderable = entry_renderable(
            entry, tokens, label, rules=rules, located=located, markdown=not self.shown_plain
        )
        self._shown += 1
        self.scroll_home(animate=False)
        self.refresh()

    def show_nothing(self, reason: str) -> None:
        """No entry under the cursor (an empty file, a filter that shows none): say so, in
        place of whatever entry was shown (of the rows or the file shown before)."""
        self.shown_entry = None
        self.shown_id = None
        self.shown_as = None
        self._renderable = Text(reason, style="dim")
        self._shown += 1
        self.scroll_home(animate=False)
        self.refresh()

    def shown_text(self) -> str:
        """The text on display, every line of it (as drawn at the pane's width; nothing while
        the pane has no width: another tab is shown, or it is not laid out yet)."""
        return "\n".join(line.text.rstrip() for line in self._rendered())

    def _rendered(self) -> list[Strip]:
        """The shown renderable's lines at the pane's width, rendered once per renderable and
        width; the scrollable height follows them (without a layout: ``set_virtual_size``).
        Nothing is rendered while the pane has no width."""
        width = self.scrollable_content_region.width
        if width <= 0:
            return []
        key = (width, self._shown)
        if key != self._lines_key:
            self._lines_key = key
            visual = visualize(self, self._renderable)
            self._lines = Visual.to_strips(self, visual, width, None, self.visual_style)
            set_virtual_size(self, Size(width, len(self._lines)))
        return self._lines

    def notify_style_update(self) -> None:
        """The CSS changed (theme): render the lines again with it."""
        self._lines_key = None
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        """Render the shown entry's lines first if they are not rendered at this width yet."""
        self._rendered()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        """Screen line ``y``: line ``scroll_y + y`` of the entry."""
        width = max(self.scrollable_content_region.width, 1)
        position = int(self.scroll_y) + y
        lines = self._rendered()
        if position < len(lines):
            return lines[position].adjust_cell_length(width, self.visual_style.rich_style)
        return Strip.blank(width, self.visual_style.rich_style)
