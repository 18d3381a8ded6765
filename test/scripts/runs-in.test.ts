// Which side of the thread boundary each file of shared/ runs on (scripts/runs-in.mjs), recomputed
// from the real import graphs (esbuild's, from the thread's entries and the main side's) and held
// to the first-line comment every file carries: a comment that went stale, or a new file without
// one, fails here, naming the fix. A fixture tree shows the check sees each case it must.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { FIXTURES, ROOT } from "../support/paths.ts";
// @ts-expect-error: a plain .mjs script without declarations.
import { runsIn } from "../../scripts/runs-in.mjs";

type RunsIn = { file: string; side: "main" | "thread" | "both" | "none"; declared: string | null }[];

test("every file of shared/ says which side it runs on, and says it right", async () => {
  const files = (await runsIn(ROOT)) as RunsIn;
  assert.ok(files.length > 50, `only ${files.length} files of shared/ found`);
  const wrong = files.filter((f) => f.side !== f.declared).map((f) => `${f.file}: ${f.side === "none" ? "loaded by neither side" : `runs in ${f.side}`}, says ${f.declared ?? "nothing"}`);
  assert.deepEqual(wrong, [], `wrong first-line comments (node scripts/runs-in.mjs --write fixes them):\n${wrong.join("\n")}`);
  // The graphs are not trivially one side: the NATS client is the main side's alone, the thread protocol both sides'.
  const side = new Map(files.map((f) => [f.file, f.side]));
  assert.equal(side.get("shared/broker/connection.ts"), "main");
  assert.equal(side.get("shared/wire/thread.ts"), "both");
  assert.equal(side.get("shared/runtime/start-up.ts"), "both");
});

test("on a fixture tree: static and dynamic imports count, type-only ones do not, and a wrong or missing comment is named", async () => {
  const base = join(FIXTURES, "runs-in");
  assert.deepEqual(await runsIn(base), [
    { file: "shared/main-only.ts", side: "main", declared: "main" },
    { file: "shared/silent.ts", side: "main", declared: null },
    { file: "shared/thread-only.ts", side: "thread", declared: "thread" },
    { file: "shared/typed.ts", side: "none", declared: "main" },
    { file: "shared/wire/both.ts", side: "both", declared: "both" },
    { file: "shared/wrong.ts", side: "thread", declared: "main" },
  ]);
  const failed = await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "runs-in.mjs"), "--base", base], { cwd: ROOT }).then(
    () => assert.fail("the check passed a tree with wrong comments"),
    (e: { code?: number; stdout?: string }) => e,
  );
  assert.equal(failed.code, 1);
  assert.deepEqual((failed.stdout ?? "").trim().split("\n"), [
    "runs-in: shared/silent.ts: main (says nothing)",
    "runs-in: shared/typed.ts is loaded by neither side: remove it, or import it",
    "runs-in: shared/wrong.ts: thread (says main)",
    "runs-in: 6 files of shared/ (test/fixtures/runs-in): 1 both, 2 main, 2 thread; 3 wrong",
  ]);
});
