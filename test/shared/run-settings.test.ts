// compileRunSettings: the one place run-wide defaults are applied, the suite merged and ranges checked.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { caseBounds, compileRunSettings, RunSettingsSchema, type RunSettingsInput } from "../../shared/run-settings.ts";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import { evalFunctionRegistry } from "../../shared/case/eval-functions.ts";

/** The compiled settings of an empty input and no suite: every default, written out once here. */
const DEFAULTS = {
  defaultTimeoutSeconds: 120,
  setupTimeoutSeconds: 60,
  teardownTimeoutSeconds: 60,
  maxOutputBytes: 256 * 1024,
  maxTranscriptBytes: 0,
  repeat: 1,
  repeatMax: 1,
  adaptiveConfidence: 0.75,
  retries: 0,
  passThreshold: null,
  casePassRate: 1,
  confidence: 0.95,
  regressionAlpha: 0.05,
  evalFunctions: [],
  scoringMethod: null,
  cache: null,
  cassette: null,
  limits: {},
  prices: {},
  budget: { usd: null, tokens: null },
  graceMs: 5000,
  maxAttempts: 3,
  ackWaitMs: 30_000,
  waitForWorkersMs: 60_000,
  cancelGraceMs: 15_000,
  brokerLossMs: 30_000,
  reconcileMs: 5000,
  deadlineMs: null,
  order: { kind: "history" },
};

function usageError(message: string, field: string): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof EvalfleetError, `not an EvalfleetError: ${String(err)}`);
    assert.equal(err.code, ErrorCode.Usage);
    assert.equal(err.message, message);
    assert.equal(err.details.field, field);
    return true;
  };
}

