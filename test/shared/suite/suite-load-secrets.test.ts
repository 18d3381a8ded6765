// A suite that throws at import with a secret in its message (shared/suite/suite.ts): the SuiteLoadError
// the CLI, the worker and the logs print holds [REDACTED] instead, in its message and its problems.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SuiteLoadError, loadSuite } from "../../../index.ts";
import { registerEnvironmentSecrets } from "../../../shared/redaction/secrets.ts";
import { fixture } from "../../support/paths.ts";

test("an import error naming the model key is [REDACTED] in the load error", async () => {
  const key = "import-key-Q7f2LmX9vT4wZ1bN8c";
  process.env.OPENAI_API_KEY = key;
  registerEnvironmentSecrets();
  const err = await loadSuite(fixture("secret-import-error-suite.ts")).then(
    () => assert.fail("the suite throws at import"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SuiteLoadError, String(err));
  assert.match(err.message, /cannot reach the model with key \[REDACTED\]: connection refused/);
  assert.ok(!err.message.includes(key) && !JSON.stringify(err.details).includes(key) && !err.problems.join("").includes(key));
});
