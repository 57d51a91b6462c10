#!/usr/bin/env bun
// oh-my-pi 18.2.3's own reserve and threshold rules (pi-agent-core/compaction under Bun) for a
// list of settings: reads a JSON array of cases from the file named on the command line, each `{window, contextTokens,
// settings}` (`settings` overrides DEFAULT_COMPACTION_SETTINGS; a missing `reserveTokens` is
// unset), and writes one JSON array: per case `effectiveReserveTokens`,
// `budgetReserveTokens`, `thresholdTokens` and `shouldCompact`.
//
// Usage: OMP_ORACLE_DIR=.../shared/oracle-omp bun omp_settings_probe.ts cases.json

const kit = process.env.OMP_ORACLE_DIR;
if (!kit) throw new Error("OMP_ORACLE_DIR must point at the oracle kit (shared/oracle-omp)");
const lib = await import(`${kit}/lib.ts`);
lib.isolateHome();
const { cmp } = await lib.loadReference();

const cases = JSON.parse(await Bun.file(process.argv[2]).text());
const out = cases.map((one: { window: number; contextTokens: number; settings: object }) => {
	const settings = { ...cmp.DEFAULT_COMPACTION_SETTINGS, ...one.settings };
	return {
		effectiveReserveTokens: cmp.effectiveReserveTokens(one.window, settings),
		budgetReserveTokens: cmp.resolveBudgetReserveTokens(one.window, settings),
		thresholdTokens: cmp.resolveThresholdTokens(one.window, settings),
		shouldCompact: cmp.shouldCompact(one.contextTokens, one.window, settings),
	};
});
process.stdout.write(`${JSON.stringify(out)}\n`);
