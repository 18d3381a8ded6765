import { InvalidArgumentError } from "commander";
import { ORDER_VALUES, readOrderValue } from "../../shared/order-value.ts";

/**
 * The value parsers of the command line's flags: each turns a flag's text into its value or
 * refuses it with the message commander prints (exit 2), naming the flag and the value. Pure, and
 * light (commander and the order parser only): `evalfleet --help` loads this file.
 */

/** Collects a repeatable flag's values. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A number of seconds >= 0. */
export function parseSeconds(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${flag} must be a number of seconds >= 0, got '${value}'`);
    return n;
  };
}

/** A number of seconds > 0. */
export function parsePositiveSeconds(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${flag} must be a number of seconds > 0, got '${value}'`);
    return n;
  };
}

/** A number > 0 (dollars). */
export function parsePositiveNumber(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${flag} must be a number > 0, got '${value}'`);
    return n;
  };
}

/** A whole number >= `min`. */
export function parseWhole(flag: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min) throw new InvalidArgumentError(`${flag} must be a whole number >= ${min}, got '${value}'`);
    return n;
  };
}

/**
 * `--repeat`: a whole number N >= 1 (every case runs N times), or `MIN..MAX` (adaptive repeats:
 * MIN trials each, more up to MAX while a case's interval is around its pass rule).
 */
export function parseRepeat(flag: string): (value: string) => number | { min: number; max: number } {
  return (value) => {
    const range = /^\s*(\d+)\s*\.\.\s*(\d+)\s*$/.exec(value);
    if (range) {
      const min = Number(range[1]);
      const max = Number(range[2]);
      if (min < 1) throw new InvalidArgumentError(`${flag} MIN..MAX needs MIN >= 1, got '${value}'`);
      if (max < min) throw new InvalidArgumentError(`${flag} MIN..MAX needs MAX >= MIN, got '${value}'`);
      return min === max ? min : { min, max };
    }
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || n < 1) throw new InvalidArgumentError(`${flag} must be a whole number >= 1 or MIN..MAX (3..20), got '${value}'`);
    return n;
  };
}

/** A fraction between 0 and 1. */
export function parseFraction(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*(\d+\.?\d*|\.\d+)\s*$/.test(value) || n < 0 || n > 1) throw new InvalidArgumentError(`${flag} must be a fraction between 0 and 1 (0.95 for 95%), got '${value}'`);
    return n;
  };
}

/**
 * A fraction strictly between 0 and 1 (a confidence level or an alpha: 0 and 1 mean nothing there).
 * `example` is the usual value the message shows (default `0.95 for 95%`).
 */
export function parseOpenFraction(flag: string, example = "0.95 for 95%"): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*(\d+\.?\d*|\.\d+)\s*$/.test(value) || !(n > 0 && n < 1)) throw new InvalidArgumentError(`${flag} must be a fraction strictly between 0 and 1 (${example}), got '${value}'`);
    return n;
  };
}

/** A duration as `--cache-ttl` takes it: `7d`, `12h`, `30m`, `45s`, or a number of seconds. Null when it is not one. */
export function parseDurationSeconds(value: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$/.exec(value);
  if (!m) return null;
  const n = Number(m[1]) * ({ "": 1, s: 1, m: 60, h: 3600, d: 86400 } as const)[m[2] as "" | "s" | "m" | "h" | "d"];
  return n > 0 ? n : null;
}

/** `--order`'s parser: the value as given, once it parses (random's seed is drawn when the run's settings are compiled). */
export function parseOrder(value: string): string {
  if (!readOrderValue(value)) throw new InvalidArgumentError(`--order must be ${ORDER_VALUES}, got '${value}'`);
  return value.trim();
}
