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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tui_compactor.engine.jstext import utf16_len
from tui_compactor.engine.methods import shaken_result
from tui_compactor.engine.tokens import TokenCache, TokenCounter, growing_parts
from tui_compactor.session.table import EntryView

__all__ = [
    "ShakeConfig",
    "SHAKE_CONFIGS",
    "ShakeRegion",
    "ShakePreview",
    "shake_preview",
    "shake_previews",
    "shake_placeholder",
    "apply_regions",
    "context_after_shake",
    "contexts_after_shake",
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


def _window_tokens(
    entries: list[Any], counter: TokenCounter, cache: TokenCache | None
) -> list[int]:
    """Each entry's weight in the protected window, all of them in two calls of the counter at
    most (a counting process: two requests, not one an entry): a message counts as a message
    (from ``cache`` when given: the same count), a custom message as its text content (each
    text counted on its own, images not counted), anything else 0."""
    weights = [0] * len(entries)
    messages: list[tuple[int, Any]] = []
    texts: list[str] = []
    owners: list[int] = []
    for position, entry in enumerate(entries):
        if entry.type == "message":
            messages.append((position, entry))
        elif entry.type == "custom_message":
            content = entry.data.get("content")
            if isinstance(content, str):
                pieces = [content]
            elif isinstance(content, list):
                pieces = [
                    block.get("text") or ""
                    for block in content
                    if isinstance(block, dict) and block.get("type") == "text"
                ]
            else:
                pieces = []
            for piece in pieces:
                if piece:
                    texts.append(piece)
                    owners.append(position)
    if cache is not None:
        cache.count_entries([entry.index for _, entry in messages])
        for position, entry in messages:
            weights[position] = cache.message_tokens(entry.index)
    elif messages:
        counts = counter.count_messages([entry.message for _, entry in messages])
        for (position, _), tokens in zip(messages, counts, strict=True):
            weights[position] = tokens
    for owner, tokens in zip(owners, counter.count_texts(texts) if texts else [], strict=True):
        weights[owner] += tokens
    return weights


def _protected_tails(
    path: Sequence[Any],
    boundary: int,
    protects: list[int],
    counter: TokenCounter,
    cache: TokenCache | None,
) -> list[int]:
    """For each of ``protects`` (a config's ``protect_tokens``), where the branch's protected
    tail begins: the first position (from ``boundary`` on) with fewer than that many tokens
    after it; ``len(path)`` when nothing is protected. The walk goes from the leaf backwards,
    counted ahead a part at a time (``growing_parts``), and stops once the tokens after it
    reach the largest of ``protects``: a long branch is not counted back to its root."""
    starts = [len(path)] * len(protects)
    need = max(protects, default=0)
    total = 0
    for part in growing_parts(range(len(path) - 1, boundary - 1, -1)):
        if total >= need:
            break
        weights = _window_tokens([path[position] for position in part], counter, cache)
        for position, tokens in zip(part, weights, strict=True):
            if total >= need:
                break
            for number, protect in enumerate(protects):
                if total < protect:
                    starts[number] = position
            total += tokens
    return starts


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


@dataclass(slots=True)
class _Candidate:
    """A region any config might shake, before its texts are counted: its tokens are the sum
    of the counts of ``texts`` (a tool result's text blocks, each counted on its own; a block:
    its one text)."""

    region: ShakeRegion
    texts: list[str]
    position: int
    """The entry's position in the branch."""
    useless: bool
    """A useless tool result: shaken even in the protected tail."""
    call: dict[str, Any] | None = None
    """A tool result's call (the protected tools), if found."""


def _block_candidates(
    out: list[_Candidate], entry: Any, position: int, block_index: int, text: str, label: Any
) -> None:
    for start, end in _block_ranges(text):
        piece = text[start:end]
        if not piece:
            continue
        prefix = utf16_len(text[:start])
        region = ShakeRegion(
            "block",
            entry.index,
            entry.id,
            0,
            label if isinstance(label, str) else None,
            block_index,
            prefix,
            prefix + utf16_len(piece),
            piece,
        )
        out.append(_Candidate(region, [piece], position, False))


def _content_candidates(
    out: list[_Candidate], entry: Any, position: int, content: Any, label: Any
) -> None:
    if isinstance(content, str):
        _block_candidates(out, entry, position, -1, content, label)
        return
    if not isinstance(content, list):
        return
    for number, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                _block_candidates(out, entry, position, number, text, label)


def _listed(content: Any) -> list[Any]:
    """A message's content blocks: none when the content is not a list (a corrupt file's
    ``true``, a number)."""
    return content if isinstance(content, list) else []


def _hashable(key: Any) -> bool:
    """Whether a tool call's id can key the calls: an object or array (a corrupt file) matches
    no call, as in oh-my-pi's ``Map`` of parsed ids."""
    return not isinstance(key, (dict, list))


class _Calls:
    """The branch's tool calls by id as oh-my-pi's map of the whole branch finds them (the last
    call with an id wins), its assistant turns read from the leaf backwards only as far as a
    lookup needs: a result's call is usually a turn or two before it, so a long branch is not
    read back to its root (an id no call has still reads it all, once)."""

    __slots__ = ("_path", "_next", "_found")

    def __init__(self, path: Sequence[Any]) -> None:
        self._path = path
        self._next = len(path) - 1
        self._found: dict[Any, dict[str, Any]] = {}

    def get(self, key: Any) -> dict[str, Any] | None:
        """The call whose id is ``key``, or None."""
        if not _hashable(key):
            return None
        found = self._found
        while key not in found and self._next >= 0:
            entry = self._path[self._next]
            self._next -= 1
            if entry.type != "message" or entry.role != "assistant":
                continue
            for block in reversed(_listed((entry.message or {}).get("content"))):
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    other = block.get("id")
                    if _hashable(other):
                        found.setdefault(other, block)  # a later call with the id came first
        return found.get(key)


def _candidates(path: Sequence[Any], boundary: int, unprotected: int) -> list[_Candidate]:
    """What a shake may elide on ``path`` from ``boundary`` on, in order: every region before
    position ``unprotected`` and the useless tool results after it (the protected tail), not
    counted yet; a result already shaken is none."""
    calls = _Calls(path)
    out: list[_Candidate] = []
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
        if not useless and position >= unprotected:
            continue
        if result is not None:
            if shaken_result(result):
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
            region = ShakeRegion(
                "toolResult",
                entry.index,
                entry.id,
                0,
                name if isinstance(name, str) else None,
                text="\n".join(texts),
            )
            call = calls.get(result.get("toolCallId"))
            out.append(_Candidate(region, texts, position, useless, call))
            continue
        if entry.type == "message" and isinstance(message, dict):
            role = message.get("role")
            if role == "assistant":
                for number, block in enumerate(_listed(message.get("content"))):
                    if isinstance(block, dict) and block.get("type") == "text":
                        text = block.get("text")
                        if isinstance(text, str):
                            _block_candidates(out, entry, position, number, text, "assistant")
            elif role in ("user", "developer"):
                _content_candidates(out, entry, position, message.get("content"), role)
        elif entry.type == "custom_message":
            data = entry.data
            _content_candidates(out, entry, position, data.get("content"), data.get("customType"))
    return out


def _boundary_position(ids: Iterable[str | None], keep_boundary_id: str | None) -> int:
    """Where the shake may begin: the first entry of the branch (``ids``, root to leaf) with the
    latest compaction's kept id; the root when there is none or it is not on the branch."""
    if keep_boundary_id is None:
        return 0
    return next((position for position, id_ in enumerate(ids) if id_ == keep_boundary_id), 0)


def _regions_by_config(
    path: Sequence[Any],
    counter: TokenCounter,
    configs: list[ShakeConfig],
    boundary: int,
    cache: TokenCache | None = None,
) -> list[list[ShakeRegion]]:
    """The regions each of ``configs`` would shake on ``path`` (entries root..leaf) from
    position ``boundary`` on, in order, without the savings gate. The configs share one walk:
    the protected tails are measured once (``_protected_tails``) and every candidate's texts
    counted in one call of the counter (a counting process: one request, not one a text)."""
    if not path:
        return [[] for _ in configs]
    tails = _protected_tails(
        path, boundary, [config.protect_tokens for config in configs], counter, cache
    )
    candidates = _candidates(path, boundary, max(tails, default=0))
    texts = [text for candidate in candidates for text in candidate.texts]
    counted = iter(counter.count_texts(texts) if texts else [])
    for candidate in candidates:
        candidate.region.tokens = sum(next(counted) for _ in candidate.texts)
    chosen: list[list[ShakeRegion]] = []
    for config, tail in zip(configs, tails, strict=True):
        regions: list[ShakeRegion] = []
        for candidate in candidates:
            if not candidate.useless and candidate.position >= tail:
                continue
            region = candidate.region
            if region.kind == "block":
                if region.tokens < config.fence_min_tokens:
                    continue
            elif _protected(path[candidate.position].message, candidate.call, config):
                continue
            regions.append(replace(region))
        chosen.append(regions)
    return chosen


def _gated(regions: list[ShakeRegion], config: ShakeConfig) -> list[ShakeRegion]:
    """``regions``, or none when together they save less than the config's ``min_savings``."""
    return [] if _savings(regions) < config.min_savings else regions


def shake_previews(
    session: Any,
    leaf: int | None,
    configs: Sequence[str | ShakeConfig],
    counter: TokenCounter,
    cache: TokenCache | None = None,
) -> list[ShakePreview]:
    """What shaking the branch ending at ``leaf`` with each of ``configs`` would elide, as
    oh-my-pi's ``/shake`` calls it (the latest compaction's kept part is the boundary). The
    configs share their counts: a few calls of the counter for all of them. ``cache``: the
    session's token cache for ``counter``, if any (the messages' counts are taken from it)."""
    chosen = [SHAKE_CONFIGS[config] if isinstance(config, str) else config for config in configs]
    if cache is not None and (cache.counter is not counter or cache.session is not session):
        cache = None
    index = session.leaf if leaf is None else leaf
    order = session.path_to(index) if index is not None else []
    path = EntryView(session.entries, order)  # each entry built when read: few are
    types, ids = session.type_column(), session.id_column()
    boundary_id = None
    for position in reversed(order):
        if types[position] == "compaction":
            kept = session.entries[position].data.get("firstKeptEntryId")
            boundary_id = kept if isinstance(kept, str) else None
            break
    boundary = _boundary_position((ids[position] for position in order), boundary_id)
    ungated = _regions_by_config(path, counter, chosen, boundary, cache)
    gated = [_gated(regions, config) for regions, config in zip(ungated, chosen, strict=True)]
    placeholders = sorted(
        {shake_placeholder(region.tokens) for regions in gated for region in regions}
    )
    placeholder_tokens = dict(
        zip(placeholders, counter.count_texts(placeholders) if placeholders else [], strict=True)
    )
    return [
        ShakePreview(
            config,
            boundary_id,
            regions,
            every,
            sum(
                region.tokens - placeholder_tokens[shake_placeholder(region.tokens)]
                for region in regions
            ),
        )
        for config, regions, every in zip(chosen, gated, ungated, strict=True)
    ]


def shake_preview(
    session: Any,
    leaf: int | None,
    config: str | ShakeConfig,
    counter: TokenCounter,
    cache: TokenCache | None = None,
) -> ShakePreview:
    """What shaking the branch ending at ``leaf`` with ``config`` would elide
    (``shake_previews`` of one config)."""
    return shake_previews(session, leaf, [config], counter, cache)[0]


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


def contexts_after_shake(
    session: Any,
    leaf: int | None,
    previews: list[ShakePreview],
    counter: TokenCounter,
    cache: TokenCache | None = None,
) -> list[tuple[int, int]]:
    """For each of ``previews``: (local token estimate of the context at ``leaf`` before, after)
    the shake, under oh-my-pi's context rules: what the model would be sent. The context is
    built once; its items are counted in one call of the counter (``items_tokens``: from
    ``cache`` when given) and the shaken messages of every preview in one more."""
    from tui_compactor.engine.context import build_context, items_tokens

    index = session.leaf if leaf is None else leaf
    if index is None:
        return [(0, 0) for _ in previews]
    if cache is not None and (cache.counter is not counter or cache.session is not session):
        cache = None
    items = build_context(session, index, rules="omp").items
    counts = items_tokens(items, counter, cache)
    before = sum(counts)
    changes: list[tuple[int, int]] = []  # (preview, item position) of each shaken message
    shaken: list[Any] = []
    for number, preview in enumerate(previews):
        by_entry: dict[int, list[ShakeRegion]] = {}
        for region in preview.regions:
            by_entry.setdefault(region.entry_index, []).append(region)
        for position, item in enumerate(items):
            regions = by_entry.get(item.entry_index)
            if regions:
                changes.append((number, position))
                shaken.append(apply_regions(item.message, regions))
    afters = [before] * len(previews)
    for (number, position), tokens in zip(
        changes, counter.count_messages(shaken) if shaken else [], strict=True
    ):
        afters[number] += tokens - counts[position]
    return [(before, after) for after in afters]


def context_after_shake(
    session: Any,
    leaf: int | None,
    preview: ShakePreview,
    counter: TokenCounter,
    cache: TokenCache | None = None,
) -> tuple[int, int]:
    """(local token estimate of the context at ``leaf`` before, after) the shake
    (``contexts_after_shake`` of one preview)."""
    return contexts_after_shake(session, leaf, [preview], counter, cache)[0]
