import { CaseResult, SuiteResult } from "../../index.ts";

/** A result whose only verdict is an exact expected_output check that `passed`, with any field overridden. */
export function expectationResult(name: string, passed: boolean, extra: Partial<ConstructorParameters<typeof CaseResult>[0]> = {}): CaseResult {
  return new CaseResult({ name, expectations: { expectedOutput: { method: "exact", passed, reason: passed ? "equal" : "differs" } }, ...extra });
}

/** A suite of `passed` passing then `failed` failing {@link expectationResult}s, with the given metadata. */
export const thresholdSuite = (passed: number, failed: number, meta: ConstructorParameters<typeof SuiteResult>[1] = {}) =>
  new SuiteResult([...Array.from({ length: passed }, (_, i) => expectationResult(`p${i}`, true)), ...Array.from({ length: failed }, (_, i) => expectationResult(`f${i}`, false))], meta);
