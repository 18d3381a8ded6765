// runs in: both
import { lazyPackage } from "./runtime/lazy-package.ts";
import type { Logger, LoggerOptions, DestinationStream } from "pino";
import { loggerLevel } from "./logger-config.ts";
import { REDACTED } from "./redaction/redact.ts";
import { redactText, registerEnvironmentSecrets } from "./redaction/secrets.ts";

export type { Logger } from "pino";

/** Paths redacted from every log line: credentials never reach a log. */
export const REDACT_PATHS: readonly string[] = [
  "apiKey",
  "*.apiKey",
  "token",
  "*.token",
  "password",
  "*.password",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "nkey",
  "*.nkey",
  "seed",
  "*.seed",
  "creds",
  "*.creds",
];

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** pino level; default `"warn"`. `"silent"` writes nothing. */
  level?: LoggerOptions["level"];
  /** Logger name, e.g. `evalfleet.worker`. Default `evalfleet`. */
  name?: string;
  /** Where lines go; default standard error (never standard output, which carries reports). */
  destination?: DestinationStream;
}

/**
 * A structured (JSON lines) logger with secrets redacted: by field name, and by value in every
 * line, with the process's one redactor (shared/redaction/secrets.ts). The environment's secrets are read
 * again here, so a variable set since the process started is known too.
 *
 * pino itself is loaded on the first line the level lets through (or the first use of anything
 * but a level method): a run at the default level `warn` usually writes none, and a worker thread
 * that never logs is spared pino's start-up (about a tenth of its own, measured).
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  registerEnvironmentSecrets();
  const opts: LoggerOptions = {
    name: options.name ?? "evalfleet",
    level: loggerLevel(options.level),
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    // Field names cannot catch a secret inside a message ("cannot reach https://user:pw@..."):
    // the finished line is scrubbed too. Only lines that are written pay for it.
    hooks: { streamWrite: (line) => redactText(line) },
  };
  return lazyLogger(String(opts.level), () => {
    const { pino } = loadPino();
    return pino(opts, options.destination ?? pino.destination({ fd: 2, sync: true }));
  });
}

/** A logger that writes nothing: the default of the library API, whose core never prints. */
export function silentLogger(): Logger {
  return lazyLogger("silent", () => loadPino().pino({ level: "silent" }));
}

/** pino, required on first use (a CommonJS package: synchronously, as logging is). */
const loadPino = lazyPackage<typeof import("pino")>("pino");

/** pino's level values; a level method below the logger's level writes nothing. */
const LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * A pino logger created on first need: a level method below `level` returns at once; anything
 * else (a line to write, `child`'s logger when it writes, `flush`, setting the level) creates the
 * real logger, and from then on everything goes to it.
 */
function lazyLogger(level: string, create: () => Logger): Logger {
  let real: Logger | null = null;
  const get = (): Logger => (real ??= create());
  const threshold = LEVELS[level] ?? LEVELS.info!;
  const quiet = (): void => undefined;
  const target = {} as Logger;
  return new Proxy(target, {
    get(_t, prop) {
      if (real) return bound(real, prop);
      if (typeof prop === "string" && prop in LEVELS && prop !== "silent") {
        return (LEVELS[prop]! < threshold ? quiet : (...args: unknown[]) => (get()[prop as "info"] as (...a: unknown[]) => void)(...args));
      }
      if (prop === "silent") return quiet;
      if (prop === "level") return level;
      if (prop === "isLevelEnabled") return (l: string) => (LEVELS[l] ?? Infinity) >= threshold && threshold !== Infinity;
      if (prop === "child") return (bindings: Record<string, unknown>, opts?: Record<string, unknown>) => lazyLogger(typeof opts?.level === "string" ? opts.level : level, () => get().child(bindings, opts));
      return bound(get(), prop);
    },
    set(_t, prop, value) {
      (get() as unknown as Record<string | symbol, unknown>)[prop] = value;
      return true;
    },
  });
}

function bound(logger: Logger, prop: string | symbol): unknown {
  const value = (logger as unknown as Record<string | symbol, unknown>)[prop];
  return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(logger) : value;
}
