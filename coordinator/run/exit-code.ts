import type { SuiteResult } from "../../shared/result/result.ts";

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
 * The exit code of a finished run. `infraErrorsIncomplete` (`--infra-errors-incomplete`): a run
 * whose failed cases all failed for the infrastructure's sake (`error_kind: "infra"`) exits 3, not 1
 * (unless a pass threshold is met: then 0). `reportFailed`: a JSON or JUnit report could not be written;
 * `incomplete`: the run could not finish for reasons outside the agents (broker lost, cases lost,
 * no compatible worker). With a pass threshold on the suite result, a run whose pass rate meets
 * it exits 0 even with failed cases, and 1 below it; 2 and 3 keep their meaning and precedence.
 */
export function exitCodeFor(suite: SuiteResult, options: { reportFailed?: boolean; incomplete?: boolean; infraErrorsIncomplete?: boolean } = {}): ExitCode {
  if (suite.total === 0) return ExitCode.Usage;
  if (suite.cancelled || suite.skipped > 0 || options.incomplete) return ExitCode.Incomplete;
  // --infra-errors-incomplete: a provider outage is not a regression. Any other failure still exits 1.
  if (options.infraErrorsIncomplete && suite.thresholdMet !== true && suite.onlyInfraFailures) return ExitCode.Incomplete;
  if (options.reportFailed) return ExitCode.Failed;
  if (suite.thresholdMet !== null) return suite.thresholdMet ? ExitCode.Ok : ExitCode.Failed;
  if (suite.failed > 0) return ExitCode.Failed;
  return ExitCode.Ok;
}
