import { isDeepStrictEqual } from "node:util";
import type { ExpectationVerdict } from "../../../shared/wire/result-data.ts";
import { expectedNumber, type ExpectedOutput, type ResolvedScoring } from "../../../shared/datasets/expected-output-methods.ts";
import { contentAsString } from "../evidence.ts";

/**
 * The expected-output check for the scoring methods that need no model (`exact`, `contains`,
 * `regex`, `json`, `numeric`). Pure; no I/O. The `judge` method is in `expectations.ts`.
 */

/** Scores an answer against the expected output. `scoring.method` must not be `judge`. */
export function scoreExpectedOutput(output: string, expected: ExpectedOutput, scoring: ResolvedScoring): ExpectationVerdict {
  switch (scoring.method) {
    case "exact": {
      const want = fold(asText(expected).trim(), scoring);
      const got = fold(output.trim(), scoring);
      return got === want
        ? { passed: true, reason: "the answer equals the expected text" }
        : { passed: false, reason: `the answer ${quote(output.trim())} is not exactly the expected ${quote(asText(expected).trim())}` };
    }
    case "contains": {
      const want = asText(expected);
      return fold(output, scoring).includes(fold(want, scoring))
        ? { passed: true, reason: `the answer contains ${quote(want)}` }
        : { passed: false, reason: `the answer does not contain ${quote(want)}${scoring.ignoreCase ? " (ignoring case)" : ""}` };
    }
    case "regex": {
      const pattern = new RegExp(asText(expected), scoring.ignoreCase ? "i" : "");
      return pattern.test(output)
        ? { passed: true, reason: `the answer matches /${pattern.source}/${pattern.flags}` }
        : { passed: false, reason: `the answer does not match /${pattern.source}/${pattern.flags}` };
    }
    case "json":
      return scoreJson(output, expected);
    case "numeric":
      return scoreNumeric(output, expected, scoring.tolerance);
    case "judge":
      throw new Error("the judge scoring method needs a model: use runExpectations()");
  }
}

function scoreJson(output: string, expected: ExpectedOutput): ExpectationVerdict {
  const want = typeof expected === "string" ? (JSON.parse(expected) as unknown) : expected;
  const got = answerJson(output);
  if (got === undefined) return { passed: false, reason: `the answer is not JSON: ${quote(output.trim())}` };
  const diff = firstDifference(want, got.value, "$");
  return diff === null ? { passed: true, reason: "the answer's JSON equals the expected value" } : { passed: false, reason: `the answer's JSON differs: ${diff}` };
}

/** The answer as JSON: the whole text, or the content of a ```json fence. */
function answerJson(output: string): { value: unknown } | undefined {
  const candidates = [output.trim()];
  const fence = /```(?:json)?\s*\n([\s\S]*?)\n?```/i.exec(output);
  if (fence?.[1]) candidates.push(fence[1].trim());
  for (const text of candidates) {
    try {
      return { value: JSON.parse(text) };
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

/** Where two JSON values first differ (`at $.items[2]: expected 3, got 4`), or null when they are equal. Key order does not matter. */
export function firstDifference(want: unknown, got: unknown, path: string): string | null {
  if (isDeepStrictEqual(want, got)) return null;
  if (Array.isArray(want) && Array.isArray(got)) {
    if (want.length !== got.length) return `at ${path}: expected a list of ${want.length}, got ${got.length} items`;
    for (let i = 0; i < want.length; i++) {
      const d = firstDifference(want[i], got[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (isObject(want) && isObject(got)) {
    for (const key of Object.keys(want)) {
      if (!(key in got)) return `at ${path}: missing key ${JSON.stringify(key)}`;
      const d = firstDifference(want[key], got[key], `${path}.${key}`);
      if (d) return d;
    }
    const extra = Object.keys(got).find((k) => !(k in want));
    return extra !== undefined ? `at ${path}: unexpected key ${JSON.stringify(extra)}` : null;
  }
  return `at ${path}: expected ${short(JSON.stringify(want))}, got ${short(JSON.stringify(got))}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Numbers written in an answer: `35,401,058`, `-3.5`, `1e6`. */
export function numbersIn(text: string): number[] {
  const found: number[] = [];
  for (const m of text.matchAll(/[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+/g)) {
    const n = Number(m[0].replace(/,/g, ""));
    if (Number.isFinite(n)) found.push(n);
  }
  return found;
}

function scoreNumeric(output: string, expected: ExpectedOutput, tolerance: number): ExpectationVerdict {
  const want = expectedNumber(expected)!;
  const numbers = numbersIn(output);
  const within = (n: number): boolean => Math.abs(n - want) <= tolerance + 1e-9 * Math.max(1, Math.abs(want));
  const hit = numbers.find(within);
  const bound = tolerance > 0 ? `${want} \u00b1 ${tolerance}` : String(want);
  if (hit !== undefined) return { passed: true, reason: `the answer states ${hit} (expected ${bound})` };
  if (numbers.length === 0) return { passed: false, reason: `the answer holds no number (expected ${bound})` };
  return { passed: false, reason: `no number in the answer is ${tolerance > 0 ? "within" : "equal to"} ${bound} (found: ${numbers.slice(0, 8).join(", ")}${numbers.length > 8 ? ", ..." : ""})` };
}

function asText(expected: ExpectedOutput): string {
  return typeof expected === "string" ? expected : contentAsString(expected);
}

function fold(text: string, scoring: ResolvedScoring): string {
  return scoring.ignoreCase ? text.toLowerCase() : text;
}

function quote(text: string): string {
  return JSON.stringify(short(text));
}

function short(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
