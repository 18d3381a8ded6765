// The package as a user gets it: `npm pack`, installed from the tarball into a fresh `npm init -y`
// project (CommonJS by default), then used there with plain Node: an ES module script, a CommonJS
// require, an Agno-style cli() script, `npx evalfleet run` on a .mjs and a .ts suite (dataset() and
// defineSuite options), `tsc --noEmit` against the shipped types, `npx evalfleet --version`.
//
// The install compiles better-sqlite3 from source where no prebuilt binary can be downloaded (a
// minute or more on 2 cores). By default the test hands npm the checkout's own compiled binary
// through prebuild-install's documented "local prebuilds" folder, so the install costs seconds;
// EVALFLEET_PACK_COMPILE=1 makes it compile as a user's machine would.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Runs a command to its end (bounded), with the scripted environment of the tests and no colours. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 240_000): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} ${args.join(" ")} did not finish within ${timeoutMs / 1000}s\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, seconds: (Date.now() - started) / 1000 });
    });
  });
}

const show = (r: Ran): string => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

/** A folder holding the checkout's compiled better-sqlite3 as the prebuilt archive prebuild-install looks for. */
async function localPrebuilds(dir: string): Promise<string> {
  const pkgDir = join(root, "node_modules", "better-sqlite3");
  const bsq = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as { version: string };
  const folder = join(dir, "prebuilds");
  mkdirSync(folder, { recursive: true });
  // prebuild-install's default name: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz
  const archive = join(folder, `better-sqlite3-v${bsq.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`);
  const r = await run("tar", ["-czf", archive, "-C", pkgDir, "build/Release/better_sqlite3.node"], dir);
  assert.equal(r.code, 0, show(r));
  return folder;
}

const SUITE_MJS = `import { Case } from "evalfleet";
import { threadId } from "node:worker_threads";
import { writeFileSync } from "node:fs";

// Which loader this thread has: a .mjs suite is imported by plain Node, tsx never registered.
const tsx = Boolean(globalThis[Symbol.for("evalfleet.tsxRegistered")]);
writeFileSync(new URL(\`./loaded-\${threadId}.json\`, import.meta.url), JSON.stringify({ threadId, tsx }));

const echo = { id: "echo", run: async (input) => ({ content: \`echo: \${input}\` }) };
export default [
  new Case({ name: "hello", agent: echo, input: "hello", expectedOutput: "echo: hello", outputScoring: "contains" }),
  new Case({ name: "world", agent: echo, input: "world", expectedOutput: "echo: world", outputScoring: "contains" }),
];
`;

const SUITE_TS = `import { Case, dataset, defineSuite, type Agent, type CaseResult } from "evalfleet";

// One evalfleet instance: the Case this suite imports is the class the installed runner itself
// runs with: in the command's process its entry's (dist/index.js, which shares its chunks with the
// command), in each worker thread the thread's runtime (dist/thread-runtime.cjs).
declare const require: (id: string) => { Case: unknown };
declare const process: { env: Record<string, string | undefined> };
declare const __dirname: string;
const threadId = (require("node:worker_threads") as unknown as { threadId: number }).threadId;
const runner = threadId > 0 ? (globalThis as unknown as Record<symbol, { Case: unknown; runThreadBatch?: unknown }>)[Symbol.for("evalfleet.api")] : require(__dirname + "/node_modules/evalfleet/dist/index.js");
const fs = require("node:fs") as unknown as { appendFileSync(path: string, text: string): void };
if (process.env.INSTANCE_LOG) fs.appendFileSync(process.env.INSTANCE_LOG, JSON.stringify({ same: runner?.Case === Case, threadId, runtime: threadId > 0 ? typeof (runner as { runThreadBatch?: unknown })?.runThreadBatch === "function" : null }) + "\\n");

const echo: Agent = { id: "echo", run: async (input) => ({ content: \`echo: \${String(input)}\` }) };
const check = (r: CaseResult): boolean => r.passed;
void check;

export default defineSuite({
  name: "typed",
  agents: [echo],
  passThreshold: 0.5,
  defaultTimeout: 30,
  cases: [new Case({ name: "code_case", agent: echo, input: "code", expectedOutput: "echo: code", outputScoring: "contains", tags: ["code"] })],
  datasets: [dataset("rows.jsonl", { agent: "echo", tags: ["rows"] })],
});
`;

const ROWS = ['{"name": "row_one", "inputs": "one", "expected_output": "echo: one"}', '{"name": "row_two", "inputs": "two", "expected_output": "echo: two"}'].join("\n") + "\n";

