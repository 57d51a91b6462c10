"""oh-my-pi's "shake" as a preview: which regions of a branch it would elide, and what it saves.

A shake (oh-my-pi 18.2.3, ``collectShakeRegions``) replaces heavy content with a short
placeholder (``[shaken ~N tokens]``) without asking a model: the text of tool results, and
fenced code blocks or top-level XML elements of at least ``fence_min_tokens`` tokens inside
user, developer, assistant and custom messages. The newest ``protect_tokens`` tokens of the
branch are left alone (useless tool results excepted), as are entries before the latest
compaction's kept part, tool results already shaken (``prunedAt``) and results of protected
tools (``skill``, reads of ``skill://`` paths; reads of ``artifact://`` paths too for the
default and rescue configs). When the regions together would save less than
``min_savings`` (each region's tokens minus 16 for its placeholder), nothing is shaken.

oh-my-pi writes a shake by rewriting the whole session file; this tool never rewrites a file,
so a shake is only ever previewed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tui_compactor.engine.jstext import utf16_len
from tui_compactor.engine.methods import shaken_result
from tui_compactor.engine.tokens import TokenCounter

__all__ = [
    "ShakeConfig",
    "SHAKE_CONFIGS",
    "ShakeRegion",
    "ShakePreview",
    "collect_shake_regions",
    "shake_preview",
    "shake_placeholder",
    "apply_regions",
    "context_after_shake",
]

PLACEHOLDER_TOKENS = 16
"""What oh-my-pi's savings gate charges for one placeholder."""


@dataclass(frozen=True, slots=True)
class ShakeConfig:
    """One of oh-my-pi's shake configurations."""

    name: str
    protect_tokens: int
    min_savings: int
    fence_min_tokens: int
    protect_artifact_reads: bool


SHAKE_CONFIGS: dict[str, ShakeConfig] = {
    "default": ShakeConfig("default", 16_000, 4_000, 400, True),
    "aggressive": ShakeConfig("aggressive", 4_000, 0, 400, False),
    "rescue": ShakeConfig("rescue", 0, 0, 400, True),
}
"""``default`` (automatic shakes), ``aggressive`` (the manual ``/shake``), ``rescue`` (after a
compaction that freed too little)."""


@dataclass(slots=True)
class ShakeRegion:
    """One region a shake would replace with a placeholder."""

    kind: str
    """``toolResult`` (the result's text) or ``block`` (a fenced/XML block inside a text)."""
    entry_index: int
    entry_id: str
    tokens: int
    label: str | None
    """The tool name, or the role / custom type of the message holding the block."""
    block_index: int = -1
    """Content block holding a ``block`` region (-1: the content is a string)."""
    start: int = 0
    end: int = 0
    """UTF-16 offsets of a ``block`` region in its text (end exclusive)."""
    text: str = ""
    """The text the placeholder replaces."""

    def to_json(self, number: int) -> dict[str, Any]:
        """The oracle's field names (``region`` counts from 1)."""
        row: dict[str, Any] = {
            "region": number,
            "kind": self.kind,
            "entryId": self.entry_id,
            "entryIndex": self.entry_index,
            "tokens": self.tokens,
            "label": self.label,
        }
        if self.kind == "block":
            row.update({"blockIndex": self.block_index, "start": self.start, "end": self.end})
        return row


