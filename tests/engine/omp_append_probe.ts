#!/usr/bin/env bun
// Opens a session file with oh-my-pi 18.2.3's own SessionManager (under Bun), appends one label
// entry on the leaf the way the agent would, closes it, and prints one JSON line: whether the
// bytes before the append are still the file's prefix (a plain append) or the whole file was
// written anew. Used by tests/engine/test_omp_generated_oracle.py to check that `lint`'s
// omp-rewrite warning predicts what oh-my-pi does. Works on the file it is given: pass a copy.
//
// Usage: OMP_ORACLE_DIR=.../shared/oracle-omp bun omp_append_probe.ts SESSION.jsonl

import { readFileSync } from "node:fs";
import { dirname } from "node:path";

const kit = process.env.OMP_ORACLE_DIR;
if (!kit) throw new Error("OMP_ORACLE_DIR must point at the oracle kit (shared/oracle-omp)");
const path = process.argv[2];
if (!path) throw new Error("usage: bun omp_append_probe.ts SESSION.jsonl");

const lib = await import(`${kit}/lib.ts`);
lib.isolateHome();
lib.installDeterministicIds(11);
const ref = await lib.loadReference();
const before = readFileSync(path);
const sm = await ref.sm.SessionManager.open(path, dirname(path), undefined, { suppressBreadcrumb: true });
const target = sm.getEntries().find((entry: { type: string }) => entry.type === "message");
sm.appendLabelChange(target.id, "probe");
await sm.flush?.();
await sm.close();
const after = readFileSync(path);
const appended = after.length > before.length && after.subarray(0, before.length).equals(before);
process.stdout.write(`${JSON.stringify({ appended, rewritten: !appended, bytesBefore: before.length, bytesAfter: after.length })}\n`);
