import { EvalfleetError, ErrorCode } from "../shared/errors.ts";
import { assertRunId } from "../shared/subjects.ts";

/**
 * The environment a container entry command reads (the manifests in deploy/kubernetes set it):
 * which run a Job serves, and the flags' environment fallbacks. Pure: the environment is passed in.
 *
 * A nightly run is two CronJobs on the same schedule, one for the coordinator and one for the
 * workers. A CronJob names each Job it creates `<cronjob name>-<scheduled time in minutes since
 * the epoch>`, so the Jobs of one night end in the same number, and that number is the shared part
 * of the run id: both pods get their Job's name from the downward API (`EVALFLEET_JOB_NAME`) and
 * derive `<EVALFLEET_RUN_PREFIX>-<number>` without talking to each other or to the Kubernetes API.
 */

/** The run id's prefix when `EVALFLEET_RUN_PREFIX` is unset. */
export const DEFAULT_RUN_PREFIX = "job";

/**
 * The run id a process should use from its environment, or null when none is set:
 * `EVALFLEET_RUN_ID` as given; else, when `EVALFLEET_JOB_NAME` is set, `<EVALFLEET_RUN_PREFIX>-<N>`
 * where N is the Job name's trailing number (prefix default {@link DEFAULT_RUN_PREFIX}).
 * Throws a usage {@link EvalfleetError} for a Job name without a trailing number or an invalid id.
 */
export function runIdFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | null {
  const explicit = env.EVALFLEET_RUN_ID?.trim();
  if (explicit) return assertRunId(explicit);
  const job = env.EVALFLEET_JOB_NAME?.trim();
  if (!job) return null;
  const m = /-(\d+)$/.exec(job);
  if (!m) {
    throw new EvalfleetError(
      ErrorCode.Usage,
      `EVALFLEET_JOB_NAME '${job}' does not end in -<number>: a CronJob names its Jobs <cronjob>-<scheduled minute>; name a manual Job like that (e.g. <name>-$(date +%s)) or set EVALFLEET_RUN_ID`,
      { field: "EVALFLEET_JOB_NAME", value: job },
    );
  }
  const prefix = env.EVALFLEET_RUN_PREFIX?.trim() || DEFAULT_RUN_PREFIX;
  return assertRunId(`${prefix}-${m[1]}`);
}

/**
 * A boolean from the environment: `1`, `true`, `yes`, `on` are true; `0`, `false`, `no`, `off` and
 * unset are false (case-insensitive). Anything else is a usage error naming the variable.
 */
export function booleanFromEnvironment(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return false;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new EvalfleetError(ErrorCode.Usage, `${name} must be true or false, got '${env[name]}'`, { field: name });
}

/** Exit code of a coordinator that left its run on SIGTERM (128 + 15, as a shell reports it). */
export const LEFT_ON_SIGTERM_EXIT_CODE = 143;

/**
 * `--on-sigterm leave`: on SIGTERM the coordinator exits at once with
 * {@link LEFT_ON_SIGTERM_EXIT_CODE} and leaves the run as it is on NATS (no cancel, no report), so
 * a replacement started with `--resume-existing` finishes it; workers keep working meanwhile.
 * For a coordinator in a Kubernetes Job, whose pod may be evicted. The listener goes first, ahead
 * of the run's own SIGTERM handling (cancel). Returns a function that removes it.
 */
export function leaveRunOnSigterm(say: (line: string) => void, runId: () => string | null): () => void {
  const onSigterm = (): void => {
    const id = runId();
    say(`SIGTERM: leaving ${id ? `run ${id}` : "the run"} as it is for a replacement coordinator to resume (--on-sigterm leave)`);
    process.exit(LEFT_ON_SIGTERM_EXIT_CODE);
  };
  process.prependListener("SIGTERM", onSigterm);
  return () => process.off("SIGTERM", onSigterm);
}
