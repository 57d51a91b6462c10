"""The context is read from the leaf up, only as far as it reaches.

pi's ``buildSessionContext`` reads the whole path root..leaf; ours walks up from the leaf and
stops at the latest compaction's first kept entry once the settings are known. These tests
hold it to a plain forward reading of the whole path (pi's algorithm, written out here) at
every node of the shared fixtures and of generated trees with several compactions across
branches, check that the walk really stops, and that every token figure (the planner's
backward scan, the gauge's estimate, the ``context`` command's one-pass tally) is the same.
oh-my-pi's rules are held the same way to its own forward reading (resets, remote compactions,
models per role, modes), on the same fixtures and on trees with its entries.
"""

from __future__ import annotations

import io
import json
import random
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from tui_compactor.cli import main
from tui_compactor.engine.context import (
    ContextTally,
    _omp_append,
    _omp_shape,
    _strip_dangling_calls,
    _strip_failed_omp,
    build_context,
    context_model,
    context_tokens_at,
    estimate_context_tokens,
    item_tokens,
    omp_remote_payload,
    stream_context,
)
from tui_compactor.engine.tokens import TokenCache, get_counter
from tui_compactor.session.reader import load_session
from tui_compactor.session.session import SETTING_TYPES

TESTS = Path(__file__).resolve().parents[1]
SHARED = sorted(
    [
        *(TESTS / "fixtures" / "oracle" / "sessions").glob("*.jsonl"),
        *(TESTS / "engine" / "data" / "oracle" / "sessions").glob("*.jsonl"),
        *(TESTS / "fixtures" / "sessions").glob("*.jsonl"),
        *(TESTS / "fixtures" / "bad").glob("*.jsonl"),
    ]
)
PI = get_counter("pi")


def reference_context(session: Any, leaf: int) -> dict[str, Any]:
    """pi's buildSessionContext read forward over the whole path."""
    path = [session.entries[index] for index in session.path_to(leaf)]
    thinking: Any = "off"
    model = None
    compaction = None
    for position, entry in enumerate(path):
        if entry.type == "thinking_level_change":
            thinking = entry.data.get("thinkingLevel")
        elif entry.type == "model_change":
            model = {"provider": entry.data.get("provider"), "modelId": entry.data.get("modelId")}
        elif entry.type == "message" and entry.role == "assistant":
            message = entry.message or {}
            model = {"provider": message.get("provider"), "modelId": message.get("model")}
        elif entry.type == "compaction":
            compaction = position

    def contributes(entry: Any) -> bool:
        if entry.type == "message":
            return entry.role is not None or entry.message is not None
        if entry.type == "branch_summary":
            return bool(entry.data.get("summary"))
        return entry.type == "custom_message"

    items: list[int] = []
    warned = False
    if compaction is None:
        items = [entry.index for entry in path if contributes(entry)]
    else:
        items.append(path[compaction].index)
        first_kept = path[compaction].data.get("firstKeptEntryId")
        start = next((p for p in range(compaction) if path[p].id == first_kept), None)
        warned = start is None
        kept = path[start:compaction] if start is not None else []
        items += [entry.index for entry in [*kept, *path[compaction + 1 :]] if contributes(entry)]
    return {
        "items": items,
        "thinking": thinking,
        "model": model,
        "compaction": path[compaction].index if compaction is not None else None,
        "warned": warned,
    }


def walked_context(session: Any, leaf: int) -> dict[str, Any]:
    ctx = build_context(session, leaf)
    return {
        "items": [item.entry_index for item in ctx.items],
        "thinking": ctx.thinking_level,
        "model": ctx.model,
        "compaction": ctx.compaction_index,
        "warned": bool(ctx.warnings),
    }


