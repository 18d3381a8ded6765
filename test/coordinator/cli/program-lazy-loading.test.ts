// What a command loads: `evalfleet --help` loads the command line's registrations only (no NATS
// client, results store, thread pool, reports, nor zod), `evalfleet list` nothing of a run, and a
// worker process nothing of the coordinator beyond the parsing of its command line.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT, fixture } from "../../support/paths.ts";

const TRACE = join(ROOT, "test", "support", "trace-modules.mjs");

/** Runs the binary with the module trace; `until` may end it (SIGTERM) once its stderr says so. */
async function traced(args: string[], until?: RegExp, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; ours: string[]; packages: string[] }> {
  const file = join(mkdtempSync(join(tmpdir(), "evalfleet-trace-")), "modules.txt");
  const child = spawn(process.execPath, ["--import", TRACE, join(ROOT, "bin", "evalfleet.mjs"), ...args], {
    cwd: ROOT,
    env: { ...process.env, EVALFLEET_TRACE_MODULES: file, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += d;
    if (until && until.test(stderr)) child.kill("SIGTERM");
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  const loaded = readFileSync(file, "utf8").split("\n").filter((u) => u.startsWith("file:"));
  // The binary runs the bundled dist/: a file there (an entry point or a chunk) stands for every
  // module its source map names, which all ran when it was imported (packages bundled into it too).
  const urls = loaded.flatMap((u) => (relative(ROOT, fileURLToPath(u)).startsWith("dist/") ? sourcesOf(u) : [u]));
  const paths = urls.map((u) => relative(ROOT, fileURLToPath(u)));
  const ours = [...new Set(paths.filter((p) => !p.includes("node_modules") && !p.startsWith("..")))];
  // node_modules may be a link to another checkout's: the package name is what follows it.
  const packages = [...new Set(urls.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((n): n is string => Boolean(n)))];
  return { code, stderr, ours, packages };
}

/** The source modules a bundled file of dist/ holds, as file: URLs (from its source map). */
function sourcesOf(url: string): string[] {
  const map = JSON.parse(readFileSync(new URL(`${url}.map`), "utf8")) as { sources: string[]; sourceRoot?: string };
  return map.sources.map((s) => new URL(s, new URL(map.sourceRoot ?? "", url)).href);
}

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What the command line loads to parse any command: the registrations and their flags, nothing heavier. */
const PARSING = /^(bin\/evalfleet\.mjs|scripts\/build\.mjs|coordinator\/main\.ts|coordinator\/cli\/(program|io|parse-and-run|flags|run-command|distributed-commands|worker-command|history-commands|queue-metrics-command|cache-command|loads-suite)\.ts|coordinator\/run\/exit-code\.ts|shared\/(defaults|text|package-files|process-tree|loading-suite)\.ts)$/;

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
    for (const unused of ["@nats-io/transport-node", "@nats-io/jetstream", "piscina", "pg", "better-sqlite3"]) assert.ok(!r.packages.includes(unused), `list loaded ${unused}`);
    assert.deepEqual(r.ours.filter((p) => p.startsWith("coordinator/history/") || p.startsWith("coordinator/distributed/") || p.startsWith("worker/")), []);
  });

  test("a worker process loads worker/main.ts and nothing of the coordinator beyond its command line", async () => {
    const r = await traced(["worker", fixture("lean-suite.ts"), "--nats", `nats://127.0.0.1:${await closedPort()}`, "--log-level", "warn"], /not reachable/);
    assert.match(r.stderr, /not reachable/);
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
