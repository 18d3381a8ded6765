// runs in: both
import * as z from "zod";
import { lazySchema } from "./runtime/lazy-schema.ts";

/**
 * Stable error codes. A code never changes meaning once released: scripts and the
 * coordinator branch on it, so add new codes rather than repurposing old ones.
 */
export const ErrorCode = {
  /** A `new Case({...})` option is invalid. */
  CaseInvalid: "CASE_INVALID",
  /** A `Score` was built with a value outside [0, 1]. */
  ScoreInvalid: "SCORE_INVALID",
  /** The suite file does not exist. */
  SuiteNotFound: "SUITE_NOT_FOUND",
  /** The suite file failed to import (syntax error, a throw at top level, a bad import). */
  SuiteLoadFailed: "SUITE_LOAD_FAILED",
  /** The suite module exports no cases, or its exports are malformed. */
  SuiteInvalid: "SUITE_INVALID",
  /** A dataset file of the suite holds invalid rows, or cannot be read (every problem names the file and line). */
  DatasetInvalid: "DATASET_INVALID",
  /** A worker loaded a suite whose fingerprint differs from the coordinator's. */
  SuiteMismatch: "SUITE_MISMATCH",
  /** A command-line usage error (unknown flag, bad value). */
  Usage: "USAGE",
  /** A report (JSON, JUnit) could not be written. */
  ReportWrite: "REPORT_WRITE",
  /** A worker thread died under a case (uncaught error, out of memory, terminated, its reply lost). */
  ThreadCrashed: "THREAD_CRASHED",
  /** A message crossing a thread or process boundary failed its schema. */
  WireInvalid: "WIRE_INVALID",
  /** The NATS server cannot be reached (at start, or lost for longer than the coordinator's bound). */
  BrokerUnreachable: "BROKER_UNREACHABLE",
  /** A stream, consumer or bucket exists with a configuration evalfleet cannot use. */
  BrokerConfig: "BROKER_CONFIG",
  /** A run id that does not exist, or already exists where a new one was needed. */
  RunNotFound: "RUN_NOT_FOUND",
  RunExists: "RUN_EXISTS",
  /** An option of a model client, agent adapter or evaluator is invalid (the message names the field and value). */
  ConfigInvalid: "CONFIG_INVALID",
  /** Something required is not configured (an API key, a judge model); the message says what to set. */
  ConfigMissing: "CONFIG_MISSING",
  /** A call to a model server failed (after its retries); `details.status` holds the HTTP status when there was one. */
  ModelCallFailed: "MODEL_CALL_FAILED",
  /** The provider limiter could not grant a permit (the coordinator granting fleet-wide permits unreachable): an infrastructure failure. */
  ProviderLimit: "PROVIDER_LIMIT",
  /** An MCP client was used before it was connected. */
  McpNotConnected: "MCP_NOT_CONNECTED",
  /** A results-store URL (`--db`) that is neither `sqlite:PATH` nor `postgres://...`. */
  StoreUrlInvalid: "STORE_URL_INVALID",
  /** The results store cannot be opened, reached, or brought to the current schema. */
  StoreUnavailable: "STORE_UNAVAILABLE",
  /** The results store holds a schema this evalfleet cannot use (written by a newer version). */
  StoreSchema: "STORE_SCHEMA",
  /** A write to the results store failed (reported as a warning; it never fails a case). */
  StoreWrite: "STORE_WRITE",
  /** A replayed case made a request (or tool call) its cassette holds no answer for (`--replay`): the case fails, kind `check`. */
  ReplayMiss: "REPLAY_MISS",
  /** A cassette file cannot be read or fails its schema (`--replay`). */
  CassetteInvalid: "CASSETTE_INVALID",
  /** The fleet's cassette bucket cannot be read or written (`--record nats`, `--replay nats`): the case is an infra error, retried like one. */
  CassetteStore: "CASSETTE_STORE",
  /** Anything else; carries the original error name in `name`. */
  Internal: "INTERNAL",
} as const;

/** One of the {@link ErrorCode} values. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The codes whose failures may go away when the same thing is tried again later (the broker or
 * the store was unreachable, a thread died, a model server failed). Everything else (a bad suite,
 * a bad flag, a malformed message) fails the same way every time.
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  ErrorCode.ThreadCrashed,
  ErrorCode.BrokerUnreachable,
  ErrorCode.ModelCallFailed,
  ErrorCode.ProviderLimit,
  ErrorCode.StoreUnavailable,
  ErrorCode.StoreWrite,
]);

/** Whether errors of `code` are worth trying again by default (an error may say otherwise: {@link EvalfleetError.retryable}). */
export function isRetryableCode(code: string): boolean {
  return RETRYABLE_CODES.has(code);
}

/** Options of {@link EvalfleetError}. */
export interface EvalfleetErrorOptions {
  cause?: unknown;
  /** Overrides the code's default (see {@link isRetryableCode}) when this failure knows better. */
  retryable?: boolean;
}

/** An error with a stable {@link ErrorCode}. Its message is written for people. */
export class EvalfleetError extends Error {
  override readonly name: string = "EvalfleetError";
  /** Stable machine-readable code. */
  readonly code: ErrorCode;
  /** Whether trying the same thing again later may succeed: the code's default unless overridden. */
  readonly retryable: boolean;
  /** Extra facts (the file, the field, the value) for logs and reports. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options: EvalfleetErrorOptions = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.code = code;
    this.retryable = options.retryable ?? isRetryableCode(code);
    this.details = Object.freeze({ ...details });
  }
}

/** Raised when a case's options are invalid; the message names the case and the field. */
export class CaseValidationError extends EvalfleetError {
  override readonly name = "CaseValidationError";
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCode.CaseInvalid, message, details);
  }
}