def assert_figures_agree(session: Any, leaf: int) -> None:
    """Every way of measuring the context at ``leaf`` gives the same figure."""
    ctx = build_context(session, leaf)
    cache = TokenCache(session, PI)
    built = estimate_context_tokens(ctx, PI, cache)
    assert context_tokens_at(session, leaf, PI, TokenCache(session, PI)).to_json() == {
        **built.to_json(),
        "localEstimate": built.local_estimate if built.last_usage_index is None else None,
    }
    tally = ContextTally()
    streamed, items = stream_context(session, leaf)
    for item in items:
        tally.add(item, item_tokens(item, PI, cache))
    assert tally.result() == built
    assert streamed.model == ctx.model == context_model(session, leaf)
    assert streamed.thinking_level == ctx.thinking_level


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_context_equals_the_whole_path_reading_on_the_shared_fixtures(path: Path) -> None:
    session = load_session(path)
    for leaf in range(len(session.entries)):
        assert walked_context(session, leaf) == reference_context(session, leaf), leaf
        assert_omp_context_is_the_whole_path_reading(session, leaf)
    for leaf in range(0, len(session.entries), max(1, len(session.entries) // 40)):
        assert_figures_agree(session, leaf)


def generated_tree(seed: int, entries: int = 400, *, omp: bool = False) -> list[dict[str, Any]]:
    """A session tree with branches everywhere and several compactions per branch: first
    kept ids on the path, off the path (another branch) and unknown; settings changes;
    branch summaries with and without text; custom messages; usage on some turns. With
    ``omp``, oh-my-pi's entries too: remote compactions (with and without a replay id),
    ``reset_boundary``, ``mode_change`` and role ``model_change`` entries."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": f"s{seed}", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/p"}
    ]  # fmt: skip
    parents: dict[str, str | None] = {}
    ids: list[str] = []

    def path_of(entry_id: str | None) -> list[str]:
        out = []
        while entry_id is not None:
            out.append(entry_id)
            entry_id = parents[entry_id]
        return out[::-1]

    tip: str | None = None
    for n in range(entries):
        if ids and rng.random() < 0.08:
            tip = rng.choice(ids)  # branch off anywhere
        entry_id = f"e{n:05d}"
        stamp = f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        base = {"id": entry_id, "parentId": tip, "timestamp": stamp}
        roll = rng.random()
        if omp and roll >= 0.86:  # in place of some assistant turns
            record = omp_record(rng, base, path_of(tip) if tip is not None else [], ids, n)
        elif roll < 0.07 and tip is not None:
            on_path = path_of(tip)
            choice = rng.random()
            if choice < 0.7:
                first_kept = rng.choice(on_path[-12:])
            elif choice < 0.85:
                first_kept = rng.choice(ids)  # maybe on another branch
            else:
                first_kept = "missing"
            record = {**base, "type": "compaction", "summary": f"summary {n}",
                      "firstKeptEntryId": first_kept, "tokensBefore": 1000 + n}  # fmt: skip
        elif roll < 0.11:
            record = {**base, "type": "thinking_level_change",
                      "thinkingLevel": rng.choice(["low", "high", "off"])}  # fmt: skip
        elif roll < 0.14:
            record = {**base, "type": "model_change", "provider": "p", "modelId": f"m{n}"}
        elif roll < 0.17:
            record = {**base, "type": "branch_summary", "fromId": ids[0] if ids else "x",
                      "summary": rng.choice(["", f"branch {n}"])}  # fmt: skip
        elif roll < 0.19:
            record = {**base, "type": "custom_message", "customType": "note",
                      "content": f"note {n}", "display": True}  # fmt: skip
        elif roll < 0.21:
            record = {**base, "type": "label", "targetId": tip, "label": f"l{n}"}
        elif roll < 0.55:
            text = f"ask {n} " * rng.randint(1, 30)
            record = {**base, "type": "message", "message": {"role": "user", "content": text}}
        else:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {n} " * rng.randint(1, 40)}],
                "provider": "anthropic",
                "model": f"claude-{n % 3}",
                "stopReason": rng.choice(["stop", "stop", "stop", "error", "aborted"]),
            }
            if rng.random() < 0.5:
                message["usage"] = {"input": 100 + n, "output": 10, "cacheRead": 0,
                                    "cacheWrite": 0, "totalTokens": 110 + n}  # fmt: skip
            record = {**base, "type": "message", "message": message}
        records.append(record)
        parents[entry_id] = tip
        ids.append(entry_id)
        tip = entry_id
    return records


def omp_record(
    rng: random.Random, base: dict[str, Any], on_path: list[str], ids: list[str], n: int
) -> dict[str, Any]:
    """One of oh-my-pi's own entries (``generated_tree(omp=True)``)."""
    roll = rng.random()
    if roll < 0.3 and on_path:
        remote = {"provider": "openai", "replacementHistory": [{"type": "message"}]}
        record = {**base, "type": "compaction", "summary": f"remote {n}", "tokensBefore": n,
                  "firstKeptEntryId": rng.choice(on_path[-12:]),
                  "preserveData": {"openaiRemoteCompaction": remote}}  # fmt: skip
        choice = rng.random()
        if choice < 0.6:
            record["providerReplayThroughEntryId"] = rng.choice(on_path[-12:])
        elif choice < 0.75:
            record["providerReplayThroughEntryId"] = rng.choice(ids)
        return record
    if roll < 0.45:
        return {**base, "type": "reset_boundary"}
    if roll < 0.65:
        return {**base, "type": "mode_change", "mode": rng.choice(["plan", "none", "vibe"])}
    role = rng.choice([None, "default", "smol", "slow", ""])
    record = {**base, "type": "model_change", "model": rng.choice([f"p/m{n}", ""])}
    if role is not None:
        record["role"] = role
    return record


def reference_context_omp(session: Any, leaf: int) -> dict[str, Any]:
    """oh-my-pi's buildSessionContext read forward over the whole path (its model context:
    the emitted entries before dangling calls and failed turns are stripped, and settings)."""
    path = [session.entries[index] for index in session.path_to(leaf)]
    thinking: Any = "off"
    models: dict[str, str] = {}
    explicit = False
    mode = "none"
    compaction = reset = -1
    for position, entry in enumerate(path):
        data = entry.data
        if entry.type == "thinking_level_change":
            level = data.get("thinkingLevel")
            thinking = level if level is not None else "off"
        elif entry.type == "model_change" and data.get("model"):
            role = "default" if data.get("role") is None else str(data["role"])  # role ?? …
            models[role] = str(data["model"])
            explicit = explicit or role == "default"
        elif entry.type == "message" and entry.role == "assistant" and not explicit:
            message = entry.message or {}
            models["default"] = f"{message.get('provider')}/{message.get('model')}".replace(
                "None", "undefined"
            )
        elif entry.type == "compaction":
            compaction = position
        elif entry.type == "mode_change":
            mode = str(data.get("mode"))
        elif entry.type == "reset_boundary":
            reset = position
    emitted: list[int] = []
    summary = None
    warned = False
    if reset >= 0 and reset > compaction:
        emitted = [entry.index for entry in path[reset + 1 :]]
    elif compaction >= 0:
        data = path[compaction].data
        summary = path[compaction].index
        remote = omp_remote_payload(data) is not None
        if not remote:
            first_kept = data.get("firstKeptEntryId")
            start = next((p for p in range(compaction) if path[p].id == first_kept), None)
            warned = start is None
            if start is not None:
                emitted = [entry.index for entry in path[start:compaction]]
        elif data.get("providerReplayThroughEntryId"):
            through = data.get("providerReplayThroughEntryId")
            start = next((p for p in range(compaction) if path[p].id == through), None)
            if start is not None:
                emitted = [entry.index for entry in path[start + 1 : compaction]]
        emitted += [entry.index for entry in path[compaction + 1 :]]
    else:
        emitted = [entry.index for entry in path]
    default = models.get("default")
    return {
        "summary": summary,
        "emitted": emitted,
        "thinking": thinking,
        "models": list(models.items()),  # in order: a JavaScript object keeps its first keys
        "mode": mode,
        "model": None if default is None else dict(
            zip(("provider", "modelId"), default.split("/", 1) + [""] * ("/" not in default),
                strict=True)),
        "warned": warned,
    }  # fmt: skip


def walked_context_omp(session: Any, leaf: int) -> dict[str, Any]:
    ctx, compaction, _, shown = _omp_shape(session, leaf)
    return {
        "summary": compaction.index if compaction is not None else None,
        "emitted": shown,
        "thinking": ctx.thinking_level,
        "models": list(ctx.models.items()),
        "mode": ctx.mode,
        "model": ctx.model,
        "warned": bool(ctx.warnings),
    }


def assert_omp_context_is_the_whole_path_reading(session: Any, leaf: int) -> None:
    """The walk emits what the forward reading does, and the context built from it (what the
    model gets, after oh-my-pi strips dangling calls and failed turns) is the same."""
    expected = reference_context_omp(session, leaf)
    assert walked_context_omp(session, leaf) == expected, leaf
    items: list[Any] = []
    for index in expected["emitted"]:
        _omp_append(items, session.entries[index])
    stripped = _strip_failed_omp(_strip_dangling_calls(items))
    built = build_context(session, leaf, rules="omp")
    assert context_model(session, leaf, rules="omp") == expected["model"], leaf
    offset = 0 if expected["summary"] is None else 1
    assert [(item.entry_index, item.role, item.message) for item in built.items[offset:]] == [
        (item.entry_index, item.role, item.message) for item in stripped
    ], leaf


@pytest.mark.parametrize("seed", range(6))
def test_context_equals_the_whole_path_reading_on_generated_trees(
    seed: int, tmp_path: Path
) -> None:
    path = tmp_path / f"tree-{seed}.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in generated_tree(seed)))
    session = load_session(path)
    compactions = [entry.index for entry in session.entries if entry.type == "compaction"]
    assert len(compactions) >= 10
    several = 0
    for leaf in range(len(session.entries)):
        expected = reference_context(session, leaf)
        assert walked_context(session, leaf) == expected, leaf
        on_path = set(session.path_to(leaf))
        several += sum(1 for index in compactions if index in on_path) >= 2
        assert_figures_agree(session, leaf)
        assert_omp_context_is_the_whole_path_reading(session, leaf)
    assert several > 50  # many leaves see more than one compaction on their path


@pytest.mark.parametrize("seed", range(6))
def test_omp_context_equals_the_whole_path_reading_on_generated_trees(
    seed: int, tmp_path: Path
) -> None:
    """oh-my-pi's rules on trees with its own entries: resets newer and older than the latest
    compaction, remote compactions with a replay id on the path, off it or none, roles."""
    path = tmp_path / f"omp-tree-{seed}.jsonl"
    records = generated_tree(seed, omp=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    session = load_session(path)
    kinds = {entry.type for entry in session.entries}
    assert {"reset_boundary", "mode_change", "model_change", "compaction"} <= kinds
    shapes = set()
    roles = 0
    for leaf in range(len(session.entries)):
        assert_omp_context_is_the_whole_path_reading(session, leaf)
        ctx, compaction, remote, _ = _omp_shape(session, leaf)
        if compaction is not None:
            shapes.add("remote" if remote else "local")
        roles = max(roles, len(ctx.models))
    assert shapes == {"remote", "local"} and roles >= 2


class CountingEntries(list):  # type: ignore[type-arg]
    """``session.entries`` that notes which entries were read."""

    def __init__(self, entries: list[Any]) -> None:
        super().__init__(entries)
        self.read: set[int] = set()

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int):
            self.read.add(index if index >= 0 else len(self) + index)
        return super().__getitem__(index)


def linear_session(path: Path, body: int, *, thinking_in_tail: bool) -> Path:
    """A long chain: settings at the root, ``body`` turns, a compaction keeping the last ten,
    then (``thinking_in_tail``) a new thinking level, and an assistant turn."""
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "thinking_level_change", "id": "t0", "parentId": None,
         "timestamp": "2026-01-01T00:00:00Z", "thinkingLevel": "medium"},
        {"type": "model_change", "id": "m0", "parentId": "t0",
         "timestamp": "2026-01-01T00:00:00Z", "provider": "p", "modelId": "root-model"},
    ]  # fmt: skip
    parent = "m0"
    for n in range(body):
        role = "user" if n % 2 == 0 else "toolResult"
        message: dict[str, Any] = {"role": role, "content": f"turn {n}"}
        if role == "toolResult":
            message.update(toolCallId=f"c{n}", toolName="bash", isError=False)
        records.append({"type": "message", "id": f"n{n}", "parentId": parent,
                        "timestamp": "2026-01-01T00:00:01Z", "message": message})  # fmt: skip
        parent = f"n{n}"
    records.append({"type": "compaction", "id": "c", "parentId": parent,
                    "timestamp": "2026-01-01T00:00:02Z", "summary": "s",
                    "firstKeptEntryId": f"n{body - 10}", "tokensBefore": 5})  # fmt: skip
    parent = "c"
    if thinking_in_tail:
        records.append({"type": "thinking_level_change", "id": "t1", "parentId": parent,
                        "timestamp": "2026-01-01T00:00:03Z", "thinkingLevel": "high"})  # fmt: skip
        parent = "t1"
    records.append({"type": "message", "id": "a1", "parentId": parent,
                    "timestamp": "2026-01-01T00:00:03Z",
                    "message": {"role": "assistant", "content": [], "provider": "p",
                                "model": "tail-model", "stopReason": "stop"}})  # fmt: skip
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_the_walk_stops_at_the_first_kept_entry(tmp_path: Path) -> None:
    """With the settings decided after the compaction, nothing before its kept part is read:
    the cost follows the context (12 entries), not the path (2,000). oh-my-pi's rules read the
    setting changes above it too (any of them may set a role's model), nothing else."""
    session = load_session(linear_session(tmp_path / "s.jsonl", 2000, thinking_in_tail=True))
    first_kept = session.index_of("n1990")
    assert first_kept is not None
    counting = CountingEntries(session.entries)
    session.entries = counting
    ctx = build_context(session, session.leaf)
    assert (ctx.thinking_level, ctx.model) == ("high", {"provider": "p", "modelId": "tail-model"})
    assert [item.entry_index for item in ctx.items[1:]][:1] == [first_kept]
    assert min(counting.read) == first_kept
    counting.read.clear()
    context_tokens_at(session, session.leaf, PI)
    assert min(counting.read) == first_kept
    counting.read.clear()
    omp = build_context(session, session.leaf, rules="omp")
    assert (omp.thinking_level, omp.models) == ("high", {"default": "p/tail-model"})
    assert [item.entry_index for item in omp.items[1:]][:1] == [first_kept]
    settings = {session.index_of("t0"), session.index_of("m0")}  # the setting changes above
    assert counting.read - settings == set(range(first_kept, len(session.entries)))
    counting.read.clear()  # the model alone (the window at load): the settings only
    assert context_model(session, session.leaf, rules="omp") == omp.model
    assert counting.read == settings | {session.index_of("t1"), session.leaf}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        # a session that records its default first: smol -> slow -> smol lists smol first
        (["default:p/d", "smol:p/s1", "slow:p/w", "smol:p/s2", "turn"],
         [("default", "p/d"), ("smol", "p/s2"), ("slow", "p/w")]),
        # no explicit default: the first assistant turn sets it, after a role set before it
        (["smol:p/s1", "turn", "slow:p/w", "smol:p/s2", "turn"],
         [("smol", "p/s2"), ("default", "p/m"), ("slow", "p/w")]),
        # an explicit default after a turn keeps the place the turn gave it
        (["smol:p/s1", "turn", "slow:p/w", "default:p/d"],
         [("smol", "p/s1"), ("default", "p/d"), ("slow", "p/w")]),
    ],
)  # fmt: skip
def test_omp_models_are_listed_in_the_order_each_role_was_first_set(
    changes: list[str], expected: list[tuple[str, str]], tmp_path: Path
) -> None:
    """``context --json --rules omp`` lists ``models`` as oh-my-pi's forward reading fills its
    object: each role where it was first set, whatever changed it later."""
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/p"}
    ]  # fmt: skip
    parent = None
    for n, change in enumerate(changes):
        base = {"id": f"e{n}", "parentId": parent, "timestamp": "2026-01-01T00:00:01Z"}
        if change == "turn":
            message = {"role": "assistant", "content": [], "provider": "p", "model": "m",
                       "stopReason": "stop"}  # fmt: skip
            records.append({**base, "type": "message", "message": message})
        else:
            role, model = change.split(":")
            records.append({**base, "type": "model_change", "model": model, "role": role})
        parent = f"e{n}"
    path = tmp_path / "roles.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    session = load_session(path)
    ctx = build_context(session, session.leaf, rules="omp")
    assert list(ctx.models.items()) == expected
    assert list(reference_context_omp(session, session.leaf)["models"]) == expected
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["context", str(path), "--json", "--rules", "omp"]) == 0
    assert list(json.loads(out.getvalue())["models"].items()) == expected


