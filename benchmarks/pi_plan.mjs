#!/usr/bin/env node
// pi_plan.mjs - the pi reference (0.73.1) doing what `tui-compactor plan` does:
// SessionManager.open + getBranch + prepareCompaction (keepRecentTokens 20000), on a scratch
// copy of the session (the reference rewrites v1/v2 files when it opens them).
//
// Usage: node pi_plan.mjs SESSION.jsonl   (package found like tools/oracle/lib/ref.mjs does)
// Prints one JSON line: firstKeptEntryId, tokensBefore and in-process timings in ms.

import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { loadReference } from "../tools/oracle/lib/ref.mjs";

const t0 = performance.now();
const { pi, compaction } = await loadReference();
const t1 = performance.now();
const scratch = mkdtempSync(join(tmpdir(), "pi-plan-"));
try {
	const copy = join(scratch, "session.jsonl");
	copyFileSync(process.argv[2], copy);
	const t2 = performance.now();
	const sm = pi.SessionManager.open(copy, scratch);
	const branch = sm.getBranch();
	const t3 = performance.now();
	const prep = compaction.prepareCompaction(branch, { ...pi.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 20000 });
	const t4 = performance.now();
	process.stdout.write(
		`${JSON.stringify({
			firstKeptEntryId: prep?.firstKeptEntryId ?? null,
			tokensBefore: prep?.tokensBefore ?? null,
			messagesToSummarize: prep?.messagesToSummarize.length ?? null,
			importMs: t1 - t0,
			loadMs: t3 - t2,
			prepareMs: t4 - t3,
		})}\n`,
	);
} finally {
	rmSync(scratch, { recursive: true, force: true });
}
