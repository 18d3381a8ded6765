// The significance-aware `--fail-on-regression` end to end, as real `evalfleet run` processes on a
// real SQLite file and a real PostgreSQL database (skipped, saying why, when no server answers):
// a swapped handful of flips is noise (exit 0), 20 new failures of 200 is not (exit 1), one case
// from 10/10 to 0/10 trials regressed (exit 1), `--baseline` overrides the last run, cases whose
// checks changed are not compared, and bad input exits 2 naming the flag and the value.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ResultsStore } from "../coordinator/history/store/store.ts";
import { evalfleet, exitOf, fixture, killLeftovers, outputOf } from "./harness/processes.ts";
import { createTestDatabase, postgresUnavailable } from "../test/support/postgres.ts";

const GATE = fixture("gate-suite.ts");
const HISTORY = fixture("history-suite.ts");
const pgSkip = await postgresUnavailable();
const drops: Array<() => Promise<void>> = [];
after(async () => {
  await killLeftovers();
  for (const d of drops) await d().catch(() => undefined);
});

const BACKENDS = [
  { name: "SQLite", skip: false as const, url: async (): Promise<string> => `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-gate-")), "results.db")}` },
  {
    name: "PostgreSQL",
    skip: pgSkip ?? (false as const),
    url: async (): Promise<string> => {
      const db = await createTestDatabase();
      drops.push(db.drop);
      return db.url;
    },
  },
];

/** `evalfleet ...args` to the end, on branch `main`. Generous bound: the machine is shared. */
async function run(args: string[], env: Record<string, string> = {}) {
  const p = evalfleet(args, { EVALFLEET_GIT_BRANCH: "main", EVALFLEET_GIT_COMMIT: "c0ffee", NO_COLOR: "1", ...env });
  return exitOf(p, `evalfleet ${args.join(" ")}`, 120_000);
}

const idOf = (stdout: string): string => /results store: run (\S+) recorded/.exec(stdout)![1]!;

