// The recorder (coordinator/history/recording/recorder.ts) writes nothing with a secret in it: a
// key in a case's output, error and reasons, and in the run's own record, is [REDACTED] in every
// table of a real SQLite store, read back row by row and as the file's bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { RunRecorder } from "../../../../coordinator/history/recording/recorder.ts";
import { ResultsStore } from "../../../../coordinator/history/store/store.ts";
import { CaseResult, SuiteResult } from "../../../../shared/result/result.ts";
import { registerSecret } from "../../../../shared/redaction/secrets.ts";
import { leakedPiece } from "../../../support/secrets.ts";

test("no secret is written: case results as they end, their final form, and the run's start and end", async () => {
  const key = "store-key-Q7f2LmX9vT4wZ1bN8c";
  registerSecret(key);
  const path = join(mkdtempSync(join(tmpdir(), "evalfleet-recorder-")), "results.db");
  const store = await ResultsStore.open(`sqlite:${path}`);
  const recorder = await RunRecorder.begin(
    store,
    { id: "run-secret", kind: "suite", suiteName: `suite ${key}`, suiteFingerprint: null, suitePath: null, selection: { name: key }, config: {}, judgeModel: null, timeoutSeconds: 5, startedAt: new Date().toISOString(), gitCommit: null, gitBranch: null, host: "h/1" },
    { onWarning: (m) => assert.fail(m), flushTimeoutSeconds: 10 },
  );
  const leaky = new CaseResult({ name: "leaky", index: 0, output: `the key: ${key}`, error: `teardown: Error: ${key}`, judgePassed: false, judgeReason: `saw ${key}`, score: { value: 0, passed: false, reason: `scorer ${key}`, detail: { k: key } } });
  recorder.record(leaky);
  // A hook error appended after the case ended: the final form is written again at the end.
  const final = new CaseResult({ ...leaky.toData(), error: `${leaky.error}; hook: onCaseEnd Error: ${key}` });
  const outcome = await recorder.finish(new SuiteResult([final]), "failed");
  assert.deepEqual(outcome, { recorded: 1, notRecorded: 0, runRecorded: true });
  await store.close();

  const db = new Database(path, { readonly: true });
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name);
  const dump = tables.map((t) => JSON.stringify(db.prepare(`SELECT * FROM ${t}`).all())).join("\n");
  db.close();
  assert.equal(leakedPiece(dump, key), null, dump);
  assert.match(dump, /teardown: Error: \[REDACTED\]; hook: onCaseEnd Error: \[REDACTED\]/);
  for (const file of [path, `${path}-wal`]) if (existsSync(file)) assert.equal(leakedPiece(readFileSync(file, "latin1"), key), null, file);
});

test("an AgentAsJudgeEval run is recorded without secrets: inputs, outputs, reasons, failures and the criteria", async () => {
  const { JudgeStore } = await import("../../../../coordinator/history/recording/judge-recording.ts");
  const key = "judge-key-Q7f2LmX9vT4wZ1bN8c";
  registerSecret(key);
  const path = join(mkdtempSync(join(tmpdir(), "evalfleet-judge-recorder-")), "results.db");
  const store = new JudgeStore(`sqlite:${path}`, { onWarning: (m) => assert.fail(m) });
  const recorded = await store.record({
    runId: "judge-secret",
    name: `eval ${key}`,
    criteria: `never print ${key}`,
    scoringStrategy: "binary",
    threshold: 7,
    additionalGuidelines: [`guideline ${key}`],
    judgeModel: "judge",
    timeoutSeconds: 5,
    startedAt: new Date().toISOString(),
    durationSeconds: 1,
    outcomes: [
      { evaluation: { input: `in ${key}`, output: `out ${key}`, criteria: `never print ${key}`, score: null, reason: `reason ${key}`, passed: false } },
      { failure: { input: `in ${key}`, output: `out ${key}`, reason: `judge failed with ${key}` } },
    ],
    summary: { pass_rate: 0 },
  });
  assert.equal(recorded, true);
  await store.close();
  const db = new Database(path, { readonly: true });
  const dump = ["eval_runs", "judge_evaluations"].map((t) => JSON.stringify(db.prepare(`SELECT * FROM ${t}`).all())).join("\n");
  db.close();
  assert.match(dump, /judge failed with \[REDACTED\]/);
  assert.equal(leakedPiece(dump, key), null, dump);
});