/** Raised for invalid or missing configuration of a model client, adapter or evaluator (codes CONFIG_INVALID, CONFIG_MISSING). */
export class ConfigError extends EvalfleetError {
  override readonly name = "ConfigError";
  constructor(code: typeof ErrorCode.ConfigInvalid | typeof ErrorCode.ConfigMissing, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
  }
}

/** Raised when a model server call fails for good (code MODEL_CALL_FAILED); the message never holds a credential. */
export class ModelCallError extends EvalfleetError {
  override readonly name = "ModelCallError";
  /** HTTP status of the last attempt, when the server answered. */
  readonly status: number | null;
  /** Attempts made (1 + retries). */
  readonly attempts: number;
  constructor(message: string, details: { status?: number | null; attempts?: number; [key: string]: unknown } = {}, options: EvalfleetErrorOptions = {}) {
    super(ErrorCode.ModelCallFailed, message, details, options);
    this.status = details.status ?? null;
    this.attempts = details.attempts ?? 1;
  }
}

/** Raised when a suite file cannot be loaded; `problems` lists every problem found, not the first only. */
export class SuiteLoadError extends EvalfleetError {
  override readonly name = "SuiteLoadError";
  /** Each problem as a one-line sentence. */
  readonly problems: readonly string[];
  constructor(code: ErrorCode, file: string, problems: readonly string[], options?: EvalfleetErrorOptions) {
    super(code, `${file}: ${problems.join("; ")}`, { file, problems }, options);
    this.problems = Object.freeze([...problems]);
  }
}

/** One problem of a dataset file: where it is (file and 1-based line) and what is wrong. */
export interface DatasetProblem {
  /** The file as shown to people (relative to the working directory when inside it). */
  file: string;
  /** 1-based line of the row (JSONL: the line; JSON/YAML: the element's first line; CSV: the record's first line). */
  line: number;
  /** The field (`inputs`, `expected_tools[1]`), or null for a problem of the whole row or file. */
  field: string | null;
  /** One line: what is wrong, with the value when there is one. */
  message: string;
}

/** `file:line: field: message`, the one-line form of a {@link DatasetProblem}. */
export function formatDatasetProblem(p: DatasetProblem): string {
  return `${p.file}:${p.line}: ${p.field ? `${p.field}: ` : ""}${p.message}`;
}

/**
 * Raised when a suite's datasets (or the rest of the suite) are invalid: every problem is listed,
 * one per line, each naming the file, line, field and value. Nothing runs until they are fixed.
 */
export class DatasetError extends SuiteLoadError {
  /** The dataset problems, in file order. */
  readonly datasetProblems: readonly DatasetProblem[];
  constructor(file: string, suiteProblems: readonly string[], datasetProblems: readonly DatasetProblem[]) {
    const lines = [...suiteProblems, ...datasetProblems.map(formatDatasetProblem)];
    super(ErrorCode.DatasetInvalid, file, lines);
    this.datasetProblems = Object.freeze([...datasetProblems]);
    Object.defineProperty(this, "name", { value: "DatasetError" });
    const count = lines.length;
    // One problem per line: a data team fixing thousands of rows needs every one, greppable.
    this.message = `${file}: ${count} problem${count === 1 ? "" : "s"} in the suite's data, nothing was run:\n${lines.map((l) => `  ${l}`).join("\n")}`;
  }
}

/** An error as plain data, so it can cross a thread or process boundary. */
export const ErrorInfoSchema = lazySchema(() => z.object({
  code: z.string(),
  name: z.string(),
  message: z.string(),
  /** Always written; optional on input so that a sender without it is still understood (then: `isRetryableCode(code)`). */
  retryable: z.boolean().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
}));
/** Plain-data form of an error. */
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

/**
 * The class name of a thrown value, as Python's `type(exc).__name__` would give it:
 * `err.name` when a subclass set one, else the constructor's name. Non-errors give `"Error"`.
 */
export function errorName(err: unknown): string {
  if (err instanceof Error) {
    if (err.name && err.name !== "Error") return err.name;
    const ctor = (err as { constructor?: { name?: string } }).constructor?.name;
    return ctor && ctor !== "Object" ? ctor : "Error";
  }
  if (err !== null && typeof err === "object") {
    const name = (err as { name?: unknown }).name;
    if (typeof name === "string" && name) return name;
  }
  return "Error";
}

/** The message of a thrown value; a non-error is converted with `String()`. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err !== null && typeof err === "object" && typeof (err as { message?: unknown }).message === "string") {
    return (err as { message: string }).message;
  }
  return String(err);
}

/** `"{Name}: {message}"`, the form every recorded case error uses after its prefix. */
export function describeError(err: unknown): string {
  return `${errorName(err)}: ${errorMessage(err)}`;
}

/** Converts any thrown value to {@link ErrorInfo}. */
export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof EvalfleetError) {
    return { code: err.code, name: err.name, message: err.message, retryable: err.retryable, details: safeDetails(err.details) };
  }
  return { code: ErrorCode.Internal, name: errorName(err), message: errorMessage(err), retryable: isRetryableCode(ErrorCode.Internal) };
}

function safeDetails(details: Readonly<Record<string, unknown>>): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(details)) as Record<string, unknown>;
  } catch {
    return {};
  }
}
