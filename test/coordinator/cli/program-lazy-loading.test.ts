// What a command loads: `evalfleet --help` loads the command line's registrations only (no NATS
// client, results store, thread pool, reports, nor zod), `evalfleet list` nothing of a run, and a
// worker process nothing of the coordinator beyond the parsing of its command line. A command that
// loads a suite runs in the CLI's runtime (dist/cli-runtime.cjs, one script): what counts there is
// what it evaluated, the modules it evaluates with the file and those it reached on demand.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ROOT, fixture } from "../../support/paths.ts";

const TRACE = join(ROOT, "test", "support", "trace-modules.mjs");

/** Runs the binary with the module trace; `until` may end it (SIGINT, which it handles: the trace is written as it exits) once its stderr says so. */
async function traced(args: string[], until?: RegExp, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; ours: string[]; packages: string[]; runtime: boolean }> {
  const file = join(mkdtempSync(join(tmpdir(), "evalfleet-trace-")), "modules.txt");
  const child = spawn(process.execPath, ["--import", TRACE, join(ROOT, "bin", "evalfleet.mjs"), ...args], {
    cwd: ROOT,
    env: { ...process.env, EVALFLEET_TRACE_MODULES: file, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let stopped = false;
  child.stderr!.on("data", (d) => {
    stderr += d;
    // Once: a second signal finds the command's handlers gone, and ends it before its exit handlers run.
    if (until && !stopped && until.test(stderr)) stopped = child.kill("SIGINT");
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  const lines = readFileSync(file, "utf8").split("\n");
  const loaded = [...new Set(lines.filter((u) => u.startsWith("file:")))];
  const evaluated = lines.filter((l) => l.startsWith("evaluated ")).map((l) => l.split(" ") as [string, string, string]);
  // The binary runs the bundled dist/: an ES module there (an entry point or a chunk) stands for
  // every module its source map names, which all ran when it was imported (packages bundled into
  // it too); a runtime for the modules it evaluated.
  const urls = loaded.flatMap((u) => {
    if (!relative(ROOT, fileURLToPath(u)).startsWith("dist/")) return [u];
    return /-runtime\.cjs$/.test(u) ? evaluatedIn(u, evaluated) : sourcesOf(u);
  });
  const paths = urls.map((u) => relative(ROOT, fileURLToPath(u)));
  const ours = [...new Set(paths.filter((p) => !p.includes("node_modules") && !p.startsWith("..")))];
  // node_modules may be a link to another checkout's: the package name is what follows it.
  const packages = [...new Set(urls.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((n): n is string => Boolean(n)))];
  return { code, stderr, ours, packages, runtime: loaded.some((u) => u.endsWith("/dist/cli-runtime.cjs")) };
}

/** The source modules a bundled file of dist/ holds, as file: URLs (from its source map). */
function sourcesOf(url: string): string[] {
  const map = JSON.parse(readFileSync(new URL(`${url}.map`), "utf8")) as { sources: string[]; sourceRoot?: string };
  return map.sources.map((s) => new URL(s, new URL(map.sourceRoot ?? "", url)).href);
}

/**
 * The modules a runtime evaluated, as file: URLs: those esbuild did not wrap (evaluated with the
 * file) and the wrapped ones (ES modules in `__esm`, CommonJS ones in `__commonJS`) whose init
 * function ran, which is named by the module's path from the root.
 */
function evaluatedIn(url: string, evaluated: Array<[string, string, string]>): string[] {
  const root = pathToFileURL(`${ROOT}/`);
  const wrapped = new Set([...readFileSync(new URL(url), "utf8").matchAll(/__(?:esm|commonJS)\(\{\s*"([^"]+)"\(/g)].map((m) => new URL(m[1]!, root).href));
  assert.ok(wrapped.size > 0, `${url} wraps no module: the trace cannot tell what it evaluated`);
  const eager = sourcesOf(url).filter((s) => !wrapped.has(s));
  const reached = evaluated.filter(([, file]) => file === url).map(([, , module]) => new URL(module, root).href);
  return [...eager, ...reached];
}

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What the command line loads to parse any command: the registrations and their flags, nothing heavier (and, for a command that loads a suite, the loader of the CLI's runtime). */
const PARSING = /^(bin\/evalfleet\.mjs|scripts\/build\.mjs|coordinator\/main\.ts|coordinator\/cli\/(program|io|parse-and-run|flags|flag-parsers|run-command|distributed-commands|worker-command|history-commands|queue-metrics-command|cache-command|serve-commands|loads-suite|process-main|cli-runtime-loader)\.ts|coordinator\/run\/exit-code\.ts|shared\/(defaults|log-levels|response-cache-dir|datasets\/scoring-methods|stats\/conventional-levels|order-value|text|runtime\/package-files|process\/process-tree|suite\/loading-suite)\.ts)$/;

describe("lazy loading", () => {
  test("evalfleet --help loads the command registrations only", async () => {
    const r = await traced(["--help"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.ours.includes("coordinator/main.ts"), r.ours.join("\n"));
    assert.ok(!r.packages.includes("tsx") && !r.packages.includes("esbuild"), "the compiled command loads no TypeScript loader");
    assert.deepEqual(r.ours.filter((p) => !PARSING.test(p)), [], "modules beyond the parsing of the command line");
    for (const heavy of ["@nats-io/transport-node", "@nats-io/jetstream", "piscina", "pg", "better-sqlite3", "cli-table3", "xmlbuilder2", "pino", "zod", "prom-client"]) {
      assert.ok(!r.packages.includes(heavy), `--help loaded ${heavy}`);
    }
    assert.ok(r.packages.includes("commander"), "the trace works");
  });

  test("evalfleet list loads neither the NATS client, the thread pool nor the results store", async () => {
    const r = await traced(["list", fixture("lean-suite.ts")]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.runtime && r.ours.includes("shared/suite/suite.ts") && r.ours.includes("coordinator/cli/run-command.ts"), `the trace sees what the CLI's runtime evaluated: ${r.ours.join(", ")}`);
    for (const unused of ["@nats-io/transport-node", "@nats-io/jetstream", "piscina", "pg", "better-sqlite3"]) assert.ok(!r.packages.includes(unused), `list loaded ${unused}`);
    assert.deepEqual(r.ours.filter((p) => p.startsWith("coordinator/history/") || p.startsWith("coordinator/distributed/") || p.startsWith("worker/")), []);
  });

  test("a worker process loads worker/main.ts and nothing of the coordinator beyond its command line", async () => {
    const r = await traced(["worker", fixture("lean-suite.ts"), "--nats", `nats://127.0.0.1:${await closedPort()}`, "--log-level", "warn"], /not reachable/);
    assert.match(r.stderr, /not reachable/);
    assert.ok(r.runtime, `a worker runs in the CLI's runtime (exit ${r.code}): ${r.stderr}`);
    assert.ok(r.ours.includes("worker/main.ts") && r.ours.includes("worker/service.ts"), r.ours.join("\n"));
    assert.deepEqual(r.ours.filter((p) => p.startsWith("coordinator/") && !PARSING.test(p)), [], "coordinator modules in a worker");
    for (const coordinatorOnly of ["cli-table3", "xmlbuilder2", "pg", "better-sqlite3", "cli-progress"]) assert.ok(!r.packages.includes(coordinatorOnly), `a worker loaded ${coordinatorOnly}`);
  });

  test("a run loads the OpenTelemetry SDK only when the OTEL_* variables configure tracing", async () => {
    const sdk = (packages: string[]): string[] => packages.filter((p) => p.startsWith("@opentelemetry/") && p !== "@opentelemetry/api");
    const off = await traced(["run", fixture("lean-suite.ts"), "--threads", "1"]);
    assert.equal(off.code, 1, off.stderr); // it ran: its one case fails (no judge model here)
    assert.deepEqual(sdk(off.packages), [], "tracing off: no SDK, no exporter");
    // On (to a port nothing listens on: the spans are lost, the run is not).
    const on = await traced(["run", fixture("lean-suite.ts"), "--threads", "1"], undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}`, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    assert.equal(on.code, 1, on.stderr);
    assert.ok(sdk(on.packages).includes("@opentelemetry/sdk-trace-base") && sdk(on.packages).includes("@opentelemetry/exporter-trace-otlp-http"), sdk(on.packages).join(", "));
  });
});
