import type { CaseResult } from "../shared/result.ts";
import type { CaseResultWire } from "../shared/wire.ts";
import { toPlainData } from "./evidence.ts";

// Its own module so that the main thread can use it without loading thread.ts, whose top level
// only makes sense inside a pool thread.

/**
 * Serialises a result for the trip to the main thread or onto NATS: the raw response is reduced to
 * plain data, or left out with `response: false` (default true) where nobody reads it.
 */
export function resultToWire(result: CaseResult, { response = true }: { response?: boolean } = {}): CaseResultWire {
  const data = result.toData();
  return {
    ...data,
    tags: [...data.tags],
    toolsCalled: [...data.toolsCalled],
    response: response && data.response ? toPlainData(data.response) : null,
    score: data.score ? { value: data.score.value, passed: data.score.passed, reason: data.score.reason ?? null, detail: toPlainData(data.score.detail ?? null) } : null,
  };
}
