#!/usr/bin/env node
// pi_session_probe.mjs - open a session file with pi's own SessionManager and print, as one
// JSON document, what pi sees: the leaf, the active branch and the model context.
//
// Usage: node pi_session_probe.mjs SESSION.jsonl
// The package is found as pi_package.mjs says; exit status 3 means it was not found.

import { openWithPi } from "./pi_package.mjs";

const file = process.argv[2];
if (!file) {
	process.stderr.write("usage: node pi_session_probe.mjs SESSION.jsonl\n");
	process.exit(2);
}
const { pi, version, manager } = await openWithPi(file);
const context = manager.buildSessionContext();
const describe = (message) => {
	const out = { role: message.role };
	if (typeof message.summary === "string") out.summary = message.summary;
	if (message.fromId !== undefined) out.fromId = message.fromId;
	if (message.tokensBefore !== undefined) out.tokensBefore = message.tokensBefore;
	if (Array.isArray(message.content)) {
		out.text = message.content
			.filter((block) => block && block.type === "text")
			.map((block) => block.text)
			.join("\n")
			.slice(0, 200);
	} else if (typeof message.content === "string") {
		out.text = message.content.slice(0, 200);
	}
	return out;
};
// What pi sends for each context message: convertToLlm on it alone, each LLM message as its
// role and its text blocks joined, the ids of an assistant's tool calls and the number of
// images when there are any (what `context --json` calls `llm`).
const textOf = (content) =>
	typeof content === "string"
		? content
		: (Array.isArray(content) ? content : [])
				.filter((block) => block && block.type === "text" && typeof block.text === "string")
				.map((block) => block.text)
				.join("");
const blocksOf = (content) => (Array.isArray(content) ? content : []).filter((block) => block);
const sentView = (sent) => {
	const out = { role: sent.role, text: textOf(sent.content) };
	const blocks = blocksOf(sent.content);
	if (sent.role === "assistant") out.toolCallIds = blocks.filter((b) => b.type === "toolCall").map((b) => b.id);
	const images = blocks.filter((b) => b.type === "image").length;
	if (images) out.images = images;
	return out;
};
const result = {
	version,
	leafId: manager.getLeafId(),
	entryCount: manager.getEntries().length,
	branchIds: manager.getBranch().map((entry) => entry.id),
	model: context.model ?? null,
	thinkingLevel: context.thinkingLevel,
	messages: context.messages.map(describe),
	llm: context.messages.map((message) =>
		pi.convertToLlm([message]).map(sentView),
	),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
