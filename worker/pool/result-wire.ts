import type { CaseResult } from "../../shared/result/result.ts";
import type { CaseResultData } from "../../shared/wire/result-data.ts";
import { toPlainData } from "../runtime/evidence.ts";

// Its own module so that the main thread can use it without loading thread.ts, whose top level
// only makes sense inside a pool thread.

/**
 * Serialises a result for the trip to the main thread or onto NATS: its data as is (the shape is
 * the wire's, shared/wire/result-data.ts), except what may hold values that neither clone nor
 * serialise: the raw response is reduced to plain data, or left out with `response: false`
 * (default true) where nobody reads it, and the score (a frozen `Score`) becomes plain data with
 * its `detail` reduced too.
 */
export function resultToWire(result: CaseResult, { response = true }: { response?: boolean } = {}): CaseResultData {
  const data = result.toData();
  return {
    ...data,
    response: response && data.response ? toPlainData(data.response) : null,
    score: data.score ? { value: data.score.value, passed: data.score.passed, reason: data.score.reason ?? null, detail: toPlainData(data.score.detail ?? null) } : null,
  };
}
