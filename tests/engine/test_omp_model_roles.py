"""Model changes with an empty or odd role: oh-my-pi keeps the role, pi has no roles.

oh-my-pi's ``buildSessionContext`` files a ``model_change`` under ``role ?? "default"``: only a
missing or null role is the default model; ``""`` is a role of its own. pi reads a model change
as ``{provider, modelId}`` and ignores any role. ``engine.context`` decides both (the context's
``models`` under omp rules, ``model`` under pi rules); held here to stored answers and, live, to
oh-my-pi's own code (every value of the oracle's golden) and pi's own ``SessionManager``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.engine.omp_golden import compare
from tests.support.omp_oracle import omp_golden, skip_reason
from tui_compactor.engine.context import build_context
from tui_compactor.session.reader import load_session

HEADER = {
    "type": "session",
    "version": 3,
    "id": "1a2b3c4d-0000-4000-8000-000000000001",
    "timestamp": "2026-02-01T09:00:00.000Z",
    "cwd": "/home/dev/project",
}
COST = {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}


def _session(path: Path, changes: list[dict[str, Any]]) -> Path:
    """user, assistant, the model ``changes``, then a user message (the leaf)."""
    records: list[dict[str, Any]] = [HEADER]

    def add(record: dict[str, Any]) -> None:
        number = len(records)
        parent = records[-1].get("id") if number > 1 else None
        stamp = f"2026-02-01T09:00:{number:02d}.000Z"
        records.append({"id": f"m{number:07d}", "parentId": parent, "timestamp": stamp, **record})

    def message(role: str, **fields: Any) -> dict[str, Any]:
        return {"type": "message", "message": {"role": role, "timestamp": len(records), **fields}}

    add(message("user", content="switch models as we go"))
    usage = {"input": 50, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 60}
    add(
        message(
            "assistant",
            content=[{"type": "text", "text": "Ready."}],
            provider="anthropic",
            model="claude-sonnet-4-5",
            stopReason="stop",
            usage={**usage, "cost": COST},
        )
    )
    for change in changes:
        add({"type": "model_change", **change})
    add(message("user", content="go on"))
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


OMP_CHANGES = [
    {"model": "openai/gpt-5", "role": ""},
    {"model": "anthropic/claude-haiku-4-5", "role": "smol"},
    {"model": "google/gemini-2.5-flash", "role": None},
    {"model": "openai/o3", "role": "slow"},
    {"model": "openai/gpt-5-mini", "role": ""},
]
PI_LAST = [
    {"model": "openai/gpt-5", "role": ""},
    {"provider": "google", "modelId": "gemini-2.5-pro"},
]
OMP_LAST = [
    {"provider": "google", "modelId": "gemini-2.5-pro"},
    {"model": "openai/gpt-5", "role": ""},
]


def _context(path: Path, rules: str) -> Any:
    session = load_session(path)
    try:
        return build_context(session, session.leaf, rules=rules)
    finally:
        session.close()


def test_omp_rules_keep_an_empty_role_apart_from_the_default(tmp_path: Path) -> None:
    """The answers oh-my-pi 18.2.3 gives (checked live below): ``""`` keeps the newest of its
    own changes; a null role is the default, which beats the assistant turn."""
    ctx = _context(_session(tmp_path / "roles.jsonl", OMP_CHANGES), "omp")
    assert ctx.models == {
        "": "openai/gpt-5-mini",
        "smol": "anthropic/claude-haiku-4-5",
        "default": "google/gemini-2.5-flash",
        "slow": "openai/o3",
    }
    assert ctx.model == {"provider": "google", "modelId": "gemini-2.5-flash"}


def test_omp_rules_leave_the_default_to_the_assistant_turn_when_only_an_empty_role_changes(
    tmp_path: Path,
) -> None:
    ctx = _context(
        _session(tmp_path / "empty.jsonl", [{"model": "openai/gpt-5", "role": ""}]), "omp"
    )
    assert ctx.models == {"default": "anthropic/claude-sonnet-4-5", "": "openai/gpt-5"}
    assert ctx.model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}


@pytest.mark.parametrize(
    ("changes", "model"),
    [
        (PI_LAST, {"provider": "google", "modelId": "gemini-2.5-pro"}),
        (OMP_LAST, {"provider": None, "modelId": None}),  # pi reads no `model` field
    ],
)
def test_pi_rules_read_provider_and_model_id_and_no_role(
    changes: list[dict[str, Any]], model: dict[str, Any], tmp_path: Path
) -> None:
    ctx = _context(_session(tmp_path / "pi.jsonl", changes), "pi")
    assert ctx.model == model


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
@pytest.mark.parametrize("changes", [OMP_CHANGES, PI_LAST, OMP_LAST], ids=["roles", "pi", "omp"])
def test_models_match_oh_my_pi_live(changes: list[dict[str, Any]], tmp_path: Path) -> None:
    path = _session(tmp_path / "roles.jsonl", changes)
    golden = omp_golden(path)
    session = load_session(path)
    checks, mismatches = compare(session, golden)
    assert not mismatches, mismatches[:10]
    assert golden["contexts"][0]["models"] == _context(path, "omp").models
    print(f"{checks} of {checks} values match oh-my-pi")


@pytest.mark.parametrize("changes", [PI_LAST, OMP_LAST], ids=["pi", "omp"])
def test_model_matches_pi_live(changes: list[dict[str, Any]], tmp_path: Path) -> None:
    from tests.support.pi_probe import pi_sees

    path = _session(tmp_path / "roles.jsonl", changes)
    theirs = pi_sees(path)["model"]
    ours = _context(path, "pi").model
    assert {key: value for key, value in ours.items() if value is not None} == theirs
