// The dependency check (scripts/depcheck.mjs with the rules of .dependency-cruiser.mjs) run on two
// fixture trees: one with a deliberately bad import per rule, one that follows every rule. If the
// rules, the parser or the script stopped seeing imports, the bad tree would pass and this fails:
// the check can never silently become a no-op. Cycles are looked for among the imports that exist at
// run time and again with type-only imports included, so a cycle that only types close fails too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { FIXTURES, ROOT } from "../support/paths.ts";

const run = promisify(execFile);

/** Runs the check on a fixture tree, as `npm run depcheck` runs it on the repo. */
async function depcheck(tree: string): Promise<{ code: number; lines: string[] }> {
  const args = [join(ROOT, "scripts", "depcheck.mjs"), "--base", join(FIXTURES, "deps", tree)];
  try {
    const { stdout } = await run(process.execPath, args, { cwd: ROOT });
    return { code: 0, lines: stdout.trim().split("\n") };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    assert.equal(failed.code, 1, `depcheck could not run: ${failed.stderr}`);
    return { code: 1, lines: (failed.stdout ?? "").trim().split("\n") };
  }
}

test("every rule reports its bad import in the fixture, one line each, and nothing else", async () => {
  const { code, lines } = await depcheck("bad");
  assert.equal(code, 1);
  const summary = lines.pop();
  assert.deepEqual(lines, [
    "depcheck: coordinator-only-worker-entry-points: coordinator/local/reach-in.ts -> worker/runtime/helper.ts",
    "depcheck: defaults-only-in-config-modules: worker/runtime/stray-default.ts -> shared/defaults.ts",
    "depcheck: no-cycle: worker/pool/a.ts -> worker/pool/b.ts -> worker/pool/a.ts",
    "depcheck: no-type-cycle: shared/type-ref-a.ts -> shared/type-ref-b.ts -> shared/type-ref-a.ts",
    "depcheck: no-type-cycle: worker/models/cache.ts -> worker/runtime/scope.ts -> worker/models/cache.ts",
    "depcheck: no-unresolvable: coordinator/cli/missing.ts -> ./not-there.ts",
    "depcheck: optional-sdk-only-dynamic: worker/models/inline-type.ts -> ai",
    "depcheck: optional-sdk-only-dynamic: worker/models/static-model.ts -> openai",
    "depcheck: optional-sdk-only-dynamic: worker/runtime/static-sdk.ts -> openai",
    "depcheck: optional-sdk-only-in-adapters: worker/runtime/dynamic-sdk.ts -> ai",
    "depcheck: optional-sdk-only-in-adapters: worker/runtime/static-sdk.ts -> openai",
    "depcheck: pg-only-in-store: coordinator/cli/pg-outside-store.ts -> pg",
    "depcheck: reports-need-no-database: coordinator/report/json.ts -> coordinator/history/store/db.ts",
    "depcheck: run-core-no-nats: coordinator/run/core.ts -> @nats-io/jetstream",
    "depcheck: run-core-no-nats: coordinator/run/core.ts -> shared/broker/connection.ts",
    "depcheck: run-core-no-store: coordinator/run/core.ts -> coordinator/history/store/db.ts",
    "depcheck: shared-imports-neither-side: shared/leak.ts -> coordinator/run/core.ts",
    "depcheck: shared-nats-only-in-broker: shared/nats-outside-broker.ts -> @nats-io/transport-node",
    "depcheck: shared-no-piscina: shared/pool.ts -> piscina",
    "depcheck: store-renders-nothing: coordinator/history/store/render.ts -> coordinator/report/table.ts",
    "depcheck: tracing-sdk-only-in-its-loader: worker/runtime/tracing-sdk.ts -> @opentelemetry/sdk-trace-base",
    "depcheck: worker-not-coordinator: worker/runtime/reach-up.ts -> coordinator/run/core.ts",
  ]);
  assert.match(summary ?? "", /^depcheck: 22 violation\(s\) in \d+ modules, \d+ imports /);
});

test("a tree that follows the rules passes: entry points, the broker, lazy SDKs, type-only imports and the config modules' defaults are allowed", async () => {
  const { code, lines } = await depcheck("clean");
  assert.equal(code, 0);
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? "", /^depcheck: 0 violation\(s\) in \d+ modules, \d+ imports /);
});
