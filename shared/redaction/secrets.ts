// runs in: both
import { AsyncLocalStorage } from "node:async_hooks";
import { processEnvironment, secretValuesIn, type Environment } from "../environment.ts";
import { Redactor } from "./redact.ts";
import { SECRET_SHAPES, shapesRedacted, type RedactShapes, type SecretShape } from "./shapes.ts";
import { EventStreamRedactor, StreamRedactor } from "./redact-stream.ts";
import { CaseResult, type SuiteResult } from "../result/result.ts";
import type { CaseResultData } from "../wire/result-data.ts";

/**
 * The secrets this process (this thread) knows, and one redaction function per kind of output.
 * Every output goes through one of them: a line of text ({@link redactText}; `safeText` in
 * shared/text.ts and the logger compose it), plain data about to be serialized
 * ({@link redactJson}: the JSON report, NATS messages, the store's records), a case or suite
 * result ({@link redactResult}, {@link redactSuite}) and a stream of chunks or events
 * ({@link streamRedactor}, {@link eventRedactor}).
 *
 * What is known: the values of the secret-named environment variables (read once, on first use,
 * and again by {@link registerEnvironmentSecrets}; see `secretValuesIn` in environment.ts) and
 * what is registered ({@link registerSecret}: the NATS token, password, NKey seed and the JWT and
 * seed of a `.creds` file, a store URL's password). Secrets are only ever added.
 *
 * Which shapes of well-known credentials are redacted besides (shapes.ts; every one unless the
 * suite says otherwise, `redactShapes`): the process's, set by a command once it has loaded its
 * suite ({@link useSuiteRedactShapes}), or, for the work inside {@link withRedactShapes}, a run's
 * own (the library's runners, a worker thread's batch: several suites may share one process).
 */

/** Registered credentials shorter than this are ignored (they would mangle ordinary words). */
export const MIN_REGISTERED_SECRET_LENGTH = 6;

const known = new Set<string>();
let environmentRead = false;
/** The redactors built with every secret known so far, by the shapes they redact (their names joined). */
const redactors = new Map<string, Redactor>();
/** The shapes this process redacts outside any {@link withRedactShapes}. */
let processShapes: readonly SecretShape[] = SECRET_SHAPES;
const scopedShapes = new AsyncLocalStorage<readonly SecretShape[]>();

/** Adds a secret value: no output of this process (thread) will show it. Empty and very short values are ignored. */
export function registerSecret(value: string | null | undefined): void {
  if (typeof value !== "string" || value.length < MIN_REGISTERED_SECRET_LENGTH || known.has(value)) return;
  known.add(value);
  redactors.clear();
}

/** Adds the values of the secret-named variables of `env` (default: this process's environment). */
export function registerEnvironmentSecrets(env: Environment = processEnvironment()): void {
  environmentRead = true;
  for (const value of secretValuesIn(env)) registerSecret(value);
}

/**
 * Sets the shapes this process redacts from its suite's `redactShapes` (every command that loads
 * a suite, once it has: shared/suite/bounded-load.ts; a `cli(cases)` script). Default: every shape.
 */
export function useSuiteRedactShapes(option: RedactShapes | null | undefined): void {
  processShapes = shapesRedacted(option);
}

/**
 * Runs `fn` with the shapes of `option` redacted by everything it does, to its end (what it
 * awaits, its timers and callbacks included): a run of the library's runners, a worker thread's
 * batch of one suite's cases.
 */
export function withRedactShapes<T>(option: RedactShapes | null | undefined, fn: () => T): T {
  const shapes = shapesRedacted(option);
  // The shapes already redacted here (the default, most runs): nothing to scope. The first run()
  // of an AsyncLocalStorage turns on promise hooks for the whole process, paid by every promise
  // of every case after it (a run of the library's runners redacts the default shapes).
  if (sameShapes(shapes, currentRedactedShapes())) return fn();
  return scopedShapes.run(shapes, fn);
}

function sameShapes(a: readonly SecretShape[], b: readonly SecretShape[]): boolean {
  return a === b || (a.length === b.length && a.every((shape, i) => shape === b[i]));
}

/** The shapes redacted here and now: the run's ({@link withRedactShapes}), else the process's. */
export function currentRedactedShapes(): readonly SecretShape[] {
  return scopedShapes.getStore() ?? processShapes;
}

/** The process's redactor, with every secret known so far (built again after a secret is added) and the shapes redacted here. */
export function processRedactor(): Redactor {
  if (!environmentRead) registerEnvironmentSecrets();
  const shapes = currentRedactedShapes();
  const key = shapes.join(",");
  let r = redactors.get(key);
  if (!r) redactors.set(key, (r = new Redactor(known, { shapes })));
  return r;
}

/**
 * Text for any output (a console line, a log line, an error message) without secrets.
 * `extra`: secrets known only to the caller (a model client's own key), removed too.
 */
export function redactText(text: string, extra: readonly string[] = []): string {
  const r = extra.length > 0 ? new Redactor([...known, ...extra], { shapes: currentRedactedShapes() }) : processRedactor();
  return r.text(text);
}

/** Plain data about to be written or sent (a report, a message, a record), without secrets: a copy where it held one. */
export function redactJson<T>(value: T): T {
  return processRedactor().value(value);
}

/**
 * A result's data without secrets in any of its texts (output, errors, reasons, names, repeats).
 * The raw `response` is kept as is: it never leaves the process (see shared/wire/fit-result.ts).
 */
export function redactResultData(data: CaseResultData): CaseResultData {
  const { response, ...rest } = data;
  const clean = processRedactor().value(rest);
  return clean === rest ? data : { ...data, ...clean, response };
}

/** A case result without secrets: the same object when it held none, else a copy. */
export function redactResult(result: CaseResult): CaseResult {
  const data = result.toData();
  const clean = redactResultData(data);
  return clean === data ? result : CaseResult.fromData(clean);
}

/**
 * A suite result whose case results hold no secrets (the same object when none did). A spooled
 * run's (`suite.spooled`) is redacted as its results are walked, none of them held.
 */
export function redactSuite(suite: SuiteResult): SuiteResult {
  if (suite.spooled) {
    const walk = suite.cases();
    return suite.withResults({
      size: suite.total,
      readsCopies: true,
      *[Symbol.iterator]() {
        for (const r of walk) yield redactResult(r);
      },
    });
  }
  const results = suite.results.map(redactResult);
  if (results.every((r, i) => r === suite.results[i])) return suite;
  return suite.withResults(results);
}

/** A redactor for one stream of text chunks (a secret split across chunks is still found). */
export function streamRedactor(): StreamRedactor {
  return new StreamRedactor(processRedactor());
}

/** A redactor for one case's stream of run events (a secret split across two events' text is still found). */
export function eventRedactor(): EventStreamRedactor {
  return new EventStreamRedactor(processRedactor());
}
