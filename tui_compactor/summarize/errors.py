"""Errors a summarizer raises: short, user-facing, and never carrying an API key."""

from __future__ import annotations

import re

from tui_compactor.textsafe import sanitize

__all__ = [
    "AuthError",
    "BadRequest",
    "ConnectionFailed",
    "ContextOverflow",
    "MalformedStream",
    "ModelNotFound",
    "ProviderTimeout",
    "ReplyTooLong",
    "RateLimited",
    "ServerError",
    "StreamDropped",
    "SummarizeError",
    "classify_http_error",
    "is_context_overflow",
    "redact",
]


MAX_MESSAGE_CHARS = 600
"""Longest error message shown; a hostile server's body is cut here."""


class SummarizeError(Exception):
    """Base class. ``str(error)`` is a short message fit to show the user as is."""

    retryable = False
    status: int | None = None
    retry_after: float | None = None
    """Seconds the server asked us to wait (``Retry-After``), for 429 / 5xx."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        # Messages quote servers' error bodies: no escape sequence reaches the user's terminal.
        super().__init__(sanitize(message, single_line=True, max_len=MAX_MESSAGE_CHARS))
        self.status = status


class AuthError(SummarizeError):
    """401/403: the key is missing, wrong or not allowed to use the model."""


class ModelNotFound(SummarizeError):
    """404: the model (or the endpoint) does not exist at this base URL."""


class BadRequest(SummarizeError):
    """400 and other 4xx the server rejected for a reason other than the context size."""


class ContextOverflow(SummarizeError):
    """The prompt is larger than the model's context window (folding halves and retries)."""


class RateLimited(SummarizeError):
    """429 after every retry."""

    retryable = True


class ServerError(SummarizeError):
    """5xx after every retry."""

    retryable = True


class ConnectionFailed(SummarizeError):
    """Could not connect, or the connection broke before any text arrived."""

    retryable = True


class ProviderTimeout(SummarizeError):
    """No response (or no progress) within the profile's timeout."""

    retryable = True


class MalformedStream(SummarizeError):
    """The server's event stream could not be understood."""


class ReplyTooLong(SummarizeError):
    """The streamed reply passed its size cap (the server ignored ``max_tokens``)."""


class StreamDropped(SummarizeError):
    """The connection broke after some text had been streamed (the part may be restarted)."""


_OVERFLOW_PATTERNS = re.compile(
    r"context[ _-]?length|context[ _-]?window|context[ _-]?size|maximum context|"
    r"exceed_context|prompt is too long|"
    r"too many tokens|input is too long|exceeds the (?:model'?s? )?(?:context|maximum)|"
    r"reduce the length|request too large|input length|max_tokens.*exceed|token limit",
    re.IGNORECASE,
)


def is_context_overflow(status: int | None, message: str, code: str | None = None) -> bool:
    """Whether an error response means "the prompt does not fit the model's window"."""
    if code and ("context_length" in code or "exceed_context" in code):
        return True
    if status not in (None, 400, 413, 422):
        return False
    return bool(_OVERFLOW_PATTERNS.search(message))


def redact(text: str, secrets: list[str]) -> str:
    """``text`` with every secret (and any ``sk-...``-looking token) replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return re.sub(r"\b(?:sk|pk|key)-[A-Za-z0-9_\-]{8,}", "[redacted]", text)


def classify_http_error(
    status: int, message: str, *, code: str | None = None, model: str | None = None
) -> SummarizeError:
    """Map an HTTP error response to a short error. ``message`` must already be redacted."""
    detail = " ".join(message.split())[:240] or f"HTTP {status}"
    if is_context_overflow(status, detail, code):
        return ContextOverflow(
            f"prompt exceeds the model's context window ({detail})", status=status
        )
    if status in (401, 403):
        return AuthError(
            f"authentication failed (HTTP {status}): check the API key variable ({detail})",
            status=status,
        )
    if status == 404:
        name = f" {model!r}" if model else ""
        return ModelNotFound(
            f"model{name} or endpoint not found (HTTP 404): {detail}", status=status
        )
    if status == 429:
        return RateLimited(f"rate limited (HTTP 429): {detail}", status=status)
    if status >= 500:
        return ServerError(f"server error (HTTP {status}): {detail}", status=status)
    return BadRequest(f"request rejected (HTTP {status}): {detail}", status=status)
