"""Fidelity audit: anchors from the summarized region, and which a summary dropped."""

from __future__ import annotations

from tests.summarize.test_offline import MESSAGES
from tui_compactor.summarize.audit import audit_summary, extract_anchors
from tui_compactor.summarize.base import SummaryRequest
from tui_compactor.summarize.offline import offline_text


def test_anchor_kinds() -> None:
    anchors = extract_anchors(MESSAGES)
    kinds = {kind for kind, _ in anchors}
    assert {"path", "error", "command", "request"} <= kinds
    texts = [text for _, text in anchors]
    assert "src/app/loader.py" in texts
    assert "pytest -q tests/test_loader.py" in texts
    assert any("TypeError: load() missing" in t for t in texts)
    assert ("identifier", "load_all") in anchors and ("identifier", "load_many") in anchors
    assert anchors[-1][0] == "request"


def test_numbers_the_user_gave() -> None:
    messages = [{"role": "user", "content": "set the timeout to 45s and retries to 12"}]
    assert ("number", "45s") in extract_anchors(messages)
    assert ("number", "12") in extract_anchors(messages)


def test_missing_anchors_reported_and_focus_built() -> None:
    audit = audit_summary(MESSAGES, "## Goal\nFix a crash in src/app/loader.py\n")
    missing = {a.text for a in audit.missing}
    assert "src/app/loader.py" not in missing
    assert "pytest -q tests/test_loader.py" in missing
    assert 0 < audit.coverage < 1
    focus = audit.focus_instructions()
    assert focus is not None and "pytest -q tests/test_loader.py" in focus
    assert audit.to_json()["missing"]


def test_offline_summary_keeps_its_anchors() -> None:
    text = offline_text(
        SummaryRequest(kind="summary", system="", prompt="", max_tokens=4000, messages=MESSAGES)
    )
    audit = audit_summary(MESSAGES, text)
    kept_kinds = {a.kind for a in audit.kept}
    assert {"path", "command", "error", "request"} <= kept_kinds
    # What the offline summary lacks, a regenerate with the focus text restores.
    focused = offline_text(
        SummaryRequest(
            kind="summary",
            system="",
            prompt="",
            max_tokens=4000,
            messages=MESSAGES,
            focus=audit.focus_instructions(),
        )
    )
    assert audit_summary(MESSAGES, focused).missing == []
