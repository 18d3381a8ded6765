import { processEnvironment, secretValuesIn, type Environment } from "./environment.ts";
import { Redactor } from "./redact.ts";
import { EventStreamRedactor, StreamRedactor } from "./redact-stream.ts";
import { CaseResult, type SuiteResult } from "./result.ts";
import type { CaseResultData } from "./wire/result-data.ts";

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
 */

/** Registered credentials shorter than this are ignored (they would mangle ordinary words). */
export const MIN_REGISTERED_SECRET_LENGTH = 6;

const known = new Set<string>();
let environmentRead = false;
let current: Redactor | null = null;

/** Adds a secret value: no output of this process (thread) will show it. Empty and very short values are ignored. */
export function registerSecret(value: string | null | undefined): void {
  if (typeof value !== "string" || value.length < MIN_REGISTERED_SECRET_LENGTH || known.has(value)) return;
  known.add(value);
  current = null;
}

/** Adds the values of the secret-named variables of `env` (default: this process's environment). */
export function registerEnvironmentSecrets(env: Environment = processEnvironment()): void {
  environmentRead = true;
  for (const value of secretValuesIn(env)) registerSecret(value);
}

/** The process's redactor, with every secret known so far (built again after a secret is added). */
export function processRedactor(): Redactor {
  if (!environmentRead) registerEnvironmentSecrets();
  return (current ??= new Redactor(known));
}

/**
 * Text for any output (a console line, a log line, an error message) without secrets.
 * `extra`: secrets known only to the caller (a model client's own key), removed too.
 */
export function redactText(text: string, extra: readonly string[] = []): string {
  const r = extra.length > 0 ? new Redactor([...known, ...extra]) : processRedactor();
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

/** A suite result whose case results hold no secrets (the same object when none did). */
export function redactSuite(suite: SuiteResult): SuiteResult {
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