describe("compileRunSettings", () => {
  test("an empty input and no suite compile to every default", () => {
    assert.deepEqual(compileRunSettings({}), DEFAULTS);
  });

  test("every field of the schema is required: it has no optional field", () => {
    for (const [key, field] of Object.entries(RunSettingsSchema.shape)) {
      assert.equal((field as { safeParse(v: unknown): { success: boolean } }).safeParse(undefined).success, false, `${key} accepts undefined`);
    }
    assert.deepEqual(Object.keys(RunSettingsSchema.shape).sort(), Object.keys(DEFAULTS).sort());
  });

  test("record, replay and recordMissing compile to one cassette setting; a combination that means nothing is a usage error", () => {
    assert.deepEqual(compileRunSettings({ record: "/t" }).cassette, { mode: "record", dir: "/t", recordMissing: false });
    assert.deepEqual(compileRunSettings({ replay: "/t" }).cassette, { mode: "replay", dir: "/t", recordMissing: false });
    assert.deepEqual(compileRunSettings({ replay: "/t", recordMissing: true }).cassette, { mode: "replay", dir: "/t", recordMissing: true });
    assert.throws(() => compileRunSettings({ record: "/a", replay: "/b" }), usageError("record (--record) and replay (--replay) cannot both be set (record '/a', replay '/b'): replay with recordMissing records what a cassette lacks", "record"));
    assert.throws(() => compileRunSettings({ recordMissing: true }), usageError("recordMissing (--record-missing) needs replay (--replay DIR)", "recordMissing"));
    assert.throws(() => compileRunSettings({ record: "" }), (e: unknown) => e instanceof EvalfleetError && e.code === ErrorCode.Usage && /cassette\.dir must be a folder/.test(e.message));
  });

  test("the result is deep-frozen", () => {
    const s = compileRunSettings({ limits: { openai: { concurrency: 2 } }, evalFunctions: [] });
    assert.ok(Object.isFrozen(s));
    assert.ok(Object.isFrozen(s.limits));
    assert.ok(Object.isFrozen(s.limits.openai));
    assert.ok(Object.isFrozen(s.budget));
    assert.ok(Object.isFrozen(s.evalFunctions));
    assert.throws(() => ((s as { repeat: number }).repeat = 2), TypeError);
  });

  test("the input wins over the suite, the suite over the default", () => {
    const suite = { defaultTimeout: 30, setupTimeoutSeconds: 10, teardownTimeoutSeconds: 11, passThreshold: 0.5 };
    const fromSuite = compileRunSettings({}, suite);
    assert.equal(fromSuite.defaultTimeoutSeconds, 30);
    assert.equal(fromSuite.setupTimeoutSeconds, 10);
    assert.equal(fromSuite.teardownTimeoutSeconds, 11);
    assert.equal(fromSuite.passThreshold, 0.5);
    const fromInput = compileRunSettings({ defaultTimeoutSeconds: 5, setupTimeoutSeconds: 6, teardownTimeoutSeconds: 7, passThreshold: 0.9 }, suite);
    assert.deepEqual([fromInput.defaultTimeoutSeconds, fromInput.setupTimeoutSeconds, fromInput.teardownTimeoutSeconds, fromInput.passThreshold], [5, 6, 7, 0.9]);
    // null means "not given" for a timeout (the suite's applies) ...
    assert.equal(compileRunSettings({ defaultTimeoutSeconds: null }, suite).defaultTimeoutSeconds, 30);
    // ... but "none" for the pass threshold, whatever the suite says.
    assert.equal(compileRunSettings({ passThreshold: null }, suite).passThreshold, null);
  });

  test("limits merge key by key, the input's over the suite's", () => {
    const s = compileRunSettings({ limits: { openai: { concurrency: 1 } } }, { limits: { openai: { concurrency: 8, rpm: 60 }, local: { concurrency: 2 } } });
    assert.deepEqual(s.limits, { openai: { concurrency: 1, rpm: 60 }, local: { concurrency: 2 } });
  });

  test("prices are { ...suite.prices, ...input.prices }: a model the input prices replaces the suite's price whole", () => {
    const suite = { prices: { "gpt-a": { inputPerMTok: 1, outputPerMTok: 2 }, "gpt-b": { inputPerMTok: 3, outputPerMTok: 4 } } };
    const s = compileRunSettings({ prices: { "gpt-b": { inputPerMTok: 9, outputPerMTok: 9 } } }, suite);
    assert.deepEqual(s.prices, { "gpt-a": { inputPerMTok: 1, outputPerMTok: 2 }, "gpt-b": { inputPerMTok: 9, outputPerMTok: 9 } });
    assert.deepEqual(compileRunSettings({ prices: null }, suite).prices, suite.prices);
  });

  test("a transcript is kept only by a recorded run: the input's bound, else 256 KiB", () => {
    assert.equal(compileRunSettings({ maxTranscriptBytes: 1000 }).maxTranscriptBytes, 0);
    assert.equal(compileRunSettings({ recorded: true }).maxTranscriptBytes, 256 * 1024);
    assert.equal(compileRunSettings({ recorded: true, maxTranscriptBytes: 1000.7 }).maxTranscriptBytes, 1000);
    assert.equal(compileRunSettings({ recorded: true, maxTranscriptBytes: -5 }).maxTranscriptBytes, 0);
  });

  test("durations given in seconds compile to whole milliseconds", () => {
    const s = compileRunSettings({ graceSeconds: 0.25, ackWaitSeconds: 2, waitForWorkersSeconds: 0, cancelGraceSeconds: 1.5, brokerLossSeconds: 3, reconcileSeconds: 0.1, deadlineSeconds: 90 });
    assert.deepEqual([s.graceMs, s.ackWaitMs, s.waitForWorkersMs, s.cancelGraceMs, s.brokerLossMs, s.reconcileMs, s.deadlineMs], [250, 2000, 0, 1500, 3000, 100, 90_000]);
  });

  test("evalFunctions are deduplicated in order and must name the suite's functions", () => {
    const suite = { evalFunctions: evalFunctionRegistry({ tone: () => ({ value: 1, passed: true }), length: () => ({ value: 1, passed: true }) }) };
    assert.deepEqual(compileRunSettings({ evalFunctions: ["length", "tone", "length"] }, suite).evalFunctions, ["length", "tone"]);
    assert.throws(() => compileRunSettings({ evalFunctions: ["nope"] }, suite), (err: unknown) => err instanceof EvalfleetError && err.code === ErrorCode.Usage && /unknown evaluation function 'nope'/.test(err.message));
    assert.throws(() => compileRunSettings({ evalFunctions: ["tone"] }), (err: unknown) => err instanceof EvalfleetError && /registers none/.test(err.message));
  });

  test("the cache, budget and scoring method pass through as given", () => {
    const s = compileRunSettings({ cache: { kind: "shared", ttlSeconds: 60 }, budget: { usd: 1.5 }, scoringMethod: "contains" });
    assert.deepEqual(s.cache, { kind: "shared", ttlSeconds: 60 });
    assert.deepEqual(s.budget, { usd: 1.5, tokens: null });
    assert.equal(s.scoringMethod, "contains");
  });

  const bad: Array<[string, RunSettingsInput, string, string]> = [
    ["a negative timeout", { defaultTimeoutSeconds: -1 }, "defaultTimeoutSeconds must be a number of seconds >= 0, got -1", "defaultTimeoutSeconds"],
    ["a negative setup bound", { setupTimeoutSeconds: -2 }, "setupTimeoutSeconds must be a number of seconds >= 0, got -2", "setupTimeoutSeconds"],
    ["a teardown bound that is not a number", { teardownTimeoutSeconds: "10" as unknown as number }, "teardownTimeoutSeconds must be a number of seconds >= 0, got '10'", "teardownTimeoutSeconds"],
    ["an output bound of 0", { maxOutputBytes: 0 }, "maxOutputBytes must be a whole number >= 1, got 0", "maxOutputBytes"],
    ["a repeat of 0", { repeat: 0 }, "repeat must be a whole number from 1 to 1000, got 0", "repeat"],
    ["a repeat over the maximum", { repeat: 1001 }, "repeat must be a whole number from 1 to 1000, got 1001", "repeat"],
    ["a fractional repeat", { repeat: 1.5 }, "repeat must be a whole number from 1 to 1000, got 1.5", "repeat"],
    ["an adaptive MAX over the maximum, named as given", { repeat: { min: 3, max: 2000 } }, "repeat must be a whole number from 1 to 1000, got 2000", "repeatMax"],
    ["an adaptive MIN of 0", { repeat: { min: 0, max: 3 } }, "repeat must be a whole number from 1 to 1000, got 0", "repeat"],
    ["an adaptive stopping confidence of 1", { adaptiveConfidence: 1 }, "adaptiveConfidence must be a fraction strictly between 0 and 1 (0.95 for 95%), got 1", "adaptiveConfidence"],
    ["negative retries", { retries: -1 }, "retries must be a whole number >= 0, got -1", "retries"],
    ["a pass threshold over 1", { passThreshold: 1.2 }, "passThreshold must be a fraction between 0 and 1 (0.95 for 95%), got 1.2", "passThreshold"],
    ["a case pass rate below 0", { casePassRate: -0.1 }, "casePassRate must be a fraction between 0 and 1 (0.95 for 95%), got -0.1", "casePassRate"],
    ["a confidence of 1", { confidence: 1 }, "confidence must be a fraction strictly between 0 and 1 (0.95 for 95%), got 1", "confidence"],
    ["a confidence of 0", { confidence: 0 }, "confidence must be a fraction strictly between 0 and 1 (0.95 for 95%), got 0", "confidence"],
    ["a regression alpha of 0", { regressionAlpha: 0 }, "regressionAlpha must be a fraction strictly between 0 and 1 (0.95 for 95%), got 0", "regressionAlpha"],
    ["an unknown scoring method", { scoringMethod: "fuzzy" }, "scoringMethod must be one of exact, contains, regex, json, numeric, judge, got 'fuzzy'", "scoringMethod"],
    ["an empty evaluation function name", { evalFunctions: [""] }, "evalFunctions.0 must be a non-empty string, got ''", "evalFunctions.0"],
    ["a budget of 0 USD", { budget: { usd: 0 } }, "budget.usd must be an amount of USD > 0, got 0", "budget.usd"],
    ["a budget of 0 tokens", { budget: { tokens: 0 } }, "budget.tokens must be a whole number >= 1, got 0", "budget.tokens"],
    ["a cache ttl of 0", { cache: { kind: "local", ttlSeconds: 0 } }, "cache.ttlSeconds must be a number of seconds > 0, got 0", "cache.ttlSeconds"],
    ["a negative grace, named as given", { graceSeconds: -1 }, "graceSeconds must be a whole number >= 0, got -1", "graceMs"],
    ["max attempts of 0", { maxAttempts: 0 }, "maxAttempts must be a whole number >= 1, got 0", "maxAttempts"],
    ["an ack wait of 0", { ackWaitSeconds: 0 }, "ackWaitSeconds must be a whole number >= 1, got 0", "ackWaitMs"],
    ["a negative deadline", { deadlineSeconds: -3 }, "deadlineSeconds must be a whole number >= 0, got -3", "deadlineMs"],
  ];
  for (const [what, input, message, field] of bad) {
    test(`${what} is a usage error naming the field and the value`, () => {
      assert.throws(() => compileRunSettings(input), usageError(message, field));
    });
  }

  test("a suite's out-of-range value is refused like the caller's", () => {
    assert.throws(() => compileRunSettings({}, { passThreshold: 2 }), usageError("passThreshold must be a fraction between 0 and 1 (0.95 for 95%), got 2", "passThreshold"));
  });
});