class WatchedEntry:
    """An entry that notes when its record is read (``data`` or ``message``)."""

    def __init__(self, entry: Any, reads: set[int]) -> None:
        self._entry, self._reads = entry, reads

    def __getattr__(self, name: str) -> Any:
        if name in ("data", "data_once", "message"):
            self._reads.add(self._entry.index)
        return getattr(self._entry, name)


def test_the_usage_figure_reads_no_record_before_the_usage(tmp_path: Path) -> None:
    """The context tokens at a leaf measure what follows the last usage; the messages before
    it (bash runs here) are only counted, their records never read."""
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/p"},
    ]  # fmt: skip
    parent = None
    for n in range(6):
        message = {"role": "bashExecution", "command": f"ls {n}", "output": "x" * 400,
                   "exitCode": 0, "excludeFromContext": n % 2 == 0}  # fmt: skip
        records.append({"type": "message", "id": f"b{n}", "parentId": parent,
                        "timestamp": "2026-01-01T00:00:01Z", "message": message})  # fmt: skip
        parent = f"b{n}"
    usage = {"input": 900, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 910}
    records.append({"type": "message", "id": "a", "parentId": parent,
                    "timestamp": "2026-01-01T00:00:02Z",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                                "provider": "p", "model": "m", "stopReason": "stop",
                                "usage": usage}})  # fmt: skip
    records.append({"type": "message", "id": "u", "parentId": "a",
                    "timestamp": "2026-01-01T00:00:03Z",
                    "message": {"role": "user", "content": "and now?"}})  # fmt: skip
    path = tmp_path / "bash.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    session = load_session(path)
    expected = estimate_context_tokens(build_context(session, session.leaf), PI, local=False)
    reads: set[int] = set()
    session.entries = [WatchedEntry(entry, reads) for entry in session.entries]
    figure = context_tokens_at(session, session.leaf, PI)
    assert figure == expected
    assert (figure.usage_tokens, figure.last_usage_index) == (910, 6)
    assert reads == {session.index_of("a"), session.index_of("u")}


