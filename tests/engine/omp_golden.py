"""The engine's answers in the shape of an oh-my-pi oracle golden, and a field-by-field diff.

``ours(session, golden)`` runs the engine under ``--rules omp`` with nothing else set (the
rules' own counter and calibration, as ``settings.rules_defaults`` gives them) at the same
nodes, keep-recent values, budgets and windows the golden used, and returns the compared
sections with the golden's field names: every section but ``oracle``, ``input`` and
``notes`` (the run's own facts), and of ``load`` all but what oh-my-pi's loader writes back to
a file. ``diff`` walks the golden and reports every leaf value that differs. Ids are compared
by entry index (v1 files get fresh ids on every load).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from tui_compactor.engine.branch import collect_branch_entries, new_leaf_for, select_branch_entries
from tui_compactor.engine.context import build_context, estimate_context_tokens
from tui_compactor.engine.fileops import compute_file_lists, format_files_block
from tui_compactor.engine.jstext import utf16_len
from tui_compactor.engine.messages import message_from_entry
from tui_compactor.engine.omp_messages import convert_to_llm_omp, llm_text, omp_custom_message
from tui_compactor.engine.plan import CompactionPlan, omp_usage_tokens, prepare_compaction
from tui_compactor.engine.serialize import serialize_omp
from tui_compactor.engine.settings import (
    CompactionSettings,
    budget_reserve,
    effective_reserve,
    rules_defaults,
    should_compact,
    threshold_tokens,
)
from tui_compactor.engine.tokens import TokenCache, get_counter

LOAD_KEYS = (
    "accepted",
    "titleSlot",
    "originalVersion",
    "versionAfterLoad",
    "migrated",
    "sessionId",
    "cwd",
    "entries",
    "malformedRecords",
)
"""Compared ``load`` fields; the rest record what oh-my-pi's own loader writes to a file
(``copyChanged*``) and its merged header keys."""
SECTIONS = (
    "load",
    "leafId",
    "leafIndex",
    "roots",
    "leaves",
    "branch",
    "entries",
    "contexts",
    "cutPoints",
    "cutPointSweep",
    "branchSummary",
    "otherLeaves",
    "shake",
    "misc",
)
AGENT_ONLY_COMPACTION_SETTINGS = {
    "strategy": "context-full",
    "midTurnEnabled": True,
    "autoContinue": True,
    "remoteEnabled": True,
    "remoteStreamingV2Enabled": True,
    "v2RetainedMessageBudget": 64000,
}
"""The part of oh-my-pi's ``DEFAULT_COMPACTION_SETTINGS`` that steers the running agent (when
and how it compacts live) and that nothing here reads: restated data. The rest
(``enabled``, ``keepRecentTokens``, ``thresholdPercent``, ``thresholdTokens``) is the engine's
own default under omp rules (``default_compaction_settings``)."""


def default_compaction_settings() -> dict[str, Any]:
    """oh-my-pi's ``DEFAULT_COMPACTION_SETTINGS``: the engine's defaults under omp rules, with
    the agent-only keys."""
    engine = CompactionSettings(rules="omp")
    return {
        **AGENT_ONLY_COMPACTION_SETTINGS,
        "enabled": engine.enabled,
        "keepRecentTokens": engine.keep_recent_tokens,
        "thresholdPercent": engine.threshold_percent,
        "thresholdTokens": engine.threshold_tokens,
    }


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cap(items: list[Any]) -> dict[str, Any]:
    return {"items": items, "total": len(items), "truncated": False}


class Ours:
    """The engine under ``--rules omp`` on one session."""

    def __init__(self, session: Any) -> None:
        defaults = rules_defaults("omp")
        self.session = session
        self.counter = get_counter(defaults.tokens)
        self.cache = TokenCache(session, self.counter)
        self.settings = CompactionSettings(rules="omp")
        leaf = session.leaf
        self.on_path = set(session.path_to(leaf)) if leaf is not None else set()

    def id_at(self, index: int | None) -> str | None:
        return None if index is None or index < 0 else self.session.entries[index].id

    # -- entries ---------------------------------------------------------------------------

    def entry(self, index: int) -> dict[str, Any]:
        """Every field the oracle records for an entry."""
        session = self.session
        entry = session.entries[index]
        data = entry.data
        message = entry.message if entry.type == "message" else None
        message = message if isinstance(message, dict) else None
        on_path = self.on_path
        row: dict[str, Any] = {
            "index": index,
            "id": entry.id,
            "parentId": entry.parent_id,
            "type": entry.type,
            "role": message.get("role") if message else None,
            "tokens": self.counter.count_message(message) if entry.type == "message" else None,
            "timestamp": data.get("timestamp"),
            "depth": session.depth(index),
            "childIds": [session.entries[child].id for child in session.children(index)],
            "onCurrentBranch": index in on_path,
            "label": session.label_of(index),
        }
        if entry.type == "custom_message":
            custom = omp_custom_message(data)
            row["derivedMessageTokens"] = (
                self.counter.count_message(custom) if custom is not None else None
            )
        elif entry.type == "branch_summary":
            row["derivedMessageTokens"] = self.counter.count_message(message_from_entry(entry))
        kind = entry.type
        if kind == "message" and message is not None:
            role = message.get("role")
            if role == "assistant":
                from tui_compactor.engine.context import is_empty_error_turn
                from tui_compactor.engine.plan import _omp_prompt_tokens

                content = message.get("content") if isinstance(message.get("content"), list) else []
                row["stopReason"] = message.get("stopReason")
                row["provider"] = message.get("provider")
                row["model"] = message.get("model")
                row["contentTypes"] = [block.get("type") for block in content]
                calls = [block for block in content if block.get("type") == "toolCall"]
                if calls:
                    row["toolCalls"] = [
                        {
                            "id": call.get("id"),
                            "name": call.get("name"),
                            "path": path
                            if isinstance(path := (call.get("arguments") or {}).get("path"), str)
                            else None,
                        }
                        for call in calls
                    ]
                recovery = message.get("retryRecovery")
                if recovery:
                    row["retryRecovery"] = {
                        "kind": recovery.get("kind"),
                        "status": recovery.get("status"),
                    }
                row["emptyErrorTurn"] = is_empty_error_turn(message)
                usage = message.get("usage")
                if isinstance(usage, dict) and usage:
                    row["usage"] = {
                        key: usage.get(key)
                        for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
                    }
                    row["usageContextTokens"] = omp_usage_tokens(usage)
                    row["usagePromptTokens"] = _omp_prompt_tokens(usage)
            elif role == "toolResult":
                content = message.get("content") if isinstance(message.get("content"), list) else []
                row["toolName"] = message.get("toolName")
                row["toolCallId"] = message.get("toolCallId")
                row["isError"] = bool(message.get("isError"))
                row["hasImage"] = any(block.get("type") == "image" for block in content)
                row["prunedAt"] = message.get("prunedAt")
                row["useless"] = message.get("useless") is True
            elif role == "bashExecution":
                row["command"] = message.get("command")
                row["exitCode"] = message.get("exitCode")
                row["cancelled"] = bool(message.get("cancelled"))
                row["excludeFromContext"] = bool(message.get("excludeFromContext"))
        elif kind == "compaction":
            summary = data.get("summary")
            preserve = data.get("preserveData")
            through = data.get("providerReplayThroughEntryId")
            row.update(
                {
                    "method": data.get("method"),
                    "firstKeptEntryId": data.get("firstKeptEntryId"),
                    "firstKeptEntryIndex": session.index_of(data.get("firstKeptEntryId") or ""),
                    "tokensBefore": data.get("tokensBefore"),
                    "tokensAfter": data.get("tokensAfter"),
                    "summaryLength": utf16_len(summary) if isinstance(summary, str) else None,
                    "summaryTokens": self.counter.count_text(summary)
                    if isinstance(summary, str)
                    else None,
                    "shortSummary": data.get("shortSummary"),
                    "warning": data.get("warning"),
                    "details": data.get("details"),
                    "fromExtension": data.get("fromExtension"),
                    "fromHook": data.get("fromHook"),
                    "preserveDataKeys": sorted(preserve) if isinstance(preserve, dict) else [],
                    "providerReplayThroughEntryId": through,
                    "providerReplayThroughEntryIndex": session.index_of(through or ""),
                }
            )
        elif kind == "branch_summary":
            summary = data.get("summary")
            row.update(
                {
                    "fromId": data.get("fromId"),
                    "summaryLength": utf16_len(summary) if isinstance(summary, str) else None,
                    "details": data.get("details"),
                    "fromExtension": data.get("fromExtension"),
                }
            )
        elif kind == "label":
            row.update({"targetId": data.get("targetId"), "labelValue": data.get("label")})
        elif kind == "model_change":
            row.update(
                {
                    "modelRef": data.get("model"),
                    "modelRole": data.get("role"),
                    "provider": data.get("provider"),
                    "modelId": data.get("modelId"),
                }
            )
        elif kind == "thinking_level_change":
            row.update(
                {"thinkingLevel": data.get("thinkingLevel"), "configured": data.get("configured")}
            )
        elif kind == "custom_message":
            row.update(
                {
                    "customType": data.get("customType"),
                    "display": data.get("display"),
                    "attribution": data.get("attribution"),
                }
            )
        elif kind == "custom":
            row["customType"] = data.get("customType")
        return row

    # -- contexts --------------------------------------------------------------------------

    def context(self, leaf: int) -> dict[str, Any]:
        ctx = build_context(self.session, leaf, rules="omp")
        items = []
        llm_roles: list[str] = []
        for item in ctx.items:
            message = item.message
            row: dict[str, Any] = {
                "role": item.role,
                "entryId": self.id_at(item.entry_index),
                "entryIndex": item.entry_index,
                "kind": item.kind,
                "tokens": self.counter.count_message(message),
            }
            content = message.get("content")
            if isinstance(content, list):
                row["contentTypes"] = [
                    block.get("type") if isinstance(block, dict) else None for block in content
                ]
            elif isinstance(content, str):
                row["contentTypes"] = ["string"]
            if item.role == "custom":
                row["customType"] = message.get("customType")
            if item.role == "compactionSummary":
                row["method"] = message.get("method")
                row["blocks"] = len(message.get("blocks") or [])
                payload = message.get("providerPayload")
                row["providerPayload"] = payload.get("type") if payload else None
            if item.role == "bashExecution" and message.get("excludeFromContext"):
                row["excludeFromContext"] = True
            if item.role == "toolResult" and "prunedAt" in message:
                row["pruned"] = True
            if item.rewritten:
                row["rewritten"] = True
            row["llm"] = self.llm_view(message)
            llm_roles.extend(view["role"] for view in row["llm"])
            items.append(row)
        tokens = estimate_context_tokens(ctx, self.counter)
        return {
            "leafId": self.id_at(leaf),
            "leafIndex": leaf,
            "length": len(ctx.items),
            "roles": [item.role for item in ctx.items],
            "entryIndices": [item.entry_index for item in ctx.items],
            "items": items,
            "thinkingLevel": ctx.thinking_level,
            "models": ctx.models,
            "mode": ctx.mode,
            "llmMessageCount": len(llm_roles),
            "llmRoles": llm_roles,
            "contextTokens": tokens.to_json(),
        }

    def llm_view(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for converted in convert_to_llm_omp([message]):
            text = llm_text(converted)
            content = converted.get("content")
            view: dict[str, Any] = {
                "role": converted["role"],
                "textSha256": sha(text),
                "textLength": utf16_len(text),
                "utf8Bytes": len(text.encode("utf-8", "surrogatepass")),
                "images": sum(
                    1
                    for block in (content if isinstance(content, list) else [])
                    if isinstance(block, dict) and block.get("type") == "image"
                ),
            }
            if converted["role"] == "assistant":
                view["toolCallIds"] = [
                    block.get("id")
                    for block in (content if isinstance(content, list) else [])
                    if isinstance(block, dict) and block.get("type") == "toolCall"
                ]
            if message.get("role") in ("compactionSummary", "branchSummary"):
                summary = message.get("summary") or ""
                at = text.find(summary)
                view["summaryOffset"] = -1 if at < 0 else utf16_len(text[:at])
            out.append(view)
        return out

    # -- cut points ------------------------------------------------------------------------

    def plan(self, leaf: int, keep: int) -> CompactionPlan:
        settings = self.settings.with_changes(keep_recent_tokens=keep)
        return prepare_compaction(self.session, leaf, settings, self.counter, cache=self.cache)

    def messages_json(self, plan: CompactionPlan, name: str, full: bool) -> dict[str, Any]:
        items = getattr(plan, name)
        ids = plan.entry_ids(items)
        roles: dict[str, int] = {}
        for item in items:
            role = item.message.get("role")
            roles[role] = roles.get(role, 0) + 1
        out: dict[str, Any] = {
            "count": len(items),
            "firstEntryId": ids[0] if ids else None,
            "lastEntryId": ids[-1] if ids else None,
            "roleCounts": roles,
            "tokens": sum(self.cache.message_tokens(item.entry_index) for item in items),
            "entryIds": cap(ids),
            "entryIndices": cap([item.entry_index for item in items]),
        }
        if full and name != "recent_messages":
            text = serialize_omp(convert_to_llm_omp([item.message for item in items]))
            out["serialized"] = {
                "description": "serializeConversation(convertToLlm(list)) with no dialect",
                "length": utf16_len(text),
                "utf8Bytes": len(text.encode("utf-8", "surrogatepass")),
                "sha256": sha(text),
            }
        return out

    def cut_row(self, leaf: int, keep: int, full: bool) -> dict[str, Any]:
        plan = self.plan(leaf, keep)
        calibration = plan.calibration
        row: dict[str, Any] = {
            "keepRecentTokens": keep,
            "effectiveKeepRecentTokens": plan.effective_keep_recent_tokens,
            "calibration": {
                "promptTokens": calibration[0] if calibration else None,
                "estimatedTokens": calibration[1] if calibration else None,
                "ratio": calibration[2] if calibration else None,
            },
            "prepared": plan.prepared,
            "boundaryStart": plan.boundary_start,
            "boundaryEnd": plan.boundary_end,
            "previousCompactionIndex": plan.previous_compaction_index,
            "resetBoundaryIndex": plan.reset_boundary_index,
            "regionMessageCount": plan.region_message_count,
            "findCutPoint": {
                "firstKeptEntryIndex": plan.first_kept_index
                if plan.first_kept_index >= 0
                else None,
                "turnStartIndex": plan.turn_start_index,
                "isSplitTurn": plan.is_split_turn,
            },
        }
        if not plan.prepared:
            row["reason"] = plan.reason
            return row
        first = plan.first_kept_index
        entry = self.session.entries[plan.branch[first]]
        ops = plan.file_ops
        read_files, modified_files = compute_file_lists(ops, "omp")
        row.update(
            {
                "firstKeptEntryId": plan.first_kept_entry_id,
                "firstKeptEntryIndex": first,
                "firstKeptEntryEntriesIndex": plan.branch[first],
                "firstKeptEntryType": entry.type,
                "firstKeptEntryRole": entry.role if entry.type == "message" else None,
                "turnStartIndex": plan.turn_start_index,
                "turnStartEntryId": self.id_at(plan.branch[plan.turn_start_index])
                if plan.turn_start_index >= 0
                else None,
                "isSplitTurn": plan.is_split_turn,
                "tokensBefore": plan.tokens_before,
                "previousSummary": {
                    "present": True,
                    "length": utf16_len(plan.previous_summary),
                    "sha256": sha(plan.previous_summary),
                }
                if plan.previous_summary
                else {"present": False},
                "previousPreserveDataKeys": plan.previous_preserve_data_keys,
                "messagesToSummarize": self.messages_json(plan, "messages_to_summarize", full),
                "turnPrefixMessages": self.messages_json(plan, "turn_prefix_messages", full),
                "recentMessages": self.messages_json(plan, "recent_messages", full),
                "fileOps": ops.to_json("omp"),
            }
        )
        if full:
            text = format_files_block(read_files, modified_files, ops.read)
            row["formatFileOperations"] = {"text": text, "sha256": sha(text)}
        return row

    def sweep(self, leaf: int, golden: dict[str, Any]) -> dict[str, Any]:
        rows = []
        first = None
        for k in (row[0] for row in golden["rows"]):
            plan = self.plan(leaf, k)
            first = first or plan
            rows.append(
                [
                    k,
                    plan.effective_keep_recent_tokens,
                    1 if plan.prepared else 0,
                    plan.first_kept_index if plan.first_kept_index >= 0 else None,
                    plan.turn_start_index,
                    1 if plan.is_split_turn else 0,
                    len(plan.messages_to_summarize) if plan.prepared else 0,
                ]
            )
        plan = self.plan(leaf, 1000)
        return {
            "boundaryStart": plan.boundary_start,
            "boundaryEnd": plan.boundary_end,
            "calibrationRatio": plan.calibration[2] if plan.calibration else None,
            "columns": golden["columns"],
            "rows": rows,
        }

    def other_leaf(self, leaf: int, keeps: list[int]) -> dict[str, Any]:
        branch = self.session.path_to(leaf)
        rows = []
        for keep in keeps:
            plan = self.plan(leaf, keep)
            prepared = plan.prepared
            if prepared:
                read_files, modified_files = compute_file_lists(plan.file_ops, "omp")
            rows.append(
                {
                    "keepRecentTokens": keep,
                    "effectiveKeepRecentTokens": plan.effective_keep_recent_tokens,
                    "prepared": prepared,
                    "reason": None if prepared else plan.reason,
                    "boundaryStart": plan.boundary_start,
                    "firstKeptEntryId": plan.first_kept_entry_id if prepared else None,
                    "firstKeptEntryIndex": plan.first_kept_index if prepared else None,
                    "turnStartIndex": plan.turn_start_index if prepared else None,
                    "isSplitTurn": plan.is_split_turn if prepared else None,
                    "tokensBefore": plan.tokens_before if prepared else None,
                    "messagesToSummarizeCount": len(plan.messages_to_summarize)
                    if prepared
                    else None,
                    "messagesToSummarizeIds": plan.entry_ids(plan.messages_to_summarize)
                    if prepared
                    else None,
                    "turnPrefixMessagesCount": len(plan.turn_prefix_messages) if prepared else None,
                    "turnPrefixMessagesIds": plan.entry_ids(plan.turn_prefix_messages)
                    if prepared
                    else None,
                    "previousSummary": bool(plan.previous_summary) if prepared else None,
                    "readFiles": read_files if prepared else None,
                    "modifiedFiles": modified_files if prepared else None,
                }
            )
        return {
            "leafId": self.id_at(leaf),
            "leafIndex": leaf,
            "branchLength": len(branch),
            "branchIds": cap([self.id_at(index) for index in branch]),
            "cutPoints": rows,
        }

    # -- branch summaries ------------------------------------------------------------------

    def branch_summary(self, leaf: int, target: int, budgets: list[int]) -> dict[str, Any]:
        collected, ancestor = collect_branch_entries(self.session, leaf, target)
        entry = self.session.entries[target]
        path = self.session.path_to(leaf)
        new_leaf = new_leaf_for(self.session, target, rules="omp")
        prepared = []
        for budget in budgets:
            selection = select_branch_entries(
                self.session, collected, self.counter, budget, rules="omp", cache=self.cache
            )
            roles: dict[str, int] = {}
            for message in selection.messages:
                role = message.get("role")
                roles[role] = roles.get(role, 0) + 1
            prepared.append(
                {
                    "tokenBudget": budget,
                    "messageCount": len(selection.messages),
                    "totalTokens": selection.total_tokens,
                    "roleCounts": roles,
                    "entryIds": cap([self.id_at(index) for index in selection.selected]),
                    "entryIndices": cap(list(selection.selected)),
                    "fileOps": selection.file_ops.to_json("omp"),
                }
            )
        return {
            "oldLeafId": self.id_at(leaf),
            "targetId": self.id_at(target),
            "targetIndex": target,
            "targetType": entry.type,
            "targetRole": entry.role if entry.type == "message" else None,
            "targetPathIndex": path.index(target) if target in path else -1,
            "navigateNewLeafId": self.id_at(new_leaf),
            "navigateNewLeafIndex": new_leaf,
            "commonAncestorId": self.id_at(ancestor),
            "commonAncestorIndex": ancestor,
            "entryCount": len(collected),
            "entryIds": cap([self.id_at(index) for index in collected]),
            "entryIndices": cap(collected),
            "prepared": prepared,
        }

    # -- shake -----------------------------------------------------------------------------

    def shake(self, leaf: int) -> list[dict[str, Any]]:
        from tui_compactor.engine.shake import SHAKE_CONFIGS, shake_preview

        return [
            shake_preview(self.session, leaf, name, self.counter).to_json()
            for name in SHAKE_CONFIGS
        ]

    # -- misc ------------------------------------------------------------------------------

    def load(self) -> dict[str, Any]:
        """What loading found (the oracle's ``load`` minus oh-my-pi's own file rewriting); the
        malformed lines are those ``flavor.omp_rewrite_reason`` counts."""
        from tui_compactor.session.flavor import MALFORMED_CODES

        session = self.session
        slot = session.title_slot
        header = session.header or {}
        version = session.version or 1
        title_slot: dict[str, Any] = {"present": False}
        if isinstance(slot, dict):
            title_slot = {"present": True, "title": slot.get("title"), "source": slot.get("source")}
        return {
            "accepted": True,
            "titleSlot": title_slot,
            "originalVersion": version,
            "versionAfterLoad": max(version, 3),
            "migrated": version < 3,
            "sessionId": header.get("id"),
            "cwd": header.get("cwd"),
            "entries": len(session.entries),
            "malformedRecords": sum(1 for d in session.diagnostics if d.code in MALFORMED_CODES),
        }

    def misc(self, windows: list[int], context_tokens: int) -> dict[str, Any]:
        """The oracle's ``misc``: latest compaction, usage figures, defaults, windows, labels."""
        from tui_compactor.engine.plan import _omp_prompt_tokens, omp_last_usage

        session = self.session
        path = [session.entries[index] for index in _branch(session)]
        latest = next((entry for entry in reversed(path) if entry.type == "compaction"), None)
        usage = omp_last_usage(path)
        latest_row = None
        if latest is not None:
            kept = latest.data.get("firstKeptEntryId")
            latest_row = {
                "id": latest.id,
                "index": latest.index,
                "method": latest.data.get("method"),
                "firstKeptEntryId": kept,
                "firstKeptEntryIndex": session.index_of(kept or ""),
                "tokensBefore": latest.data.get("tokensBefore"),
            }
        return {
            "latestCompactionOnBranch": latest_row,
            "lastAssistantUsageOnBranch": usage,
            "calculateContextTokens": omp_usage_tokens(usage) if usage else None,
            "calculatePromptTokens": _omp_prompt_tokens(usage) if usage else None,
            "defaultCompactionSettings": default_compaction_settings(),
            "windows": self.windows(windows, context_tokens),
            "sessionName": session.name_under("omp"),
            "labels": [
                {"id": self.id_at(index), "index": index, "label": label}
                for index, label in sorted(session.labels.items())
            ],
        }

    def windows(self, windows: list[int], context_tokens: int) -> list[dict[str, Any]]:
        settings = self.settings
        return [
            {
                "window": window,
                "effectiveReserveTokens": effective_reserve(window, settings),
                "budgetReserveTokens": budget_reserve(window, settings),
                "thresholdTokens": threshold_tokens(window, settings),
                "contextTokens": context_tokens,
                "shouldCompact": should_compact(context_tokens, window, settings),
            }
            for window in windows
        ]