describe("caseBounds", () => {
  const none = { timeoutSeconds: null, setupTimeoutSeconds: null, teardownTimeoutSeconds: null };
  test("a case that sets none gets the run's bounds, and the defaults where the run gives none", () => {
    assert.deepEqual(caseBounds(none, {}), { timeoutSeconds: 120, setupSeconds: 60, teardownSeconds: 60, maxOutputBytes: 256 * 1024 });
    assert.deepEqual(caseBounds(none, { defaultTimeout: 9, setupTimeout: 8, teardownTimeout: 7, maxOutputBytes: 100 }), { timeoutSeconds: 9, setupSeconds: 8, teardownSeconds: 7, maxOutputBytes: 100 });
  });
  test("the case's own bounds win, even 0", () => {
    assert.deepEqual(caseBounds({ timeoutSeconds: 0, setupTimeoutSeconds: 1, teardownTimeoutSeconds: 0 }, { defaultTimeout: 9, setupTimeout: 8, teardownTimeout: 7 }), { timeoutSeconds: 0, setupSeconds: 1, teardownSeconds: 0, maxOutputBytes: 256 * 1024 });
  });
  test("the compiled settings' defaults and caseBounds' agree", () => {
    const s = compileRunSettings({});
    assert.deepEqual(caseBounds(none, {}), { timeoutSeconds: s.defaultTimeoutSeconds, setupSeconds: s.setupTimeoutSeconds, teardownSeconds: s.teardownTimeoutSeconds, maxOutputBytes: s.maxOutputBytes });
  });
});

describe("compileRunSettings: adaptive repeats", () => {
  test("a range compiles to repeat (MIN) and repeatMax (MAX); a count to both the same", () => {
    const a = compileRunSettings({ repeat: { min: 3, max: 20 } });
    assert.equal(a.repeat, 3);
    assert.equal(a.repeatMax, 20);
    assert.equal(a.adaptiveConfidence, 0.75);
    const f = compileRunSettings({ repeat: 5 });
    assert.equal(f.repeat, 5);
    assert.equal(f.repeatMax, 5);
  });

  test("MAX below MIN is a usage error naming both", () => {
    assert.throws(() => compileRunSettings({ repeat: { min: 5, max: 3 } }), (err: unknown) => {
      assert.match(String((err as Error).message), /repeat \(--repeat MIN\.\.MAX\) needs MAX >= MIN, got 5\.\.3/);
      assert.equal((err as { code?: string }).code, "USAGE");
      return true;
    });
  });
});