const CASES_JS = (binding: string): string => `${binding}
const echo = { id: "echo", run: async (input) => ({ content: "echo: " + input }) };
const cases = [
  new Case({ name: "one", agent: echo, input: "one", expectedOutput: "echo: one", outputScoring: "contains" }),
  new Case({ name: "two", agent: echo, input: "two", expectedOutput: "echo: two", outputScoring: "contains" }),
];
`;

const TSCONFIG = JSON.stringify({
  // What \`tsc --init\` writes, in short: strict NodeNext, declarations of libraries not re-checked.
  compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: [] },
  files: ["suite.ts"],
});

describe("the packed package, installed into a fresh npm init -y project", () => {
  let dir: string;
  let project: string;
  let install: Ran;

  before(
    async () => {
      dir = mkdtempSync(join(tmpdir(), "evalfleet-pack-"));
      // dist/ is current (scripts/run-tests.mjs builds before the tests): pack it as it is.
      const packed = await run(npm, ["pack", "--ignore-scripts", "--pack-destination", dir, "--json"], root);
      assert.equal(packed.code, 0, show(packed));
      const tarball = join(dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
      const listing = await run("tar", ["-tzf", tarball], dir);
      const files = listing.stdout.trim().split("\n");
      assert.ok(files.includes("package/dist/index.js") && files.includes("package/dist/index.d.ts") && files.includes("package/bin/evalfleet.mjs"), listing.stdout.slice(0, 2000));
      const stray = files.filter((f) => !/^package\/(dist\/|bin\/evalfleet\.mjs$|package\.json$|README\.md$)/.test(f));
      assert.deepEqual(stray, [], "the tarball ships dist/, the binary, package.json and the README only");

      project = join(dir, "project");
      mkdirSync(project);
      const init = await run(npm, ["init", "-y"], project);
      assert.equal(init.code, 0, show(init));
      const env: Record<string, string> = process.env.EVALFLEET_PACK_COMPILE === "1" ? {} : { npm_config_better_sqlite3_local_prebuilds: await localPrebuilds(dir) };
      install = await run(npm, ["install", tarball, "--prefer-offline", "--no-audit", "--no-fund"], project, env, 600_000);
      assert.equal(install.code, 0, show(install));
      console.log(`# npm install of the tarball: ${install.seconds.toFixed(1)} s (${env.npm_config_better_sqlite3_local_prebuilds ? "better-sqlite3 from the checkout's binary" : "better-sqlite3 compiled"})`);

      writeFileSync(join(project, "suite.mjs"), SUITE_MJS);
      writeFileSync(join(project, "suite.ts"), SUITE_TS);
      writeFileSync(join(project, "rows.jsonl"), ROWS);
      writeFileSync(join(project, "tsconfig.json"), TSCONFIG);
      writeFileSync(join(project, "script.mjs"), CASES_JS('import { Case, runCases } from "evalfleet";') + "const result = await runCases(cases);\nconsole.log(JSON.stringify({ passed: result.passed, total: result.total, names: result.results.map((r) => r.name) }));\n");
      writeFileSync(join(project, "script.cjs"), CASES_JS('const { Case, runCases } = require("evalfleet");') + "runCases(cases).then((result) => console.log(JSON.stringify({ passed: result.passed, total: result.total })));\n");
      writeFileSync(join(project, "agno-style.mjs"), CASES_JS('import { Case, cli } from "evalfleet";') + "process.exitCode = await cli(cases);\n");
    },
    { timeout: 900_000 },
  );

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a user's install on this Node prints no engine warnings and installs none of the optional SDKs", () => {
    assert.doesNotMatch(install.stdout + install.stderr, /EBADENGINE/, show(install));
    const installed = readdirSync(join(project, "node_modules"));
    for (const optional of ["pg", "ai", "@openai", "@modelcontextprotocol"]) assert.ok(!installed.includes(optional), `${optional} installed`);
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as { type?: string };
    assert.notEqual(pkg.type, "module", "npm init -y made a CommonJS project");
  });

  test("an optional SDK that is not installed (pg for a postgres:// store): one line naming it, exit 2", async () => {
    const r = await run(npx, ["--no-install", "evalfleet", "run", "suite.mjs", "--db", "postgres://evalfleet@127.0.0.1:1/none"], project);
    assert.equal(r.code, 2, show(r));
    assert.match(r.stderr, /needs the package "pg", which is not installed: npm install pg/);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  });

  test("npx evalfleet --version prints the version alone", async () => {
    const r = await run(npx, ["--no-install", "evalfleet", "--version"], project);
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, `${version}\n`);
    assert.equal(r.stderr, "");
  });

  test("a plain .mjs script imports evalfleet and calls runCases", async () => {
    const r = await run(process.execPath, ["script.mjs"], project);
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(JSON.parse(r.stdout.trim()), { passed: 2, total: 2, names: ["one", "two"] });
  });

  test("a CommonJS script requires evalfleet (require of the ES module entry)", async () => {
    const r = await run(process.execPath, ["script.cjs"], project);
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(JSON.parse(r.stdout.trim()), { passed: 2, total: 2 });
    assert.doesNotMatch(r.stderr, /ExperimentalWarning|Error/, r.stderr);
  });

  test("an Agno-style script (process.exitCode = await cli(cases)) runs with plain node", async () => {
    const r = await run(process.execPath, ["agno-style.mjs"], project);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /2\/2 passed/);
  });

  test("npx evalfleet run on a .mjs suite: worker threads that never load tsx", async () => {
    const r = await run(npx, ["--no-install", "evalfleet", "run", "suite.mjs", "--threads", "2", "--json-output", "mjs.json"], project);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /2\/2 passed/);
    const report = JSON.parse(readFileSync(join(project, "mjs.json"), "utf8")) as { cases: Array<{ name: string; worker: string }> };
    assert.deepEqual(report.cases.map((c) => c.name), ["hello", "world"]);
    const loads = readdirSync(project).filter((f) => f.startsWith("loaded-")).map((f) => JSON.parse(readFileSync(join(project, f), "utf8")) as { threadId: number; tsx: boolean });
    assert.ok(loads.some((l) => l.threadId > 0), `the suite was imported by worker threads: ${JSON.stringify(loads)}`);
    assert.deepEqual(loads.filter((l) => l.tsx), [], "a thread registered tsx for a .mjs suite");
  });

  test("npx evalfleet run on a .ts suite with dataset() and defineSuite options, in a CommonJS project", async () => {
    const log = join(dir, "instances.jsonl");
    const r = await run(npx, ["--no-install", "evalfleet", "run", "suite.ts", "--threads", "2", "--json-output", "ts.json"], project, { INSTANCE_LOG: log });
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /3\/3 passed/);
    const imports = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { same: boolean; threadId: number; runtime: boolean | null });
    assert.ok(imports.some((i) => i.threadId === 0) && imports.some((i) => i.threadId > 0), `the suite was imported by the command and its threads: ${JSON.stringify(imports)}`);
    assert.deepEqual(imports.filter((i) => !i.same), [], "the suite's Case is the runner's Case (one evalfleet instance)");
    assert.deepEqual(imports.filter((i) => i.threadId > 0 && !i.runtime), [], "a thread runs the runtime file");
    const report = JSON.parse(readFileSync(join(project, "ts.json"), "utf8")) as { summary: { pass_threshold: number | null }; cases: Array<{ name: string; tags: string[] }> };
    assert.deepEqual(report.cases.map((c) => [c.name, c.tags]), [["code_case", ["code"]], ["row_one", ["rows"]], ["row_two", ["rows"]]]);
    assert.equal(report.summary.pass_threshold, 0.5, "defineSuite's passThreshold reached the run");
    const listed = await run(npx, ["--no-install", "evalfleet", "list", "suite.ts", "--tag", "rows"], project);
    assert.equal(listed.code, 0, show(listed));
    assert.match(listed.stdout, /row_one/);
    assert.doesNotMatch(listed.stdout, /code_case/);
  });

  test("a TypeScript syntax error in a suite is reported as one with file and line, exit 2", async () => {
    writeFileSync(join(project, "broken.ts"), 'import { Case } from "evalfleet";\nconst x: number = ;\nexport default [];\n');
    const r = await run(npx, ["--no-install", "evalfleet", "run", "broken.ts"], project);
    assert.equal(r.code, 2, show(r));
    assert.match(r.stderr, /^error: broken\.ts: syntax error: broken\.ts:2:\d+: /m);
    assert.doesNotMatch(r.stderr, /type.*module|\.mts|ERR_REQUIRE/i);
  });

  test("tsc --noEmit type-checks the .ts suite against the shipped declarations", async () => {
    const r = await run(process.execPath, [tsc, "-p", project], project);
    assert.equal(r.code, 0, show(r));
    // And a type error is caught through those declarations (they are really read).
    writeFileSync(join(project, "suite.ts"), SUITE_TS.replace('input: "code"', "input: 42, timeoutSeconds: \"soon\""));
    const bad = await run(process.execPath, [tsc, "-p", project], project);
    writeFileSync(join(project, "suite.ts"), SUITE_TS);
    assert.notEqual(bad.code, 0, show(bad));
    assert.match(bad.stdout, /suite\.ts\(\d+,\d+\): error TS\d+: .*timeoutSeconds|suite\.ts\(\d+,\d+\): error TS2322/, show(bad));
  });
});
