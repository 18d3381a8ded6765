import { createHash } from "node:crypto";
import type { Case } from "../../../shared/case/case.ts";

/**
 * The fingerprint of a case's checks: what grades it, not what it runs. Two results of a case
 * with the same fingerprint were graded the same way, so a change between them is the agent's;
 * with different fingerprints the bar moved, and `compare` and `--fail-on-regression` leave the
 * case out (`checks changed: not compared`). Pure (a hash of the definition); no I/O.
 *
 * What goes in: the judge's criteria, mode, threshold and model; the expected output and its
 * scoring method; every tool expectation (expected, forbidden, order, extra calls allowed, most
 * calls, calls must succeed); the expected agent tools and knowledge sources; the scorer's
 * identity (its `id` or `name`, else its class, and the source of its `score`) and the
 * `expected` value it is given; the names of the evaluation functions. What stays out: the input,
 * the agent, tags, timeouts, setup and teardown: changing them changes the run, not the grading.
 */

/** The fingerprint's length in hex digits (64 bits of SHA-256: collisions are not a concern at suite sizes). */
const FINGERPRINT_HEX = 16;

/** A judge model or a scorer as a stable name: its `id`, else `name`, else its class's name. */
function identity(x: unknown): string | null {
  if (x === null || x === undefined) return null;
  const o = x as { id?: unknown; name?: unknown; constructor?: { name?: unknown } };
  if (typeof o.id === "string" && o.id) return o.id;
  if (typeof o.name === "string" && o.name) return o.name;
  const cls = o.constructor?.name;
  return typeof cls === "string" && cls !== "Object" ? cls : "anonymous";
}

/** JSON with object keys sorted (so key order in a definition does not change the fingerprint); functions by their source. */
function canonical(value: unknown): unknown {
  if (typeof value === "function") return `fn:${value.toString()}`;
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof RegExp) return `re:${value.toString()}`;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value === undefined ? null : value;
}

/**
 * The fingerprint of `c`'s checks (16 hex digits). `runJudgeModel` is the run's judge model name
 * (the suite's, or the default judge's), which grades a case that names none; default null.
 */
export function checksFingerprint(c: Case, runJudgeModel: string | null = null): string {
  const judged = c.criteria !== null;
  const scorer = c.scorer as (Record<string, unknown> & { score?: unknown }) | null;
  const parts = {
    criteria: c.criteria,
    judgeMode: judged ? c.judgeMode : null,
    judgeThreshold: judged ? c.judgeThreshold : null,
    judgeModel: judged ? (identity(c.judgeModel) ?? runJudgeModel) : null,
    expectedOutput: c.expectedOutput,
    outputScoring: c.expectedOutput !== null ? c.outputScoring : null,
    expectedToolCalls: c.expectedToolCalls,
    allowAdditionalToolCalls: c.expectedToolCalls ? c.allowAdditionalToolCalls : null,
    toolCallOrder: c.expectedToolCalls ? c.toolCallOrder : null,
    forbiddenToolCalls: c.forbiddenToolCalls,
    maxToolCalls: c.maxToolCalls,
    toolCallsMustSucceed: c.toolCallsMustSucceed,
    expectedAgentTools: c.expectedAgentTools,
    expectedKnowledgeSources: c.expectedKnowledgeSources,
    scorer: scorer ? { identity: identity(scorer), score: typeof scorer.score === "function" ? scorer.score.toString() : null, expected: c.expected } : null,
    evalFunctions: c.evalFunctions,
  };
  return createHash("sha256").update(JSON.stringify(canonical(parts))).digest("hex").slice(0, FINGERPRINT_HEX);
}