for (const backend of BACKENDS) {
  describe(`--fail-on-regression on ${backend.name}`, { skip: backend.skip }, () => {
    test("noise passes, a real drop fails, --baseline overrides, changed checks are not compared", async () => {
      const db = await backend.url();
      // The pass threshold is met in every run: only the gate can fail one.
      const gate = (...extra: string[]) => ["run", GATE, "--db", db, "--threads", "2", "--pass-threshold", "0.5", "--fail-on-regression", ...extra];

      const first = await run(gate(), { EVALFLEET_GATE_FAIL: "0-9" });
      assert.equal(first.code, 0, outputOf(first));
      assert.match(first.stdout, /^regressions: no earlier recorded run of suite 'gate' on branch main to compare with$/m);
      const firstId = idOf(first.stdout);

      // The same rate, other cases: ten flips each way is chance.
      const swapped = await run(gate(), { EVALFLEET_GATE_FAIL: "10-19" });
      assert.equal(swapped.code, 0, outputOf(swapped));
      const swappedId = idOf(swapped.stdout);
      assert.match(swapped.stdout, new RegExp(`^regressions: none significant since run ${firstId} `, "m"));
      assert.match(swapped.stdout, /^ {2}pass rate 95\.0% -> 95\.0% over 200 cases: difference 0\.0% \[-?\d+\.\d%, \d+\.\d%\], p = 1 \(mcnemar exact\)$/m);
      assert.match(swapped.stdout, /^ {4}changed, not significant \(20\): case_000 \(0\/1 -> 1\/1, p = 1\), .*case_010 \(1\/1 -> 0\/1, p = 1\)/m);

      // Twenty new failures of 200, none back: the pass rate dropped beyond chance.
      const dropped = await run(gate(), { EVALFLEET_GATE_FAIL: "10-39" });
      assert.equal(dropped.code, 1, outputOf(dropped));
      assert.match(dropped.stdout, new RegExp(`^regressions: significant since run ${swappedId} \\(.*\\) of suite 'gate' on branch main: the pass rate dropped; the gate fails the run$`, "m"));
      assert.match(dropped.stdout, /^ {2}verdict: regressed /m);
      assert.match(dropped.stdout, /^ {2}pass rate 95\.0% -> 85\.0% over 200 cases: difference -10\.0% \[-\d+\.\d%, -\d+\.\d%\], p = 1\.91e-6 \(mcnemar exact\), significant$/m);
      const droppedId = idOf(dropped.stdout);

      // Against the last run (the drop), the same failures are no change; against --baseline (a prefix of the swapped run), a regression.
      const again = await run(gate(), { EVALFLEET_GATE_FAIL: "10-39" });
      assert.equal(again.code, 0, outputOf(again));
      assert.match(again.stdout, new RegExp(`^regressions: none significant since run ${droppedId} `, "m"));
      const pinned = await run(gate("--baseline", swappedId.slice(0, 13)), { EVALFLEET_GATE_FAIL: "10-39" });
      assert.equal(pinned.code, 1, outputOf(pinned));
      assert.match(pinned.stdout, new RegExp(`^regressions: significant since run ${swappedId} `, "m"));

      // Twenty more failures, but their checks changed since the baseline: not compared, so no regression.
      const rechecked = await run(gate(), { EVALFLEET_GATE_FAIL: "10-59", EVALFLEET_GATE_RECHECK: "40-59" });
      assert.equal(rechecked.code, 0, outputOf(rechecked));
      assert.match(rechecked.stdout, /^ {4}checks changed: not compared \(20\): case_040, case_041, /m);
      assert.match(rechecked.stdout, /^ {2}pass rate 83\.3% -> 83\.3% over 180 cases/m);

      // Every result carries its checks' fingerprint: the rechecked cases' differ from the run before, the others' do not.
      const store = await ResultsStore.open(db);
      try {
        const [before, after] = [await store.caseRecords(droppedId), await store.caseRecords(idOf(rechecked.stdout))];
        assert.ok(before.every((c) => /^[0-9a-f]{16}$/.test(c.checksFingerprint ?? "")), "every result is fingerprinted");
        const changed = after.filter((c, i) => c.checksFingerprint !== before[i]!.checksFingerprint).map((c) => c.name);
        assert.deepEqual(changed, Array.from({ length: 20 }, (_, i) => `case_0${40 + i}`));
      } finally {
        await store.close();
      }
    });

    test("one case from 10/10 to 0/10 trials regressed", async () => {
      const db = await backend.url();
      const gate = ["run", HISTORY, "--db", db, "--threads", "2", "--pass-threshold", "0.5", "--repeat", "10", "--fail-on-regression"];
      const good = await run(gate);
      assert.equal(good.code, 0, outputOf(good));
      const bad = await run(gate, { EVALFLEET_TEST_FAIL: "flipper" });
      assert.equal(bad.code, 1, outputOf(bad));
      assert.match(bad.stdout, /^regressions: significant since run \S+ \(.*\) of suite 'history' on branch main: 1 case regressed; the gate fails the run$/m);
      assert.match(bad.stdout, /^ {4}regressed \(1\): flipper \(10\/10 -> 0\/10, p = 1\.08e-5\)$/m);
    });

    test("bad input: exit 2, one line naming the flag and the value, nothing run", async () => {
      const db = await backend.url();
      const alpha = await run(["run", GATE, "--db", db, "--fail-on-regression", "--regression-alpha", "0"]);
      assert.equal(alpha.code, 2, outputOf(alpha));
      assert.match(alpha.stderr, /--regression-alpha must be a fraction strictly between 0 and 1 \(0\.05 for 5%\), got '0'/);
      assert.doesNotMatch(alpha.stderr, /\n\s+at /, "no stack trace");

      const unknown = await run(["run", GATE, "--db", db, "--fail-on-regression", "--baseline", "nope"]);
      assert.equal(unknown.code, 2, outputOf(unknown));
      assert.match(unknown.stderr, /^error: --baseline 'nope': no run 'nope' in \S+ \(evalfleet runs lists them\)\n$/);

      const other = await run(["run", GATE, "--db", db, "--threads", "2", "--pass-threshold", "0.5"], { EVALFLEET_GATE_SUITE: "other" });
      assert.equal(other.code, 0, outputOf(other));
      const otherId = idOf(other.stdout);
      const foreign = await run(["run", GATE, "--db", db, "--fail-on-regression", "--baseline", otherId]);
      assert.equal(foreign.code, 2, outputOf(foreign));
      assert.equal(foreign.stderr, `error: --baseline '${otherId}': run ${otherId} is a run of suite 'other', not of suite 'gate'\n`);
      assert.doesNotMatch(foreign.stdout, /results store: run/, "the run did not start");

      const loose = await run(["run", GATE, "--db", db, "--baseline", otherId]);
      assert.equal(loose.code, 2, outputOf(loose));
      assert.equal(loose.stderr, "error: --baseline is --fail-on-regression's: add --fail-on-regression\n");
    });
  });
}
