// The library (runCases/runSuiteLocal) and the command line compile the same RunSettings from the same suite and the same asks.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadSuite } from "../../shared/suite/suite.ts";
import { compileRunSettings } from "../../shared/run-settings.ts";
import { librarySettingsInput } from "../../coordinator/api.ts";
import { cliSettingsInput, runConfigFrom } from "../../coordinator/cli/config.ts";
import { fixture } from "../support/paths.ts";

const SUITE = fixture("settings-suite.ts");

describe("the two front doors", async () => {
  const suite = await loadSuite(SUITE);

  test("with nothing asked, both compile the suite's settings over the defaults", () => {
    const cli = compileRunSettings(cliSettingsInput(runConfigFrom({ command: "run", suiteArgument: SUITE, flags: {}, env: {} })), suite);
    const lib = compileRunSettings(librarySettingsInput({}), suite);
    assert.deepEqual(cli, lib);
    // And those are the suite's, not the defaults: the compile step merged them.
    assert.equal(lib.defaultTimeoutSeconds, 40);
    assert.deepEqual([lib.setupTimeoutSeconds, lib.teardownTimeoutSeconds, lib.passThreshold], [7, 8, 0.5]);
    assert.deepEqual(lib.limits, { openai: { concurrency: 4, rpm: 600 } });
    assert.deepEqual(lib.prices, { "my-model": { inputPerMTok: 1, outputPerMTok: 2 } });
  });

  test("the same asks through flags and through options compile to the same settings", () => {
    const flags = {
      timeout: 12,
      setupTimeout: 3,
      teardownTimeout: 4,
      maxOutputKb: 16,
      maxTranscriptKb: 32,
      db: "sqlite::memory:",
      repeat: 3,
      retries: 2,
      passThreshold: 0.75,
      evalFunction: ["tone", "tone"],
      scoringMethod: "contains" as const,
      limit: ["openai=concurrency:2"],
      budgetUsd: 2.5,
      grace: 1.5,
    };
    const cli = compileRunSettings(cliSettingsInput(runConfigFrom({ command: "run", suiteArgument: SUITE, flags, env: {} })), suite);
    const lib = compileRunSettings(
      librarySettingsInput({
        defaultTimeout: 12,
        hookDefaults: { setup: 3, teardown: 4 },
        maxOutputBytes: 16 * 1024,
        maxTranscriptBytes: 32 * 1024,
        db: "sqlite::memory:",
        repeat: 3,
        retries: 2,
        passThreshold: 0.75,
        runEvalFunctions: ["tone", "tone"],
        scoringMethod: "contains",
        limits: { openai: { concurrency: 2 } },
        budget: { usd: 2.5, tokens: null },
        graceSeconds: 1.5,
      }),
      suite,
    );
    assert.deepEqual(cli, lib);
    assert.equal(lib.maxTranscriptBytes, 32 * 1024);
    assert.deepEqual(lib.limits, { openai: { concurrency: 2, rpm: 600 } });
    assert.deepEqual(lib.evalFunctions, ["tone"]);
    assert.equal(lib.graceMs, 1500);
  });

  test("a bad value is refused by both with a usage error", () => {
    assert.throws(() => compileRunSettings(cliSettingsInput(runConfigFrom({ command: "run", suiteArgument: SUITE, flags: { evalFunction: ["nope"] }, env: {} })), suite), /unknown evaluation function 'nope'/);
    assert.throws(() => compileRunSettings(librarySettingsInput({ runEvalFunctions: ["nope"] }), suite), /unknown evaluation function 'nope'/);
  });
});