def ours(session: Any, golden: dict[str, Any]) -> dict[str, Any]:
    """The compared sections of ``golden``, computed by the engine."""
    engine = Ours(session)
    leaf = golden["leafIndex"]
    keeps = golden["oracle"]["keepRecentTokens"]
    budgets = golden["oracle"]["branchBudgets"]
    contexts = [
        {"why": row["why"], **engine.context(row["leafIndex"])} for row in golden["contexts"]
    ]
    main_tokens = contexts[0]["contextTokens"]["tokens"] if contexts else 0
    return {
        "entries": [engine.entry(index) for index in range(len(session.entries))],
        "contexts": contexts,
        "cutPoints": [engine.cut_row(leaf, keep, True) for keep in keeps],
        "cutPointSweep": engine.sweep(leaf, golden["cutPointSweep"]),
        "branchSummary": [
            {"why": row["why"], **engine.branch_summary(leaf, row["targetIndex"], budgets)}
            for row in golden["branchSummary"]
        ],
        "otherLeaves": [
            engine.other_leaf(row["leafIndex"], keeps) for row in golden["otherLeaves"]
        ],
        "shake": engine.shake(leaf),
        "misc": engine.misc(golden["oracle"]["contextWindows"], main_tokens),
        "load": engine.load(),
        "leafId": engine.id_at(session.leaf),
        "leafIndex": session.leaf,
        "roots": [engine.id_at(index) for index in session.roots],
        "leaves": [engine.id_at(index) for index in session.leaves],
        "branch": {
            "length": len(_branch(session)),
            "ids": cap([engine.id_at(index) for index in _branch(session)]),
            "entryIndices": cap(_branch(session)),
        },
    }


