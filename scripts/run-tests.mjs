#!/usr/bin/env node
// Runs every *.test.ts under test/ and integration/ with node's built-in test runner (through tsx).
// Node 20's --test does not expand globs itself, so the files are listed here.
// Usage: node scripts/run-tests.mjs [path-substring ...]
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const filters = process.argv.slice(2);

function walk(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...walk(path));
    else if (entry.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

const files = ["test", "integration"]
  .flatMap((d) => walk(join(root, d)))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(", ")}`);
  process.exit(1);
}
// Tests talk to scripted model servers on loopback only: a real key or endpoint in the developer's
// environment must not turn a "no judge configured" test into a paid call to a real provider.
const env = { ...process.env };
for (const name of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "EVALFLEET_JUDGE_MODEL", "EVALFLEET_AGENT_MODEL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"]) delete env[name];
env.OPENAI_AGENTS_DISABLE_TRACING = "1";
const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", "--test-timeout=120000", ...files], {
  cwd: root,
  stdio: "inherit",
  env,
});
process.exit(result.status ?? 1);
