import type { SuiteResult } from "../shared/result.ts";

/**
 * Exit codes. Pure. 2 wins over 3, 3 over 1.
 */
export const ExitCode = {
  /** Every selected case passed. */
  Ok: 0,
  /** A case failed, or a report could not be written. */
  Failed: 1,
  /** No case matched the selection, or a usage error. */
  Usage: 2,
  /** The run is incomplete for reasons outside the agents (cancelled, cases skipped or lost). */
  Incomplete: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * The exit code of a finished run. `reportFailed`: a JSON or JUnit report could not be written;
 * `incomplete`: the run could not finish for reasons outside the agents (broker lost, cases lost,
 * no compatible worker).
 */
export function exitCodeFor(suite: SuiteResult, options: { reportFailed?: boolean; incomplete?: boolean } = {}): ExitCode {
  if (suite.total === 0) return ExitCode.Usage;
  if (suite.cancelled || suite.skipped > 0 || options.incomplete) return ExitCode.Incomplete;
  if (suite.failed > 0 || options.reportFailed) return ExitCode.Failed;
  return ExitCode.Ok;
}
