#!/usr/bin/env node
// Runs every *.test.ts under test/ (two files at a time) and then integration/ (one file at a
// time) with node's built-in test runner (through tsx).
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
// Unit tests share the two cores; integration files start servers and process fleets of their own,
// so they run one file at a time (two at once on a 2-core machine starve each other's timings).
// The CLI and the bench run the compiled package (bin/evalfleet.mjs imports dist/): compile the
// sources first when one changed since the last build, once here rather than in each test's process.
const built = spawnSync(process.execPath, [join(root, "scripts", "build.mjs"), "--if-stale"], { cwd: root, stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);
const unit = files.filter((f) => f.startsWith("test"));
const integration = files.filter((f) => f.startsWith("integration"));
let status = 0;
for (const [group, concurrency, timeout] of [
  [unit, 2, 120_000],
  [integration, 1, 300_000],
]) {
  if (group.length === 0) continue;
  // --conditions: a suite's `import "evalfleet"` resolves to the sources the tests import too (one
  // copy of every class); processes the tests start without it (the CLI) run dist/ throughout.
  const result = spawnSync(process.execPath, ["--conditions=evalfleet-source", "--import", "tsx", "--test", `--test-concurrency=${concurrency}`, `--test-timeout=${timeout}`, ...group], {
    cwd: root,
    stdio: "inherit",
    env,
  });
  if (result.status !== 0) status = result.status ?? 1;
}
process.exit(status);
