// runs in: both
import { EvalfleetError, ErrorCode } from "./errors.ts";
import { assertRunId } from "./broker/subjects.ts";
import { DEFAULT_JUDGE_MODEL, DEFAULT_RUN_PREFIX, DEFAULT_STREAM_REPLICAS } from "./defaults.ts";
import { parseLimitList, type LimitTable } from "./providers/limit-spec.ts";

/**
 * The environment variables evalfleet reads, each read and validated in one place. The config
 * modules (coordinator/cli/config.ts, worker/config.ts) take the environment once, through
 * {@link processEnvironment}, and hand the values down; the library functions whose documented
 * fallbacks are variables (`defaultJudgeModel`, the OpenAI clients, the logger's secret list) read
 * it through {@link processEnvironment} too, so `process.env` is read in this file only.
 * Every reader here is pure: the environment is passed in.
 *
 * A nightly run is two CronJobs on the same schedule, one for the coordinator and one for the
 * workers. A CronJob names each Job it creates `<cronjob name>-<scheduled time in minutes since
 * the epoch>`, so the Jobs of one night end in the same number, and that number is the shared part
 * of the run id: both pods get their Job's name from the downward API (`EVALFLEET_JOB_NAME`) and
 * derive `<EVALFLEET_RUN_PREFIX>-<number>` without talking to each other or to the Kubernetes API.
 */

/** Environment variables by name, as `process.env` holds them (tests pass a plain object). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The environment of this process (this thread, in a worker thread): the one read of `process.env`. */
export function processEnvironment(): Environment {
  return process.env;
}

/**
 * The run id a process should use from its environment, or null when none is set:
 * `EVALFLEET_RUN_ID` as given; else, when `EVALFLEET_JOB_NAME` is set, `<EVALFLEET_RUN_PREFIX>-<N>`
 * where N is the Job name's trailing number (prefix default {@link DEFAULT_RUN_PREFIX}).
 * Throws a usage {@link EvalfleetError} for a Job name without a trailing number or an invalid id.
 */
export function runIdFromEnvironment(env: Environment): string | null {
  const explicit = env.EVALFLEET_RUN_ID?.trim();
  if (explicit) return assertRunId(explicit);
  const job = env.EVALFLEET_JOB_NAME?.trim();
  if (!job) return null;
  const m = /-(\d+)$/.exec(job);
  if (!m) {
    throw new EvalfleetError(
      ErrorCode.Usage,
      `EVALFLEET_JOB_NAME '${job}' does not end in -<number>: a CronJob names its Jobs <cronjob>-<scheduled minute>; name a manual Job like that (e.g. <name>-$(date +%s)) or set EVALFLEET_RUN_ID`,
      { field: "EVALFLEET_JOB_NAME", value: job },
    );
  }
  const prefix = env.EVALFLEET_RUN_PREFIX?.trim() || DEFAULT_RUN_PREFIX;
  return assertRunId(`${prefix}-${m[1]}`);
}

/** `EVALFLEET_JUDGE_MODEL`: the default judge's model, or {@link DEFAULT_JUDGE_MODEL} (`gpt-5-mini`) when unset or blank. */
export function judgeModelFromEnvironment(env: Environment): string {
  return env.EVALFLEET_JUDGE_MODEL?.trim() || DEFAULT_JUDGE_MODEL;
}

/**
 * A boolean from the environment: `1`, `true`, `yes`, `on` are true; `0`, `false`, `no`, `off` and
 * unset are false (case-insensitive). Anything else is a usage error naming the variable.
 */
export function booleanFromEnvironment(name: string, env: Environment): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return false;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new EvalfleetError(ErrorCode.Usage, `${name} must be true or false, got '${env[name]}'`, { field: name });
}

/**
 * `EVALFLEET_PROVIDER_LIMITER=off`: model calls take no permits at all, in this process (each
 * process on its own, with its clients' retries only, as other runners work). For comparisons and
 * diagnosis; default on.
 */
export function providerLimiterOff(env: Environment): boolean {
  return env.EVALFLEET_PROVIDER_LIMITER?.trim().toLowerCase() === "off";
}

/** `EVALFLEET_LIMITS`: provider limits, `KEY=rpm:N,tpm:N,concurrency:N` separated by `;` (empty when unset). */
export function limitsFromEnvironment(env: Environment): LimitTable {
  const raw = env.EVALFLEET_LIMITS;
  return raw && raw.trim() ? parseLimitList(raw, "EVALFLEET_LIMITS") : {};
}

/** `EVALFLEET_STREAM_REPLICAS` (1-5, JetStream's range), or {@link DEFAULT_STREAM_REPLICAS} when unset. */
export function streamReplicasFromEnvironment(env: Environment): number {
  const raw = env.EVALFLEET_STREAM_REPLICAS?.trim();
  if (!raw) return DEFAULT_STREAM_REPLICAS;
  const n = Number(raw);
  if (!/^[1-5]$/.test(raw)) throw new EvalfleetError(ErrorCode.Usage, `EVALFLEET_STREAM_REPLICAS must be 1 to 5, got '${env.EVALFLEET_STREAM_REPLICAS}'`, { field: "EVALFLEET_STREAM_REPLICAS" });
  return n;
}

/**
 * The suite file of a command: its `[suite]` argument, else `EVALFLEET_SUITE`. Throws a usage
 * error when neither names one.
 */