def _branch(session: Any) -> list[int]:
    """The root..leaf path (none in a file without entries)."""
    return [] if session.leaf is None else list(session.path_to(session.leaf))


def _normalize(value: Any, ids: dict[str, int]) -> Any:
    if isinstance(value, str) and value in ids:
        return f"#{ids[value]}"
    return value


def diff(
    golden: Any, mine: Any, golden_ids: dict[str, int], my_ids: dict[str, int], where: str = ""
) -> Iterator[tuple[str, Any, Any] | None]:
    """Yields None for every leaf that matches and ``(path, expected, got)`` for every one that
    does not (walking the golden)."""
    if isinstance(golden, dict):
        if not isinstance(mine, dict):
            yield from _missing(golden, where, mine)
            return
        for key, value in golden.items():
            if key not in mine:
                yield from _missing(value, f"{where}.{key}", "<missing>")
            else:
                yield from diff(value, mine[key], golden_ids, my_ids, f"{where}.{key}")
        return
    if isinstance(golden, list):
        if not isinstance(mine, list):
            yield from _missing(golden, where, mine)
            return
        if not golden:
            yield None if not mine else (f"{where}", [], f"{len(mine)} items")
            return
        for position, value in enumerate(golden):
            if position < len(mine):
                yield from diff(value, mine[position], golden_ids, my_ids, f"{where}[{position}]")
            else:
                yield from _missing(value, f"{where}[{position}]", "<missing>")
        return
    expected = _normalize(golden, golden_ids)
    got = _normalize(mine, my_ids)
    if isinstance(expected, float) or isinstance(got, float):
        same = (
            got is not None
            and expected is not None
            and abs(expected - got) <= 1e-9 * max(1.0, abs(expected))
        )
    else:
        same = expected == got and type(expected) is type(got)
    yield None if same else (where, expected, got)


def _missing(golden: Any, where: str, got: Any) -> Iterator[tuple[str, Any, Any]]:
    if isinstance(golden, dict) and golden:
        for key, value in golden.items():
            yield from _missing(value, f"{where}.{key}", got)
    elif isinstance(golden, list) and golden:
        for position, value in enumerate(golden):
            yield from _missing(value, f"{where}[{position}]", got)
    else:
        yield (where, golden, got)


def compare(session: Any, golden: dict[str, Any]) -> tuple[int, list[tuple[str, Any, Any]]]:
    """(checks, mismatches) over every compared field of ``golden``."""
    mine = ours(session, golden)
    golden_ids = {row["id"]: row["index"] for row in golden["entries"]}
    my_ids = {entry.id: entry.index for entry in session.entries}
    checks = 0
    bad: list[tuple[str, Any, Any]] = []
    for section in SECTIONS:
        expected = golden[section]
        if section == "load":
            expected = {key: expected[key] for key in LOAD_KEYS}
        for result in diff(expected, mine[section], golden_ids, my_ids, section):
            checks += 1
            if result is not None:
                bad.append(result)
    return checks, bad