@dataclass(slots=True)
class ShakePreview:
    """What one shake config would do on one branch."""

    config: ShakeConfig
    keep_boundary_id: str | None
    regions: list[ShakeRegion]
    ungated_regions: list[ShakeRegion]
    """The regions without the savings gate (what it would take with ``min_savings`` 0)."""
    tokens_freed: int = 0
    """Tokens removed minus the placeholders' own tokens."""
    notes: list[str] = field(default_factory=list)

    @property
    def gate_savings(self) -> int:
        """Savings as oh-my-pi's gate counts them."""
        return _savings(self.regions)

    def to_json(self) -> dict[str, Any]:
        """The oracle's ``shake[]`` row."""
        return {
            "config": self.config.name,
            "protectTokens": self.config.protect_tokens,
            "minSavings": self.config.min_savings,
            "fenceMinTokens": self.config.fence_min_tokens,
            "keepBoundaryId": self.keep_boundary_id,
            "regionCount": len(self.regions),
            "gateSavings": self.gate_savings,
            "tokensFreedWithoutArtifact": self.tokens_freed,
            "regions": [region.to_json(number) for number, region in enumerate(self.regions, 1)],
            "ungatedRegionCount": len(self.ungated_regions),
            "ungatedGateSavings": _savings(self.ungated_regions),
        }


def shake_placeholder(tokens: int) -> str:
    """The text oh-my-pi puts in place of a shaken region (without an offload artifact)."""
    return f"[shaken ~{tokens} tokens]"


def _savings(regions: list[ShakeRegion]) -> int:
    return sum(max(0, region.tokens - PLACEHOLDER_TOKENS) for region in regions)


_JS_WS = "\t\n\u000b\u000c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_LEADING_WS = re.compile(f"^[{_JS_WS}]+")
_OPENING_XML = re.compile(f"<([a-z_-]+)(?:[{_JS_WS}]+[^>]*)?>")
_CLOSING_XML = re.compile("</([a-z_-]+)>")