export function suiteFileFrom(argument: string | undefined, env: Environment): string {
  const file = argument ?? env.EVALFLEET_SUITE;
  if (!file) throw new EvalfleetError(ErrorCode.Usage, "no suite file: pass SUITE or set EVALFLEET_SUITE", { field: "suite" });
  return file;
}

/** Whether colors are allowed on a terminal: not when `NO_COLOR` is set to anything non-empty. */
export function colorAllowedBy(env: Environment): boolean {
  return !env.NO_COLOR;
}

/**
 * Names of variables whose values are secrets: ending in `_API_KEY`, `_TOKEN`, `_SECRET` or
 * `_PASSWORD` (`OPENAI_API_KEY`, `NATS_TOKEN`, `NATS_PASSWORD`), and as before without the
 * underscore or as `PASSWD`/`APIKEY` (`PGPASSWORD`), and `*_SECRET_ACCESS_KEY`; any case.
 */
export const SECRET_VARIABLE_NAME = /(TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|SECRET_ACCESS_KEY)$/i;

/** Shorter values of secret-named variables are not redacted: they would mangle ordinary words (`true`, `local`). */
export const MIN_SECRET_VARIABLE_LENGTH = 8;

/**
 * The values of the secret variables of `env` ({@link SECRET_VARIABLE_NAME}) that are at least
 * {@link MIN_SECRET_VARIABLE_LENGTH} characters long: what every output of the process redacts.
 */
export function secretValuesIn(env: Environment): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value || !SECRET_VARIABLE_NAME.test(name)) continue;
    // A value read from a file often ends in a newline the secret itself does not have.
    for (const v of new Set([value, value.trim()])) if (v.length >= MIN_SECRET_VARIABLE_LENGTH) out.push(v);
  }
  // The OTLP exporter's headers usually hold a credential (`Authorization=Bearer ...`, `x-api-key=...`).
  for (const name of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    for (const part of (env[name] ?? "").split(",")) {
      const value = part.slice(part.indexOf("=") + 1).trim();
      if (part.includes("=") && value.length >= MIN_SECRET_VARIABLE_LENGTH) out.push(value);
    }
  }
  return out;
}

/** Where and how spans are exported, from the standard OpenTelemetry variables; see {@link tracingSettingsFrom}. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (`.../v1/traces`). */
  url: string;
  /** `http/protobuf` (the standard's default) or `http/json`. */
  protocol: "http/protobuf" | "http/json";
  /** Headers sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`): often a credential. */
  headers: Record<string, string>;
  /** `OTEL_SERVICE_NAME`, default `evalfleet`. */
  serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`, `key=value` pairs. */
  resourceAttributes: Record<string, string>;
  /** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: model calls carry their messages (redacted). Default false. */
  captureMessageContent: boolean;
}

/** `k=v,k2=v2` (values percent-decoded), as the OpenTelemetry specification writes lists of pairs. */
function pairsFrom(name: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? "").split(",")) {
    if (!part.trim()) continue;
    const eq = part.indexOf("=");
    if (eq <= 0) throw new EvalfleetError(ErrorCode.Usage, `${name} must be key=value pairs separated by commas, got '${part.trim()}'`, { field: name });
    let value = part.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Kept as written: a literal % is allowed.
    }
    out[part.slice(0, eq).trim()] = value;
  }
  return out;
}

/**
 * Tracing's settings from the standard OpenTelemetry variables, or `null` when tracing is off:
 * off unless `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (`/v1/traces` appended) is set, and off when `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (default)
 * or `http/json`; `grpc`, or any other exporter than `otlp`, is a usage error naming the variable.
 */
export function tracingSettingsFrom(env: Environment): TracingSettings | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return null;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === "none") return null;
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!tracesEndpoint && !endpoint) return null;
  if (exporter && exporter !== "otlp") throw new EvalfleetError(ErrorCode.Usage, `OTEL_TRACES_EXPORTER must be otlp or none, got '${env.OTEL_TRACES_EXPORTER}'`, { field: "OTEL_TRACES_EXPORTER" });
  const url = tracesEndpoint || `${endpoint!.replace(/\/+$/, "")}/v1/traces`;
  if (!/^https?:\/\/[^/]/.test(url)) throw new EvalfleetError(ErrorCode.Usage, `${tracesEndpoint ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT"} must be an http(s) URL, got '${tracesEndpoint || endpoint}'`, { field: "OTEL_EXPORTER_OTLP_ENDPOINT" });
  const protocolName = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = (env[protocolName]?.trim() || "http/protobuf").toLowerCase();
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new EvalfleetError(ErrorCode.Usage, `${protocolName} must be http/protobuf or http/json (grpc is not supported), got '${env[protocolName]}'`, { field: protocolName });
  }
  return {
    url,
    protocol,
    headers: { ...pairsFrom("OTEL_EXPORTER_OTLP_HEADERS", env.OTEL_EXPORTER_OTLP_HEADERS), ...pairsFrom("OTEL_EXPORTER_OTLP_TRACES_HEADERS", env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || "evalfleet",
    resourceAttributes: pairsFrom("OTEL_RESOURCE_ATTRIBUTES", env.OTEL_RESOURCE_ATTRIBUTES),
    captureMessageContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true",
  };
}
