"""Error classification of real servers' messages, and key redaction."""

from __future__ import annotations

import pytest

from tui_compactor.summarize.errors import (
    AuthError,
    BadRequest,
    ContextOverflow,
    ModelNotFound,
    RateLimited,
    ServerError,
    classify_http_error,
    redact,
)


@pytest.mark.parametrize(
    ("status", "message", "code"),
    [
        (
            400,
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9000 tokens.",
            "context_length_exceeded",
        ),  # OpenAI
        (400, "prompt is too long: 210000 tokens > 200000 maximum", "invalid_request_error"),
        (
            400,
            "the request exceeds the available context size, try increasing it",
            "exceed_context_size_error",
        ),  # llama.cpp server
        (
            400,
            "This model's maximum context length is 4096 tokens. However, you requested 5000 "
            "tokens (4000 in the messages, 1000 in the completion).",
            None,
        ),  # vLLM
        (413, "Request too large for model", None),
    ],
)
def test_context_overflow_is_recognised(status: int, message: str, code: str | None) -> None:
    assert isinstance(classify_http_error(status, message, code=code), ContextOverflow)


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (401, "Incorrect API key provided", AuthError),
        (403, "forbidden", AuthError),
        (404, "model not found", ModelNotFound),
        (400, "max_tokens must be positive", BadRequest),
        (429, "slow down", RateLimited),
        (529, "overloaded", ServerError),
    ],
)
def test_other_statuses(status: int, message: str, kind: type) -> None:
    error = classify_http_error(status, message, model="m")
    assert isinstance(error, kind) and str(status) in str(error)


def test_redact_removes_keys() -> None:
    text = "bad key sk-proj-abcdefghijklmnop and mysecretvalue123"
    cleaned = redact(text, ["mysecretvalue123"])
    assert "abcdefghijklmnop" not in cleaned and "mysecretvalue123" not in cleaned
    assert cleaned.count("[redacted]") == 2
