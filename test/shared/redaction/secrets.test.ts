// The process's secrets and the redaction function of each kind of output (shared/redaction/secrets.ts):
// what is known (secret-named variables of 8+ characters, registered credentials), results and
// suites redacted copy-on-write, the terminal's text (safeText) and the logger. The reports, the
// store and the NATS messages have their own tests beside their modules, and end to end in
// integration/security-secrets.test.ts.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { secretValuesIn } from "../../../shared/environment.ts";
import { REDACTED } from "../../../shared/redaction/redact.ts";
import { currentRedactedShapes, eventRedactor, processRedactor, redactJson, redactResult, redactResultData, redactSuite, redactText, registerEnvironmentSecrets, registerSecret, streamRedactor, useSuiteRedactShapes, withRedactShapes } from "../../../shared/redaction/secrets.ts";
import { SECRET_SHAPES } from "../../../shared/redaction/shapes.ts";
import { safeText } from "../../../shared/text.ts";
import { createLogger } from "../../../shared/logger.ts";
import { credsFileSecrets } from "../../../shared/broker/nats-settings.ts";
import { CaseResult, SuiteResult } from "../../../shared/result/result.ts";

const KEY = "k3y-7f2LmX9vT4wZ1bN8cQ";
const TOKEN = "nats-tok-99887766";
process.env.OPENAI_API_KEY = KEY;
process.env.NATS_TOKEN = TOKEN;
process.env.EVALFLEET_SHORT_TOKEN = "short";
registerEnvironmentSecrets();

describe("which variables are secrets", () => {
  test("names ending in _API_KEY, _TOKEN, _SECRET, _PASSWORD (and PGPASSWORD-like, *_SECRET_ACCESS_KEY), values of 8+ characters", () => {
    const env = {
      OPENAI_API_KEY: "sk-openai-value",
      GITHUB_TOKEN: "ghp_value_1234",
      APP_SECRET: "app-secret-1",
      DB_PASSWORD: "db-password",
      PGPASSWORD: "pg-password",
      AWS_SECRET_ACCESS_KEY: "aws/secret/key",
      lower_api_key: "lower-case-value",
      SHORT_TOKEN: "1234567",
      NATS_URL: "nats://host:4222",
      NATS_KEY: "/path/to/tls.key",
      PATH: "/usr/bin:/bin",
      FILE_TOKEN: "from-a-file-1\n",
    };
    assert.deepEqual(secretValuesIn(env).sort(), ["app-secret-1", "aws/secret/key", "db-password", "from-a-file-1", "from-a-file-1\n", "ghp_value_1234", "lower-case-value", "pg-password", "sk-openai-value"].sort());
  });

  test("the process knows its environment's secrets and what is registered; short values are ignored", () => {
    registerSecret("nkey-seed-value");
    registerSecret("abc");
    registerSecret(null);
    const known = processRedactor().secrets;
    for (const s of [KEY, TOKEN, "nkey-seed-value"]) assert.ok(known.includes(s), s);
    assert.ok(!known.includes("short") && !known.includes("abc"));
    assert.equal(redactText(`${KEY} ${TOKEN} nkey-seed-value short`), `${REDACTED} ${REDACTED} ${REDACTED} short`);
    assert.equal(redactText("client key client-own-key-1", ["client-own-key-1"]), `client key ${REDACTED}`, "a caller's own secret");
  });

  test("a .creds file's secrets: the JWT and the seed", () => {
    const jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJVQUJDIn0.c2lnbmF0dXJl";
    const seed = `SU${"A".repeat(56)}`;
    const creds = `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n************************* IMPORTANT *************************\nNKEY Seed printed below can be used to sign and prove identity.\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n\n*************************************************************\n`;
    assert.deepEqual(credsFileSecrets(creds), [jwt, seed]);
    assert.deepEqual(credsFileSecrets(creds.replace(/\n/g, "\r\n")), [jwt, seed]);
    assert.deepEqual(credsFileSecrets("no blocks here"), []);
  });
});

