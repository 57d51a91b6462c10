#!/usr/bin/env bun
// Opens session files the way oh-my-pi 18.2.3 resumes one (under Bun): its loader parses the
// file, SessionManager.open indexes it, and the session context (what the model is sent) is
// built at the leaf. Then the views a user reaches next: the tree (`getTree`, /tree) and the
// walk `navigateTree` starts with (`collectEntriesForBranchSummary` from the leaf to every
// other entry). Per file it writes `file <path>`, then `step <name>` before each step, then one
// JSON line: `opened`, and when a step throws, the step and its error. A step that never
// returns is left to the caller (tests/support/omp_oracle.py `omp_open_verdicts`), which kills
// the process when a step outlasts its deadline and reads the step from the last line (Bun
// defers SIGTERM while a loop runs: kill it). Works on scratch copies; inputs are untouched.
//
// Usage: OMP_ORACLE_DIR=.../shared/oracle-omp bun omp_open_probe.ts [--skip-tree] SESSION.jsonl...
// (`--skip-tree`: go on to the navigation walks of a file whose tree is known to hang)

import { copyFileSync, mkdtempSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const kit = process.env.OMP_ORACLE_DIR;
if (!kit) throw new Error("OMP_ORACLE_DIR must point at the oracle kit (shared/oracle-omp)");
const skipTree = process.argv.includes("--skip-tree");
const inputs = process.argv.slice(2).filter(arg => arg !== "--skip-tree");
if (!inputs.length) throw new Error("usage: bun omp_open_probe.ts [--skip-tree] SESSION.jsonl...");

const lib = await import(`${kit}/lib.ts`);
lib.isolateHome();
lib.installDeterministicIds(11);
const ref = await lib.loadReference();

// unbuffered: what was written is still there when the caller kills a loop
const say = (line: string): void => {
	writeSync(1, `${line}\n`);
};

for (const input of inputs) {
	const scratch = mkdtempSync(join(tmpdir(), "omp-open-probe-"));
	const copy = join(scratch, "session.jsonl");
	copyFileSync(input, copy);
	say(`file ${input}`);
	let step = "open";
	const mark = (name: string): void => {
		step = name;
		say(`step ${name}`);
	};
	let result: Record<string, unknown>;
	try {
		mark("open");
		const sm = await ref.sm.SessionManager.open(copy, scratch, undefined, { suppressBreadcrumb: true });
		mark("context");
		const entries = sm.getEntries();
		sm.buildSessionContext();
		if (!skipTree) {
			mark("tree");
			sm.getTree();
		}
		const leaf = sm.getLeafId();
		for (const entry of entries) {
			if (entry === null || typeof entry !== "object" || entry.id === leaf) continue;
			mark(`navigate ${entry.id}`);
			ref.cmp.collectEntriesForBranchSummary(sm, leaf, entry.id);
		}
		mark("close");
		await sm.close();
		result = { opened: true, entries: entries.length };
	} catch (error) {
		const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
		result = { opened: false, step, error: message.replaceAll(scratch, "<scratch>") };
	}
	rmSync(scratch, { recursive: true, force: true });
	say(JSON.stringify(result));
}
