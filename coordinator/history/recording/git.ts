import { execFile } from "node:child_process";
import type { Environment } from "../../../shared/environment.ts";

/**
 * The git commit and branch a run is recorded with: from the CI's environment when it says
 * (a CI checkout is often a detached HEAD, where git itself knows no branch), else from git in
 * the suite's folder, else none.
 */

/** A commit and a branch; either may be unknown. */
export interface GitInfo {
  commit: string | null;
  branch: string | null;
}

/** Pairs of (commit, branch) variables, most specific first. `EVALFLEET_GIT_*` wins over every CI's own. */
const ENV_PAIRS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ["EVALFLEET_GIT_COMMIT", ["EVALFLEET_GIT_BRANCH"]],
  ["GITHUB_SHA", ["GITHUB_HEAD_REF", "GITHUB_REF_NAME"]],
  ["CI_COMMIT_SHA", ["CI_COMMIT_BRANCH", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_COMMIT_REF_NAME"]],
  ["BUILDKITE_COMMIT", ["BUILDKITE_BRANCH"]],
  ["CIRCLE_SHA1", ["CIRCLE_BRANCH"]],
  ["GIT_COMMIT", ["GIT_BRANCH", "BRANCH_NAME"]],
];

/** What the environment says, without running git. Pure. */
export function gitFromEnvironment(env: Environment): GitInfo {
  let commit: string | null = null;
  let branch: string | null = null;
  for (const [commitVar, branchVars] of ENV_PAIRS) {
    commit ??= env[commitVar]?.trim() || null;
    for (const b of branchVars) branch ??= env[b]?.trim() || null;
  }
  // Jenkins says `origin/main`.
  if (branch?.startsWith("origin/")) branch = branch.slice("origin/".length);
  return { commit, branch };
}

/** The commit and branch of a run started in `cwd`: environment first, then git (bounded, 2 s). */
export async function gitInfo(cwd: string, env: Environment): Promise<GitInfo> {
  const fromEnv = gitFromEnvironment(env);
  if (fromEnv.commit && fromEnv.branch) return fromEnv;
  const [commit, branch] = await Promise.all([
    fromEnv.commit ? Promise.resolve(fromEnv.commit) : git(cwd, ["rev-parse", "HEAD"]),
    fromEnv.branch ? Promise.resolve(fromEnv.branch) : git(cwd, ["rev-parse", "--abbrev-ref", "HEAD"]),
  ]);
  // A detached HEAD has no branch.
  return { commit, branch: branch === "HEAD" ? null : branch };
}

function git(cwd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, timeout: 2_000, windowsHide: true }, (err, stdout) => resolve(err ? null : stdout.trim() || null));
  });
}
