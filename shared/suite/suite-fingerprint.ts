// runs in: both
import { expectationsFingerprint } from "../case/tool-call-matchers.ts";
import { createHash } from "node:crypto";
import type { Case } from "../case/case.ts";
import { isDatasetCase } from "../datasets/dataset-case.ts";

/**
 * The suite's fingerprint: what a worker compares before it runs a case of a run, so that code,
 * which never travels, is the same on every machine.
 */

/** Characters of fingerprint lines gathered before they are hashed (about 64 KB). */
const FINGERPRINT_CHUNK_CHARS = 65_536;

/**
 * sha256 (hex) of the ordered case names and their serialisable settings, and of the datasets'
 * bytes: a row edited on one machine makes its workers refuse the run.
 */
export function suiteFingerprint(cases: readonly Case[], datasets: readonly { ref: string; digest: string }[] = []): string {
  const hash = createHash("sha256");
  // The lines are hashed in chunks: a digest of the concatenation is the same, and one update per
  // line was a fifth of the cost at 200,000 cases (every process that loads the suite pays it).
  let chunk = "";
  const line = (text: string): void => {
    chunk += text + "\n";
    if (chunk.length >= FINGERPRINT_CHUNK_CHARS) {
      hash.update(chunk);
      chunk = "";
    }
  };
  for (const c of cases) {
    if (isDatasetCase(c)) {
      // Only where the row is: the dataset's digest below covers what it holds.
      line(JSON.stringify(["row", ...c.fingerprintKey()]));
      continue;
    }
    // The data-driven checks are hashed only when set, so older suites keep their fingerprints.
    const expectedOutput = c.expectedOutput ?? null;
    const extra: unknown[] =
      c.id || expectedOutput !== null || c.expectedAgentTools || c.expectedKnowledgeSources || c.evalFunctions
        ? [c.id ?? null, expectedOutput, expectedOutput !== null ? c.outputScoring : null, c.expectedAgentTools ?? null, c.expectedKnowledgeSources ?? null, ...(c.evalFunctions ? [c.evalFunctions] : [])]
        : [];
    // The hooks' bounds likewise, only when a case sets them.
    if (c.setupTimeoutSeconds !== null || c.teardownTimeoutSeconds !== null) extra.push("hooks", c.setupTimeoutSeconds, c.teardownTimeoutSeconds);
    // The trajectory check's options likewise (a predicate is hashed as a placeholder: tool-call-matchers.ts).
    if ((c.toolCallOrder ?? "any") !== "any" || c.forbiddenToolCalls || (c.maxToolCalls ?? null) !== null || c.toolCallsMustSucceed) {
      extra.push("trajectory", c.toolCallOrder, expectationsFingerprint(c.forbiddenToolCalls ?? null), c.maxToolCalls ?? null, Boolean(c.toolCallsMustSucceed));
    }
    // The pass rule of its trials is part of what the case checks; hashed only when set, as above.
    if ((c.passRate ?? null) !== null) extra.push("passRate", c.passRate);
    line(
      JSON.stringify([
        c.name,
        c.label,
        c.componentId,
        c.tags,
        c.timeoutSeconds,
        c.criteria,
        c.judgeMode,
        c.judgeThreshold,
        expectationsFingerprint(c.expectedToolCalls),
        c.allowAdditionalToolCalls,
        c.scorer !== null,
        c.input,
        ...extra,
      ]),
    );
  }
  hash.update(chunk);
  for (const d of datasets) hash.update(`dataset ${d.ref} ${d.digest}\n`);
  return hash.digest("hex");
}
