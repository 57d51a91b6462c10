#!/usr/bin/env bun
// Writes one session through oh-my-pi's own SessionManager API (18.2.3, under Bun) and prints
// the file's path. Used by tests/engine/test_omp_live_oracle.py: the engine under --rules omp
// must then agree with oh-my-pi's oracle on it.
//
// Usage: OMP_ORACLE_DIR=.../shared/oracle-omp bun omp_api_writer.ts OUT_DIR
//
// What it exercises: soft, handoff and warned compactions written with appendCompaction (one
// carrying preserveData), a reset boundary (appendResetBoundary), an aborted turn with its
// tool result, an error turn later marked retryRecovery, an empty error turn, a dangling tool
// call with signed thinking and redacted thinking, a custom message, a bash run, and a shake
// applied the way AgentSession.shake does (collectShakeRegions + applyShakeRegions with the
// `[shaken ~N tokens]` placeholder, persisted by rewriteEntries). Content is made up.

const kit = process.env.OMP_ORACLE_DIR;
if (!kit) throw new Error("OMP_ORACLE_DIR must point at the oracle kit (shared/oracle-omp)");
const outDir = process.argv[2];
if (!outDir) throw new Error("usage: bun omp_api_writer.ts OUT_DIR");

const lib = await import(`${kit}/lib.ts`);
lib.isolateHome();
lib.installDeterministicIds(7);
lib.installFakeClock("2026-03-05T08:00:00.000Z", 3000);
const ref = await lib.loadReference();
const { SessionManager } = ref.sm;
const cmp = ref.cmp;

const sm = SessionManager.create("/home/dev/projects/meter", outDir);
const usage = (input: number) => ({
	input,
	output: 60,
	cacheRead: 200,
	cacheWrite: 10,
	totalTokens: input + 270,
	cost: { input: 0.001, output: 0.001, cacheRead: 0, cacheWrite: 0, total: 0.002 },
});
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
let clock = Date.parse("2026-03-05T08:00:00.000Z");
const ts = () => (clock += 5000);
const assistant = (content: unknown[], extra: Record<string, unknown> = {}) =>
	sm.appendMessage({
		role: "assistant",
		content,
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		usage: extra.stopReason === "aborted" || extra.stopReason === "error" ? zero : usage(1500 + clock % 1000),
		stopReason: "stop",
		timestamp: ts(),
		...extra,
	} as never);
const user = (text: string) => sm.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: ts() } as never);
const result = (id: string, name: string, text: string, extra: Record<string, unknown> = {}) =>
	sm.appendMessage({ role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text }], isError: false, timestamp: ts(), ...extra } as never);
const call = (id: string, name: string, args: Record<string, unknown>) => ({ type: "toolCall", id, name, arguments: args });

sm.appendModelChange("anthropic/claude-sonnet-4-5");
sm.appendThinkingLevelChange("high", "high");
user("Meter readings drift after midnight; find out why.");
assistant([{ type: "text", text: "Reading the collector." }, call("k1", "read", { path: "src/meter/collect.py" })]);
result("k1", "read", Array.from({ length: 400 }, (_, i) => `row ${i}: reading = sample[${i}] * scale`).join("\n"));
assistant([call("k2", "grep", { pattern: "midnight", path: "src" })]);
result("k2", "grep", Array.from({ length: 200 }, (_, i) => `src/meter/f${i}.py: # midnight rollover ${i}`).join("\n"));
sm.appendCustomMessageEntry("meter-note", "Readings are in watt-hours.", true);
const firstKept = user("Fix the rollover in collect.py.");
assistant([{ type: "text", text: "Editing." }, call("k3", "edit", { path: "src/meter/collect.py", edits: [] })]);
result("k3", "edit", "ok");
sm.appendMessage({ role: "bashExecution", command: "pytest -q", output: "18 passed", exitCode: 0, cancelled: false, truncated: false, timestamp: ts() } as never);
const soft = sm.appendCompaction(
	"## Goal\nFix meter drift.\n\n## Progress\n- [x] found the rollover bug  \n\n\n\n<files>\nsrc/meter/collect.py (RW)\n</files>",
	"Found the rollover bug",
	firstKept,
	4200,
	{ method: "soft", details: { readFiles: ["src/meter/collect.py:1-50"], modifiedFiles: ["src/meter/collect.py"] }, preserveData: { meter: { pass: 1 } }, tokensAfter: 900 },
);
user("Now make the midnight test deterministic.");
assistant([call("k4", "read", { path: "tests/test_midnight.py" })], { stopReason: "aborted" });
result("k4", "read", "aborted", { isError: true });
user("Again please.");
const retried = assistant([{ type: "text", text: "Reading the test" }], { stopReason: "error", errorMessage: "529 overloaded" });
assistant([], { stopReason: "error", errorMessage: "413 payload too large" });
assistant([{ type: "text", text: "The test uses wall-clock time." }, call("k5", "read", { path: "tests/test_midnight.py" })]);
result("k5", "read", "def test_midnight():\n    now = time.time()\n".repeat(40));
const handoffKept = user("Write down where we are.");
assistant([{ type: "text", text: "Done." }]);
sm.appendCompaction("# Handoff\n\nI fixed the rollover; the midnight test still reads the clock.\n\n## Next Steps\n1. Freeze time in the test", undefined, handoffKept, 2600, { method: "handoff" });
user("Quick check: which file holds the rollover?");
assistant([{ type: "text", text: "src/meter/collect.py." }]);
sm.appendResetBoundary();
user("Fresh task: profile the collector.");
assistant([
	{ type: "thinking", thinking: "Profile both paths.", thinkingSignature: "sig-meter-1" },
	{ type: "redactedThinking", data: "cmVkYWN0ZWQ=" },
	{ type: "text", text: "Profiling both." },
	call("k6", "bash", { command: "make profile" }),
	call("k7", "bash", { command: "make profile-report" }),
]);
result("k6", "bash", Array.from({ length: 300 }, (_, i) => `frame ${i}: collect() ${i % 7} ms`).join("\n"));

// retryRecovery, a dead-end warning and a shake are persisted by rewriting entries in place.
const entries = sm.getEntries();
const retriedEntry = entries.find((e: { id: string }) => e.id === retried);
retriedEntry.message.retryRecovery = { kind: "auto-retry", status: "recovered" };
const softEntry = entries.find((e: { id: string }) => e.id === soft);
softEntry.warning = "Compaction freed too little context; maintenance stopped.";
const regions = cmp.collectShakeRegions(sm.getBranch(), new ref.tok.Tokenizer(), { ...cmp.RESCUE_SHAKE_CONFIG, keepBoundaryId: undefined });
const firstTwo = regions.filter((r: { kind: string }) => r.kind === "toolResult").slice(0, 2);
cmp.applyShakeRegions(firstTwo.map((region: { tokens: number }) => ({ region, replacement: `[shaken ~${region.tokens} tokens]` })));
await sm.rewriteEntries();
await sm.close();
process.stdout.write(`${sm.getSessionFile()}\n`);