def _block_ranges(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks and top-level XML elements: ``(start, end)`` string offsets, the
    closing line included, its newline not; unterminated ones give nothing."""
    ranges: list[tuple[int, int]] = []
    in_fence = False
    fence_start = xml_start = -1
    tags: list[str] = []
    line_start = 0
    for line in text.split("\n"):
        line_end = line_start + len(line)
        trimmed = _LEADING_WS.sub("", line)
        if trimmed.startswith("```") or trimmed.startswith("~~~"):
            if not in_fence:
                in_fence = True
                fence_start = line_start
            else:
                in_fence = False
                ranges.append((fence_start, line_end))
                fence_start = -1
        elif not in_fence:
            opening = _OPENING_XML.fullmatch(trimmed) if len(line) == len(trimmed) else None
            if opening is not None:
                if not tags:
                    xml_start = line_start
                tags.append(opening.group(1))
            else:
                closing = _CLOSING_XML.fullmatch(trimmed)
                if closing is not None and tags and tags[-1] == closing.group(1):
                    tags.pop()
                    if not tags and xml_start >= 0:
                        ranges.append((xml_start, line_end))
                        xml_start = -1
        line_start = line_end + 1
    ranges.sort(key=lambda pair: pair[0])
    kept: list[tuple[int, int]] = []
    last_end = -1
    for start, end in ranges:
        if start < last_end:
            continue
        kept.append((start, end))
        last_end = end
    return kept


def _text_tokens(counter: TokenCounter, fragments: list[str]) -> int:
    return sum(counter.count_text(fragment) for fragment in fragments)


def _entry_tokens(entry: Any, counter: TokenCounter) -> int:
    """An entry's weight in the protected window."""
    if entry.type == "message":
        return counter.count_message(entry.message)
    if entry.type == "custom_message":
        content = entry.data.get("content")
        if isinstance(content, str):
            return counter.count_text(content) if content else 0
        if isinstance(content, list):
            texts = [
                block.get("text") or ""
                for block in content
                if isinstance(block, dict) and block.get("type") == "text"
            ]
            return _text_tokens(counter, texts)
    return 0


def _protected(result: dict[str, Any], call: dict[str, Any] | None, config: ShakeConfig) -> bool:
    tool = result.get("toolName")
    if tool == "skill":
        return True
    path = None
    if tool == "read" and isinstance(call, dict) and call.get("name") == "read":
        arguments = call.get("arguments")
        value = arguments.get("path") if isinstance(arguments, dict) else None
        path = value if isinstance(value, str) else None
    if path is not None and path.startswith("skill://"):
        return True
    if not config.protect_artifact_reads:
        return False
    if path is not None and path.startswith("artifact://"):
        return True
    details = result.get("details")
    meta = details.get("meta") if isinstance(details, dict) else None
    source = meta.get("source") if isinstance(meta, dict) else None
    return (
        isinstance(source, dict)
        and source.get("type") == "internal"
        and isinstance(source.get("value"), str)
        and source["value"].startswith("artifact://")
    )


def _push_blocks(
    out: list[ShakeRegion],
    entry: Any,
    block_index: int,
    text: str,
    counter: TokenCounter,
    config: ShakeConfig,
    label: Any,
) -> None:
    for start, end in _block_ranges(text):
        piece = text[start:end]
        if not piece:
            continue
        tokens = counter.count_text(piece)
        if tokens < config.fence_min_tokens:
            continue
        prefix = utf16_len(text[:start])
        out.append(
            ShakeRegion(
                "block",
                entry.index,
                entry.id,
                tokens,
                label if isinstance(label, str) else None,
                block_index,
                prefix,
                prefix + utf16_len(piece),
                piece,
            )
        )


def _scan_content(
    out: list[ShakeRegion],
    entry: Any,
    content: Any,
    counter: TokenCounter,
    config: ShakeConfig,
    label: Any,
) -> None:
    if isinstance(content, str):
        _push_blocks(out, entry, -1, content, counter, config, label)
        return
    if not isinstance(content, list):
        return
    for position, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                _push_blocks(out, entry, position, text, counter, config, label)


def collect_shake_regions(
    path: list[Any],
    counter: TokenCounter,
    config: ShakeConfig,
    keep_boundary_id: str | None = None,
    *,
    gate: bool = True,
) -> list[ShakeRegion]:
    """The regions ``config`` would shake on ``path`` (entries root..leaf), in order."""
    if not path:
        return []
    after: list[int] = [0] * len(path)
    total = 0
    for position in range(len(path) - 1, -1, -1):
        after[position] = total
        total += _entry_tokens(path[position], counter)
    calls: dict[Any, dict[str, Any]] = {}
    for entry in path:
        if entry.type == "message" and entry.role == "assistant":
            for block in (entry.message or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    calls[block.get("id")] = block
    boundary = 0
    if keep_boundary_id is not None:
        boundary = next(
            (position for position, entry in enumerate(path) if entry.id == keep_boundary_id), 0
        )
    regions: list[ShakeRegion] = []
    for position in range(boundary, len(path)):
        entry = path[position]
        message = entry.message if entry.type == "message" else None
        result = (
            message if isinstance(message, dict) and message.get("role") == "toolResult" else None
        )
        useless = (
            result is not None
            and result.get("useless") is True
            and result.get("isError") is not True
        )
        if not useless and after[position] < config.protect_tokens:
            continue
        if result is not None:
            if shaken_result(result):
                continue
            if _protected(result, calls.get(result.get("toolCallId")), config):
                continue
            content = result.get("content")
            texts = [
                block["text"]
                for block in (content if isinstance(content, list) else [])
                if isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
                and block["text"]
            ]
            if not texts:
                continue
            name = result.get("toolName")
            regions.append(
                ShakeRegion(
                    "toolResult",
                    entry.index,
                    entry.id,
                    _text_tokens(counter, texts),
                    name if isinstance(name, str) else None,
                    text="\n".join(texts),
                )
            )
            continue
        if entry.type == "message" and isinstance(message, dict):
            role = message.get("role")
            if role == "assistant":
                for index, block in enumerate(message.get("content") or []):
                    if isinstance(block, dict) and block.get("type") == "text":
                        text = block.get("text")
                        if isinstance(text, str):
                            _push_blocks(regions, entry, index, text, counter, config, "assistant")
            elif role in ("user", "developer"):
                _scan_content(regions, entry, message.get("content"), counter, config, role)
        elif entry.type == "custom_message":
            data = entry.data
            _scan_content(
                regions, entry, data.get("content"), counter, config, data.get("customType")
            )
    if gate and _savings(regions) < config.min_savings:
        return []
    return regions


def shake_preview(
    session: Any, leaf: int | None, config: str | ShakeConfig, counter: TokenCounter
) -> ShakePreview:
    """What shaking the branch ending at ``leaf`` with ``config`` would elide, as oh-my-pi's
    ``/shake`` calls it (the latest compaction's kept part is the boundary)."""
    chosen = SHAKE_CONFIGS[config] if isinstance(config, str) else config
    index = session.leaf if leaf is None else leaf
    path = [session.entries[i] for i in session.path_to(index)] if index is not None else []
    boundary_id = None
    for entry in reversed(path):
        if entry.type == "compaction":
            kept = entry.data.get("firstKeptEntryId")
            boundary_id = kept if isinstance(kept, str) else None
            break
    regions = collect_shake_regions(path, counter, chosen, boundary_id)
    ungated = collect_shake_regions(path, counter, chosen, boundary_id, gate=False)
    freed = sum(
        region.tokens - counter.count_text(shake_placeholder(region.tokens)) for region in regions
    )
    return ShakePreview(chosen, boundary_id, regions, ungated, freed)


def apply_regions(message: dict[str, Any], regions: list[ShakeRegion]) -> dict[str, Any]:
    """``message`` as it reads after the shake of ``regions`` (all of one entry): a tool result
    keeps its non-text blocks and one placeholder text block and is marked ``prunedAt``; block
    regions are replaced in their text, the latest first so offsets stay valid."""
    if not regions:
        return message
    content = message.get("content")
    if regions[0].kind == "toolResult":
        items: list[Any] = content if isinstance(content, list) else []
        first = next(
            (
                i
                for i, block in enumerate(items)
                if isinstance(block, dict) and block.get("type") == "text" and block.get("text")
            ),
            -1,
        )
        if first < 0:
            return message
        kept: list[Any] = []
        for position, block in enumerate(items):
            if not (isinstance(block, dict) and block.get("type") == "text"):
                kept.append(block)
            elif position == first:
                kept.append({"type": "text", "text": shake_placeholder(regions[0].tokens)})
        return {**message, "content": kept, "prunedAt": 0}
    shaken = dict(message)
    blocks: Any = list(content) if isinstance(content, list) else content
    for region in sorted(regions, key=lambda item: item.start, reverse=True):
        if region.block_index < 0:
            text = blocks if isinstance(blocks, str) else None
        else:
            block = blocks[region.block_index] if isinstance(blocks, list) else None
            text = block.get("text") if isinstance(block, dict) else None
        if not isinstance(text, str):
            continue
        units = text.encode("utf-16-le", "surrogatepass")
        replaced = (
            units[: 2 * region.start].decode("utf-16-le", "surrogatepass")
            + shake_placeholder(region.tokens)
            + units[2 * region.end :].decode("utf-16-le", "surrogatepass")
        )
        if region.block_index < 0:
            blocks = replaced
        elif isinstance(blocks, list):
            blocks[region.block_index] = {**blocks[region.block_index], "text": replaced}
    shaken["content"] = blocks
    return shaken


def context_after_shake(
    session: Any, leaf: int | None, preview: ShakePreview, counter: TokenCounter
) -> tuple[int, int]:
    """(local token estimate of the context at ``leaf`` before, after) the shake, under
    oh-my-pi's context rules: what the model would be sent."""
    from tui_compactor.engine.context import build_context

    index = session.leaf if leaf is None else leaf
    if index is None:
        return 0, 0
    by_entry: dict[int, list[ShakeRegion]] = {}
    for region in preview.regions:
        by_entry.setdefault(region.entry_index, []).append(region)
    before = after = 0
    for item in build_context(session, index, rules="omp").items:
        message = item.message
        before += counter.count_message(message)
        regions = by_entry.get(item.entry_index)
        after += counter.count_message(apply_regions(message, regions) if regions else message)
    return before, after
