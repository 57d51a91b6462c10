"""Fixtures for every test: the loopback LLM server and a fake API key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.llm_server import LLMServer

FAKE_KEY = "sk-test-SECRET-0123456789abcdef"
"""A key that must never show up in errors, logs or files."""


@pytest.fixture(scope="session")
def _server() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


@pytest.fixture
def llm_server(_server: LLMServer) -> Iterator[LLMServer]:
    """The running loopback server, reset (no faults, no latency, no records) for each test."""
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture
def fake_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """Put a fake key in OPENAI_API_KEY and ANTHROPIC_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    return FAKE_KEY