def test_a_thinking_level_set_at_the_start_is_found_without_the_path(tmp_path: Path) -> None:
    """The thinking level set once at the session's start (as agents write it): read from
    the setting entries above the kept part, not by walking the 2,000 turns to them."""
    session = load_session(linear_session(tmp_path / "s.jsonl", 2000, thinking_in_tail=False))
    first_kept = session.index_of("n1990")
    assert first_kept is not None
    counting = CountingEntries(session.entries)
    session.entries = counting
    ctx = build_context(session, session.leaf)
    assert ctx.thinking_level == "medium"
    assert ctx.model == {"provider": "p", "modelId": "tail-model"}
    settings = {session.index_of("t0"), session.index_of("m0")}
    assert counting.read - settings == set(range(first_kept, len(session.entries)))
    session.entries = list(counting)
    assert walked_context(session, session.leaf) == reference_context(session, session.leaf)


def test_older_settings_are_still_found_above_the_kept_part(tmp_path: Path) -> None:
    """No assistant turn in the context: the model is read further up, stepwise."""
    session = load_session(linear_session(tmp_path / "s.jsonl", 200, thinking_in_tail=False))
    leaf = session.index_of("c")
    assert leaf is not None
    ctx = build_context(session, leaf)
    assert ctx.thinking_level == "medium"
    assert ctx.model == {"provider": "p", "modelId": "root-model"}
    assert walked_context(session, leaf) == reference_context(session, leaf)
    assert context_model(session, leaf) == ctx.model


