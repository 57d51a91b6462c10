"""Compaction methods: what each ``method`` value means, and what tui-compactor can do with it.

oh-my-pi writes ``compaction`` entries by several methods (``method`` field): ``soft`` (an LLM
summary), ``handoff`` (a handoff document the model wrote for its successor), ``shake``
(mechanical elision of large tool output, saved by rewriting the file), ``snapcompact``
(history rendered into image frames kept in ``preserveData``), ``remote`` (the provider
compacted its own history; the file holds only a placeholder text and the opaque payload) and
``window``. Entries without ``method`` are legacy (pi, older oh-my-pi) or come from an
extension (pi's ``fromHook``, oh-my-pi's ``fromExtension``: the flag the rules read,
``fileops.written_by_extension``). This module is the one place that names them, says which
we can produce, and reads the method-specific payloads for display. Pure data, no UI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui_compactor.engine.fileops import written_by_extension

__all__ = [
    "LOCAL_SUMMARY_DROPPED_KEYS",
    "METHODS",
    "PRODUCIBLE_METHODS",
    "SNAPCOMPACT_FRAME_TOKENS",
    "ArchiveInfo",
    "MethodInfo",
    "RemoteInfo",
    "archive_source_text",
    "carried_preserve_data",
    "compaction_method",
    "compaction_preview",
    "method_info",
    "remote_info",
    "shaken_result",
    "snapcompact_archive",
]

SNAPCOMPACT_FRAME_TOKENS = 5024
"""Tokens oh-my-pi charges per snapcompact image frame (``FRAME_TOKEN_ESTIMATE``)."""


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """One compaction method as a user sees it."""

    name: str
    title: str
    """A few words: what the method does."""
    produces: str
    """``yes`` (this tool writes it), ``preview`` (shown, never written) or ``no`` (read-only)."""
    note: str
    """Why it is read-only / preview-only, or how this tool makes it."""


METHODS: dict[str, MethodInfo] = {
    info.name: info
    for info in (
        MethodInfo(
            "soft",
            "LLM summary of the history",
            "yes",
            "history (and a split turn's prefix) summarized by a model; `c` then `r` here, or "
            "`compact` on the command line",
        ),
        MethodInfo(
            "handoff",
            "handoff document for the next model instance",
            "yes",
            "a document the model writes for its successor, shown to the model in oh-my-pi's "
            "handoff wrapper; `compact --method handoff` or the method choice in the plan",
        ),
        MethodInfo(
            "shake",
            "large tool output and code blocks elided in place",
            "preview",
            "oh-my-pi saves a shake by rewriting the whole session file; tui-compactor only "
            "appends, so it shows the shake as a preview and never writes it",
        ),
        MethodInfo(
            "snapcompact",
            "history rendered into image frames",
            "no",
            "read-only here: it needs oh-my-pi's frame renderer and a vision model; the archive "
            "and what the model receives from it are shown as stored",
        ),
        MethodInfo(
            "remote",
            "the provider compacted its own history",
            "no",
            "read-only here: the history lives in the provider's opaque payload "
            "(preserveData.openaiRemoteCompaction); the file holds only a placeholder summary",
        ),
        MethodInfo(
            "window",
            "context window rollover",
            "no",
            "read-only here: written by oh-my-pi's window method",
        ),
        MethodInfo(
            "extension",
            "summary written by an extension",
            "no",
            "written by an agent extension (pi: fromHook, oh-my-pi: fromExtension); its file "
            "lists are not carried on",
        ),
        MethodInfo(
            "legacy",
            "summary without a method field (pi, older oh-my-pi)",
            "yes",
            "pi and older oh-my-pi write no method; it reads like a soft summary",
        ),
    )
}

PRODUCIBLE_METHODS = ("soft", "handoff")
"""Methods this tool appends (``shake`` is preview-only)."""


def compaction_method(data: dict[str, Any], rules: str) -> str:
    """The method of a compaction record: its ``method``, else ``extension`` (an extension
    wrote it, by the flag ``rules`` read: ``fileops.written_by_extension``) or ``legacy``.

    An unknown ``method`` string is returned as is (a newer oh-my-pi may add methods).
    """
    method = data.get("method")
    if isinstance(method, str) and method:
        return method
    if written_by_extension(data, rules):
        return "extension"
    return "legacy"


WARNING_PREVIEW_CHARS = 60
"""How much of a compaction's ``warning`` a one-line preview shows."""


def compaction_preview(data: dict[str, Any], rules: str) -> str:
    """Method (unless legacy), warning, tokens before and the divider text (``shortSummary``,
    else the summary).

    oh-my-pi shows ``shortSummary`` on its divider; a ``warning`` (the progress guard's
    dead-end message) comes first so it is seen in the tree. ``rules``: whose extension flag
    is read.
    """
    method = compaction_method(data, rules)
    warning = data.get("warning")
    before = data.get("tokensBefore")
    short = data.get("shortSummary")
    summary = data.get("summary")
    text = (
        short
        if isinstance(short, str) and short.strip()
        else (summary if isinstance(summary, str) else "")
    )
    parts = [] if method == "legacy" else [method]  # pi writes no method: nothing to say
    if isinstance(warning, str) and warning.strip():
        head = " ".join(warning.split())
        parts.append(
            f"⚠ {head[:WARNING_PREVIEW_CHARS]}…"
            if len(head) > WARNING_PREVIEW_CHARS
            else f"⚠ {head}"
        )
    if isinstance(before, int) and not isinstance(before, bool):
        parts.append(f"{before:,} tokens before")
    parts.append(text)
    return " · ".join(parts)


