"""Start-up cost of a headless command: ``plan`` imports what planning needs and nothing else
(no other command, no pydantic when there is no configuration to validate, no HTTP client, no
tokenizer tables it does not count with, no UI), and still honours a config file and the
``TUI_COMPACTOR_*`` variables when they exist. Checked in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_compactor.workbench.settings import resolve_settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tui_compactor" / "data" / "sample-session.jsonl"

PROBE = r"""
import json, sys
from tui_compactor.cli import main
status = main(sys.argv[1:])
sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\n")
raise SystemExit(status)
"""

NOT_FOR_PLAN = ("pydantic", "httpx", "tiktoken", "textual", "rich")


def _run_plan(home: Path, *flags: str, env: dict[str, str] | None = None) -> tuple[dict, set[str]]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    clean.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **(env or {}))
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "plan", str(SAMPLE), "--json", *flags],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stderr.splitlines() if x.startswith("MODULES "))
    return json.loads(result.stdout), set(json.loads(line.removeprefix("MODULES ")))


def test_plan_without_configuration_imports_only_what_planning_needs(tmp_path: Path) -> None:
    report, modules = _run_plan(tmp_path, "--tokens", "pi")
    assert report["plans"][0]["firstKeptEntryId"]  # it planned
    loaded = sorted(m for m in modules if m.split(".")[0] in NOT_FOR_PLAN)
    assert loaded == [], f"plan imported {loaded[:8]}"
    commands = sorted(m for m in modules if m.startswith("tui_compactor.commands."))
    assert commands == ["tui_compactor.commands.engine_args", "tui_compactor.commands.plan"]
    assert not any(m.startswith("tui_compactor.summarize") for m in modules)


def test_plan_still_reads_the_config_file_and_the_variables(tmp_path: Path) -> None:
    config = tmp_path / ".config" / "tui-compactor" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[compaction]\nkeep_recent_tokens = 5000\n", encoding="utf-8")
    report, _ = _run_plan(tmp_path, "--tokens", "pi")
    assert report["plans"][0]["keepRecentTokens"] == 5000
    config.unlink()
    report, _ = _run_plan(tmp_path, env={"TUI_COMPACTOR_TOKENS": "pi"})
    assert report["tokens"] == "pi"
    bad = {"TUI_COMPACTOR_KEEP_RECENT_TOKENS": "lots"}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TUI_COMPACTOR_")}
    clean.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"), **bad)
    result = subprocess.run(
        [sys.executable, "-m", "tui_compactor", "plan", str(SAMPLE)],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "keep_recent_tokens" in result.stderr


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"rules": "omp"},
        {"tokens": "pi", "keep_recent_tokens": 5000},
        {"rules": "omp", "tokens": "cl100k", "calibrate": False},
        {"context_window": 32_000, "reserve_tokens": 4000, "split_turns": False},
    ],
)
def test_no_configuration_resolves_like_an_empty_config_file(
    tmp_path: Path, flags: dict[str, object]
) -> None:
    """Without a file or a variable the settings are made without reading any config; they
    must equal, value and source, what an empty config file gives."""
    empty = tmp_path / "empty.toml"
    empty.write_text("", encoding="utf-8")
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    fast = resolve_settings(flags, environ=environ)
    read = resolve_settings(flags, config_file=empty, environ=environ)
    assert fast == read
    assert dict(fast.sources) == dict(read.sources)
    assert fast.config.model_dump() == read.config.model_dump()


def test_the_program_flushes_everything_and_keeps_the_exit_status(tmp_path: Path) -> None:
    """``python -m tui_compactor`` ends a headless command without interpreter teardown: all
    output still arrives (through a pipe and into a file) and the status is the command's."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TUI_COMPACTOR_") and k != "PYTHONUNBUFFERED"  # buffered, as usual
    }
    clean.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / ".config"))
    program = [sys.executable, "-m", "tui_compactor"]
    inspect = subprocess.run(
        [*program, "inspect", str(SAMPLE), "--json", "--tokens", "pi"], cwd=ROOT, env=clean,
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert inspect.returncode == 0
    assert len(inspect.stdout) > 200_000  # several pipe buffers
    assert len(json.loads(inspect.stdout)["entries"]) == 1013  # nothing cut off
    out = tmp_path / "plan.txt"
    with out.open("wb") as handle:  # many small prints, all still in the buffer at the end
        plan = subprocess.run(
            [*program, "plan", str(SAMPLE)], cwd=ROOT, env=clean, stdout=handle,
            stderr=subprocess.PIPE, timeout=120,
        )  # fmt: skip
    text = out.read_text(encoding="utf-8")
    assert plan.returncode == 0
    assert text.startswith("session ") and "cut at" in text and "  keep  " in text
    refused = subprocess.run(
        [*program, "plan", str(SAMPLE), "--cut", "no-such-entry"], cwd=ROOT, env=clean,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2 and "no-such-entry" in refused.stderr


def test_the_provider_flag_offers_exactly_the_configs_providers() -> None:
    # The parsers keep their own copy so that building them imports no pydantic.
    from typing import get_args

    from tui_compactor.commands.engine_args import PROVIDERS
    from tui_compactor.config import ProviderName

    assert PROVIDERS == get_args(ProviderName)
