// runs in: both
/**
 * The fields a dataset row may have (Exulu's test case fields, snake_case, plus evalfleet's own),
 * and the "did you mean" hint for a near miss. Pure; no I/O.
 */
import { didYouMean } from "../near-miss.ts";

/** Every field a row may have, in the order the documentation lists them; Exulu's own bookkeeping fields last. */
export const ROW_FIELDS = [
  "id",
  "name",
  "description",
  "agent",
  "team",
  "inputs",
  "expected_output",
  "scoring_method",
  "tolerance",
  "expected_tools",
  "expected_tool_calls",
  "allow_additional_tools",
  "tool_call_order",
  "forbidden_tools",
  "max_tool_calls",
  "tool_calls_must_succeed",
  "expected_agent_tools",
  "expected_knowledge_sources",
  "criteria",
  "judge_mode",
  "judge_threshold",
  "eval_functions",
  "tags",
  "timeout_seconds",
  "metadata",
  "createdAt",
  "updatedAt",
  "RBAC",
] as const;
/** A field of {@link ROW_FIELDS}. */
export type RowField = (typeof ROW_FIELDS)[number];
/** {@link ROW_FIELDS} as a set. */
export const ROW_FIELD_SET: ReadonlySet<string> = new Set(ROW_FIELDS);

/** ` (did you mean expected_tools?)` for a near miss of a known field, else "" (shared/near-miss.ts). */
export function suggestion(key: string): string {
  return didYouMean(key, ROW_FIELDS);
}
