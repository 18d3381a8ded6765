import type { CaseResult } from "../shared/result.ts";
import type { CaseResultWire } from "../shared/wire.ts";
import { toPlainData } from "./evidence.ts";

// Its own module so that the main thread can use it without loading thread.ts, whose top level
// only makes sense inside a pool thread.

/** Serialises a result for the trip to the main thread (the raw response is reduced to plain data). */
export function resultToWire(result: CaseResult): CaseResultWire {
  const data = result.toData();
  return {
    ...data,
    tags: [...data.tags],
    toolsCalled: [...data.toolsCalled],
    response: data.response ? toPlainData(data.response) : null,
    score: data.score ? { value: data.score.value, passed: data.score.passed, reason: data.score.reason ?? null, detail: toPlainData(data.score.detail ?? null) } : null,
  };
}
