"""Context windows looked up from the session's model id."""

from __future__ import annotations

import pytest

from tui_compactor.engine.models import known_context_window


@pytest.mark.parametrize(
    ("model_id", "window"),
    [
        ("claude-opus-4-5", 200_000),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("anthropic/claude-3-opus-20240229", 200_000),
        ("gpt-5.1-codex", 400_000),
        ("GPT-4o-mini", 128_000),
        ("gpt-4.1-mini", 1_047_576),
        ("gemini-2.5-pro", 1_048_576),
        ("my-local-model", None),
        (None, None),
        ("", None),
    ],
)
def test_known_context_window(model_id: str | None, window: int | None) -> None:
    assert known_context_window(model_id) == window