def nearest_setting_by_walk(session: Any, index: int) -> int | None:
    node: int | None = index
    while node is not None and session.entries[node].type not in SETTING_TYPES:
        node = session.entries[node].parent
    return node


def test_setting_above_is_the_nearest_setting_change_on_the_path(tmp_path: Path) -> None:
    """The index the loader keeps, on the fixtures, generated trees and after a refresh."""
    paths = [*SHARED]
    for seed in range(3):
        path = tmp_path / f"tree-{seed}.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in generated_tree(seed)))
        paths.append(path)
    for path in paths:
        session = load_session(path)
        for index in range(len(session.entries)):
            assert session.setting_above(index) == nearest_setting_by_walk(session, index)
    grown = tmp_path / "grown.jsonl"
    records = generated_tree(9, entries=60)
    grown.write_text("".join(json.dumps(record) + "\n" for record in records[:40]))
    session = load_session(grown)
    with grown.open("a") as handle:
        handle.write("".join(json.dumps(record) + "\n" for record in records[40:]))
    session.refresh()
    assert len(session.entries) == 60
    for index in range(len(session.entries)):
        assert session.setting_above(index) == nearest_setting_by_walk(session, index)


def test_context_command_figure_is_the_gauges_figure(tmp_path: Path) -> None:
    """``context --json`` measures in its one pass what the app's gauge measures."""
    path = tmp_path / "tree.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in generated_tree(3)))
    session = load_session(path)
    leaves = session.leaves[-5:]
    for leaf in leaves:
        out = io.StringIO()
        with redirect_stdout(out):
            status = main(["context", str(path), "--at", session.entries[leaf].id,
                           "--tokens", "pi", "--json"])  # fmt: skip
        assert status == 0
        data = json.loads(out.getvalue())
        ctx = build_context(session, leaf)
        expected = estimate_context_tokens(ctx, PI, TokenCache(session, PI))
        assert data["contextTokens"] == expected.to_json()
        assert data["length"] == len(data["items"]) == len(build_context(session, leaf).items)


def test_token_cache_blocks(tmp_path: Path) -> None:
    """Counts kept per block of entries: the same counts wherever the blocks start, and after
    ``invalidate``."""
    session = load_session(linear_session(tmp_path / "s.jsonl", 9000, thinking_in_tail=True))
    cache = TokenCache(session, PI)
    fresh = TokenCache(session, PI)
    order = [len(session.entries) - 1, 0, 4095, 4096, 8191, 8192, 5000, 3]
    counted = [cache.entry_tokens(index) for index in order]
    assert counted == [fresh.entry_tokens(index) for index in order]
    assert counted == [cache.entry_tokens(index) for index in order]  # from the cache
    assert cache.entry_tokens(0) is None  # thinking_level_change: not a message
    assert cache.message_tokens(0) == 0
    cache.invalidate()
    assert [cache.entry_tokens(index) for index in order] == counted
