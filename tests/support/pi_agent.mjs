#!/usr/bin/env node
// pi_agent.mjs - behave like a running pi agent on a session: open it with pi's own
// SessionManager (which keeps the leaf in memory) and append messages with pauses.
//
// Usage: node pi_agent.mjs SESSION.jsonl COUNT MAX_PAUSE_MS SEED
// Prints "ready" once the session is open, then the id of every entry it appends, one per line.
// COUNT 0 means: stay idle at the prompt until killed (an agent waiting for the user).
// MAX_PAUSE_MS "stdin" means: before each append, wait for one line on stdin (the user's turn).
// The package is found as pi_package.mjs says; exit status 3 means it was not found.

import { openWithPi } from "./pi_package.mjs";

const [file, countText, pauseText, seedText] = process.argv.slice(2);
const { manager } = await openWithPi(file);
const count = Number(countText ?? "0");
const fromStdin = pauseText === "stdin";
const maxPause = fromStdin ? 0 : Number(pauseText ?? "1000");
const lines = [];
let wake = null;
if (fromStdin) {
	let buffered = "";
	process.stdin.setEncoding("utf8");
	process.stdin.on("data", (chunk) => {
		buffered += chunk;
		let at;
		while ((at = buffered.indexOf("\n")) >= 0) {
			lines.push(buffered.slice(0, at));
			buffered = buffered.slice(at + 1);
			if (wake) wake();
		}
	});
}
const nextLine = async () => {
	while (lines.length === 0) await new Promise((done) => (wake = done));
	return lines.shift();
};
let seed = Number(seedText ?? "1") >>> 0 || 1;
const random = () => {
	// xorshift32: the same pauses for the same seed
	seed ^= seed << 13;
	seed >>>= 0;
	seed ^= seed >>> 17;
	seed ^= seed << 5;
	seed >>>= 0;
	return seed / 4294967296;
};
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
process.stdout.write("ready\n");
if (count === 0) {
	setInterval(() => {}, 1 << 30);
} else {
	for (let i = 0; i < count; i++) {
		if (fromStdin) await nextLine();
		else await sleep(Math.floor(random() * maxPause));
		const id =
			i % 2 === 0
				? manager.appendMessage({ role: "user", content: [{ type: "text", text: `agent turn ${i}` }], timestamp: Date.now() })
				: manager.appendMessage({
						role: "assistant",
						content: [{ type: "text", text: `agent reply ${i}` }],
						api: "openai-completions",
						provider: "test",
						model: "test-model",
						usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
						stopReason: "stop",
						timestamp: Date.now(),
					});
		process.stdout.write(`${id}\n`);
	}
	process.exit(0);
}