describe("one function per kind of output", () => {
  test("plain data: a redacted copy, or the same object when clean", () => {
    const clean = { a: ["x"], b: { c: 1 } };
    assert.equal(redactJson(clean), clean);
    assert.deepEqual(redactJson({ a: [`key=${KEY}`] }), { a: [`key=${REDACTED}`] });
  });

  test("a case result: every text (output, error, reasons, repeats, tools, names); the raw response kept as is", () => {
    const response = { content: KEY };
    const r = new CaseResult({
      name: `case ${KEY}`,
      output: `the key is ${KEY}`,
      error: `agent: Error: bad key ${KEY}`,
      judgeReason: `saw ${KEY}`,
      judgePassed: false,
      score: { value: 0, passed: false, reason: `scorer saw ${KEY}`, detail: { k: KEY } },
      toolsCalled: [`tool-${KEY}`],
      expectations: { expectedOutput: { passed: false, reason: `expected ${KEY}`, method: "exact" } },
      repeats: [{ repeat: 1, passed: false, sessionId: "s", durationSeconds: 0, judgePassed: null, judgeReason: null, judgeScore: null, reliabilityPassed: null, output: KEY, toolsCalled: [], timedOut: false, skipped: false, error: KEY, attempts: 1, worker: null, score: null, expectations: null }],
      response,
    });
    const clean = redactResult(r);
    assert.notEqual(clean, r);
    const text = JSON.stringify({ ...clean.toData(), response: null });
    assert.ok(!text.includes(KEY), text);
    assert.equal(clean.output, `the key is ${REDACTED}`);
    assert.equal(clean.error, `agent: Error: bad key ${REDACTED}`);
    assert.equal(clean.score?.reason, `scorer saw ${REDACTED}`);
    assert.equal(clean.response, response, "the raw response never leaves the process: not walked");
    assert.equal(clean.passed, r.passed);
    assert.equal(r.output, `the key is ${KEY}`, "the original is untouched");
    const plain = new CaseResult({ name: "plain", output: "fine" });
    assert.equal(redactResult(plain), plain, "a clean result is not copied");
    assert.equal(redactResultData(plain.toData()).output, "fine");
  });

  test("a suite: its results redacted, its figures kept", () => {
    const suite = new SuiteResult([new CaseResult({ name: "a", error: KEY }), new CaseResult({ name: "b", reliabilityPassed: true })], { runId: "r", durationSeconds: 2, passThreshold: 0.5, repeat: 1 });
    const clean = redactSuite(suite);
    assert.equal(clean.results[0]!.error, REDACTED);
    assert.equal(clean.results[1], suite.results[1]);
    assert.deepEqual({ ...clean.toJSON().summary }, { ...suite.toJSON().summary });
    const already = new SuiteResult([new CaseResult({ name: "b" })]);
    assert.equal(redactSuite(already), already);
  });

  test("streams of chunks and of events, with the process's secrets", () => {
    const s = streamRedactor();
    assert.equal(s.push(`key ${KEY.slice(0, 7)}`) + s.push(`${KEY.slice(7)} end`) + s.flush(), `key ${REDACTED} end`);
    const e = eventRedactor();
    const out = [...e.push({ type: "d", delta: KEY.slice(0, 9) }), ...e.push({ type: "d", delta: KEY.slice(9) }), ...e.flush()];
    assert.deepEqual(out, [{ type: "d", delta: REDACTED }, { type: "d", delta: "" }]);
  });

  test("safeText: no secret and no control character reaches a terminal; a cut after it cannot split a secret", () => {
    assert.equal(safeText(`\u001b[31m${KEY}\u001b[0m`), `?[31m${REDACTED}?[0m`);
    assert.equal(safeText(null), "");
    assert.equal(safeText(`Authorization: Bearer ${TOKEN}`), `Authorization: Bearer ${REDACTED}`);
  });

  test("the logger: the environment's secrets, in any field or message, and the REDACTED censor for credential fields", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "debug", destination: { write: (s: string) => void lines.push(s) } });
    log.debug({ cause: { deep: `has ${KEY}` }, apiKey: "field-secret-value", quoted: `"${TOKEN}"` }, `message ${KEY}`);
    const text = lines.join("");
    assert.ok(!text.includes(KEY) && !text.includes(TOKEN) && !text.includes("field-secret-value"), text);
    assert.equal(JSON.parse(text).apiKey, REDACTED);
    assert.equal(JSON.parse(text).msg, `message ${REDACTED}`);
  });
});

describe("which shapes this process redacts (redactShapes)", () => {
  const gh = `gh${"p"}_${"Ab1".repeat(12)}`;
  const jwt = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.${"c2ln".repeat(8)}`;

  test("every shape by default; the suite's choice once a command has loaded it; known values whatever it says", () => {
    assert.equal(redactText(`t ${gh}`), `t ${REDACTED}`);
    try {
      useSuiteRedactShapes(false);
      assert.equal(redactText(`t ${gh} ${KEY}`), `t ${gh} ${REDACTED}`, "the environment's key is still redacted");
      assert.deepEqual(redactJson({ a: gh }), { a: gh });
      useSuiteRedactShapes({ except: ["jwt"] });
      assert.equal(redactText(`${gh} ${jwt}`), `${REDACTED} ${jwt}`);
      const s = streamRedactor();
      assert.equal(s.push(`a ${jwt.slice(0, 9)}`) + s.push(`${jwt.slice(9)} b`) + s.flush(), `a ${jwt} b`);
    } finally {
      useSuiteRedactShapes(true);
    }
    assert.equal(redactText(gh), REDACTED);
  });

  test("a run's own choice (withRedactShapes) holds for everything it awaits and schedules, and only there", async () => {
    const seen: string[] = [];
    const run = withRedactShapes(false, async () => {
      seen.push(redactText(gh));
      await new Promise((r) => setTimeout(r, 5));
      seen.push(redactText(gh));
      await new Promise<void>((r) => setImmediate(() => {
        seen.push(redactText(gh));
        r();
      }));
      assert.deepEqual(currentRedactedShapes(), []);
    });
    // Outside the run, at the same time, the process's shapes.
    seen.push(`outside ${redactText(gh)}`);
    await run;
    assert.deepEqual(seen, [gh, `outside ${REDACTED}`, gh, gh]);
    assert.equal(withRedactShapes({ except: ["github"] }, () => redactText(`${gh} ${jwt}`)), `${gh} ${REDACTED}`);
    assert.equal(withRedactShapes(null, () => redactText(gh)), REDACTED, "null: every shape");
    assert.deepEqual(currentRedactedShapes(), SECRET_SHAPES);
  });

  test("the logger follows the shapes of where it logs", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "info", destination: { write: (s: string) => void lines.push(s) } });
    log.info(`token ${gh}`);
    withRedactShapes(false, () => log.info(`token ${gh}`));
    assert.deepEqual(lines.map((l) => JSON.parse(l).msg), [`token ${REDACTED}`, `token ${gh}`]);
  });
});
