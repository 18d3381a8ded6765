/**
 * The fields a dataset row may have (Exulu's test case fields, snake_case, plus evalfleet's own),
 * and the "did you mean" hint for a near miss. Pure; no I/O.
 */

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
  "allow_additional_tools",
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

/** ` (did you mean expected_tools?)` for a near miss of a known field, else "". */
export function suggestion(key: string): string {
  let best: string | null = null;
  let bestDistance = Infinity;
  const k = key.toLowerCase().replace(/[-\s]/g, "_");
  for (const f of ROW_FIELDS) {
    // Exulu's camelCase fields (createdAt, RBAC) are compared without case too: `rbac` means RBAC.
    const d = f.toLowerCase() === k ? 0 : editDistance(k, f.toLowerCase());
    if (d < bestDistance) {
      best = f;
      bestDistance = d;
    }
  }
  // camelCase spellings (expectedTools) and plural slips (expected_tool) are the usual near misses.
  const snake = key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  if (ROW_FIELD_SET.has(snake) && snake !== key) return ` (did you mean ${snake}?)`;
  return best && bestDistance <= Math.max(2, Math.floor(best.length / 4)) ? ` (did you mean ${best}?)` : "";
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
