// pi_package.mjs - find pi's coding-agent package and open a session with its own
// SessionManager; shared by the probe (pi_session_probe.mjs) and the agent (pi_agent.mjs).
//
// The package is found through $PI_CODING_AGENT_DIR (the package directory), then
// /tmp/pi-oracle/node_modules/@mariozechner/pi-coding-agent, then
// .cache/pi-ref/node_modules/@mariozechner/pi-coding-agent under the current directory.
// When it is not found the script exits with status 3 (the caller skips).

import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const PKG = join("node_modules", "@mariozechner", "pi-coding-agent");

function findPackage() {
	const candidates = [];
	if (process.env.PI_CODING_AGENT_DIR) candidates.push(process.env.PI_CODING_AGENT_DIR);
	candidates.push(join("/tmp/pi-oracle", PKG));
	candidates.push(join(process.cwd(), ".cache", "pi-ref", PKG));
	for (const dir of candidates) {
		if (existsSync(join(dir, "package.json"))) return resolve(dir);
	}
	return null;
}

// pi's module, its version, and the session `file` opened by pi's SessionManager.
export async function openWithPi(file) {
	const pkgDir = findPackage();
	if (!pkgDir) {
		process.stderr.write("pi-coding-agent package not found\n");
		process.exit(3);
	}
	const pi = await import(pathToFileURL(join(pkgDir, "dist", "index.js")).href);
	const { version } = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
	return { pi, version, manager: pi.SessionManager.open(resolve(file)) };
}