def method_info(method: str) -> MethodInfo:
    """What ``method`` is; an unknown name gets a read-only description."""
    known = METHODS.get(method)
    if known is not None:
        return known
    return MethodInfo(
        method, "a method this version does not know", "no", "read-only here: shown as stored"
    )


@dataclass(frozen=True, slots=True)
class ArchiveInfo:
    """A snapcompact archive as stored in ``preserveData.snapcompact``."""

    frames: int
    """Image frames the model receives (each charged ``SNAPCOMPACT_FRAME_TOKENS``)."""
    total_chars: int | None
    truncated_chars: int | None
    text_head: str
    text_tail: str
    text: str
    """The archived source text (the verbatim edges and the imaged middle's source)."""

    @property
    def frame_tokens(self) -> int:
        """Tokens oh-my-pi charges for the frames."""
        return self.frames * SNAPCOMPACT_FRAME_TOKENS


def snapcompact_archive(data: dict[str, Any]) -> ArchiveInfo | None:
    """The snapcompact archive of a compaction record, or None."""
    preserve = data.get("preserveData")
    archive = preserve.get("snapcompact") if isinstance(preserve, dict) else None
    if not isinstance(archive, dict):
        return None
    frames = archive.get("frames")
    usable = (
        [
            frame
            for frame in frames
            if isinstance(frame, dict) and isinstance(frame.get("data"), str) and frame["data"]
        ]
        if isinstance(frames, list)
        else []
    )

    def text(key: str) -> str:
        value = archive.get(key)
        return value if isinstance(value, str) else ""

    def number(key: str) -> int | None:
        value = archive.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return ArchiveInfo(
        frames=len(usable),
        total_chars=number("totalChars"),
        truncated_chars=number("truncatedChars"),
        text_head=text("textHead"),
        text_tail=text("textTail"),
        text=text("text"),
    )


@dataclass(frozen=True, slots=True)
class RemoteInfo:
    """A remote compaction's provider payload (``preserveData.openaiRemoteCompaction``)."""

    provider: str
    items: list[dict[str, Any]]
    """The replacement history the provider receives instead of the kept messages."""

    def item_lines(self) -> list[str]:
        """One line per replacement item: its type/role and text, or that it is opaque."""
        lines: list[str] = []
        for item in self.items:
            kind = str(item.get("type", "?"))
            role = item.get("role")
            texts: list[str] = []
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and isinstance(block.get("text"), str):
                        texts.append(block["text"])
            if texts:
                lines.append(
                    f"{kind}/{role}: " + " ".join(texts) if role else f"{kind}: " + " ".join(texts)
                )
            elif isinstance(item.get("encrypted_content"), str):
                size = len(item["encrypted_content"])
                lines.append(f"{kind}: encrypted provider state ({size:,} chars, opaque)")
            else:
                lines.append(f"{kind}" + (f"/{role}" if role else ""))
        return lines


def remote_info(data: dict[str, Any]) -> RemoteInfo | None:
    """The remote payload of a compaction record, or None (oh-my-pi's validity rules)."""
    preserve = data.get("preserveData")
    remote = preserve.get("openaiRemoteCompaction") if isinstance(preserve, dict) else None
    if not isinstance(remote, dict):
        return None
    provider = remote.get("provider")
    history = remote.get("replacementHistory")
    if not isinstance(provider, str) or not provider or not isinstance(history, list):
        return None
    if not all(isinstance(item, dict) for item in history):
        return None
    return RemoteInfo(provider, history)


LOCAL_SUMMARY_DROPPED_KEYS = ("openaiRemoteCompaction", "anthropicCompaction", "snapcompact")
"""``preserveData`` keys a locally written summary does not carry on: provider-native replay
payloads (they describe history this summary replaces) and a snapcompact archive (its text was
merged into the previous summary the model is given)."""


def carried_preserve_data(previous: dict[str, Any] | None) -> dict[str, Any] | None:
    """oh-my-pi's ``preserveData`` for a new soft compaction: the previous compaction's, minus
    ``LOCAL_SUMMARY_DROPPED_KEYS``; None when nothing is left (the field is then omitted)."""
    if previous is None:
        return None
    data = previous.get("preserveData")
    if not isinstance(data, dict):
        return None
    kept = {key: value for key, value in data.items() if key not in LOCAL_SUMMARY_DROPPED_KEYS}
    return kept or None


ARCHIVE_NEWLINE = "\u2588"
"""snapcompact's newline glyph in archived text."""


def archive_source_text(archive: ArchiveInfo) -> str | None:
    """The archived history as plain text (snapcompact's ``archiveSourceText``): the stored
    ``text``, else head and tail; shading marks removed and newline glyphs made newlines."""
    text = archive.text or ARCHIVE_NEWLINE.join(
        part for part in (archive.text_head, archive.text_tail) if part
    )
    plain = text.replace("\x0e", "").replace("\x0f", "").replace(ARCHIVE_NEWLINE, "\n")
    return plain or None


def shaken_result(message: dict[str, Any]) -> bool:
    """Whether a tool result was shaken (its text replaced by a placeholder, ``prunedAt`` set)."""
    # oh-my-pi marks a shaken result by the key's presence, whatever its value.
    return message.get("role") == "toolResult" and "prunedAt" in message
