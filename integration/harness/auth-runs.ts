/**
 * What integration/security-auth*.test.ts do for each way to authenticate: a private nats-server
 * started from a generated configuration, two runs (the coordinator configured by flags and the
 * worker by environment variables, then the other way round), a coordinator with wrong
 * credentials and a worker with none, all at once; then the exit codes, the one-line refusals,
 * and a look for the secrets in every byte the processes wrote.
 */
import assert from "node:assert/strict";
import { startNatsServer } from "./nats-server.ts";
import { evalfleet, exitOf, fixture, type Finished, type Proc } from "./processes.ts";

const BASIC = fixture("basic-suite.ts");

/**
 * Every NATS variable set (empty unless given), so nothing from the developer's or CI's
 * environment reaches a child: a flags run is configured by its flags alone.
 */
export const NO_NATS_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  ["NATS_URL", "NATS_TOKEN", "NATS_USER", "NATS_PASSWORD", "NATS_NKEY", "NATS_CREDS", "NATS_CA", "NATS_CERT", "NATS_KEY", "NATS_INBOX_PREFIX"].map((n) => [n, ""]),
);

/** One way to authenticate, as the tests drive it. */
export interface AuthMethod {
  /** Server configuration (authorization, operator mode or TLS). */
  config: string;
  /** The same credentials as flags and as environment variables. */
  flags: string[];
  env: Record<string, string>;
  /** Credentials the server must refuse, as flags, and what the error line says about them. */
  wrongFlags: string[];
  wrongSays: RegExp;
  /**
   * What a worker with no credentials (for TLS: no client certificate) is given and told; left out
   * where it would repeat another method's check (every password-like method refuses "nothing" alike).
   */
  none?: { env: Record<string, string>; says: RegExp };
  /** Values no byte of output may contain. */
  secrets: string[];
}

/** The one line a refused client prints: exit 3, nothing on stdout, no stack trace, no second line of prose. */
export function assertOneLineRefusal(r: Finished, says: RegExp, who: string): void {
  assert.equal(r.code, 3, `${who} exits 3: ${r.stdout}${r.stderr}`);
  assert.equal(r.stdout, "", `${who} prints nothing on stdout`);
  const prose = r.stderr.split("\n").filter((l) => l.length > 0 && !l.startsWith("{"));
  assert.equal(prose.length, 1, `${who}: one line, got:\n${r.stderr}`);
  assert.match(prose[0]!, /^error: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: /);
  assert.match(prose[0]!, says, who);
}

/** No process wrote any of the secrets, anywhere. */
export function assertNoSecrets(procs: readonly Proc[], secrets: readonly string[]): void {
  for (const p of procs) {
    for (const s of secrets) {
      assert.ok(!p.stdout.includes(s) && !p.stderr.includes(s), `a secret (${s.slice(0, 4)}...) appears in the output of pid ${p.pid}`);
    }
  }
}

/** Runs everything described above against a new server, then stops it. */
export async function exerciseAuthMethod(name: string, m: AuthMethod): Promise<void> {
  const nats = await startNatsServer({ config: m.config });
  try {
    const url = nats.url;
    const byEnv = { ...NO_NATS_ENV, ...m.env, NATS_URL: url };
    const byFlags = ["--nats", url, ...m.flags];
    const runs = [
      { runId: `${name}-coordinator-flags`, coordinator: { args: byFlags, env: NO_NATS_ENV }, worker: { args: [] as string[], env: byEnv } },
      { runId: `${name}-coordinator-env`, coordinator: { args: [] as string[], env: byEnv }, worker: { args: byFlags, env: NO_NATS_ENV } },
    ].map((r) => ({
      ...r,
      // Debug logs: the more a process says, the more chances to leak, and none may.
      workerProc: evalfleet(["worker", BASIC, "--run", r.runId, "--threads", "1", "--log-level", "debug", ...r.worker.args], r.worker.env),
      coordinatorProc: evalfleet(["coordinator", "run", BASIC, "--run-id", r.runId, "--name", "alpha", "--name", "beta", ...r.coordinator.args], r.coordinator.env),
    }));
    const wrong = evalfleet(["coordinator", "run", BASIC, "--run-id", `${name}-wrong`, "--nats", url, ...m.wrongFlags], NO_NATS_ENV);
    // A worker waits for an unreachable broker, but not for credentials the broker refused.
    const none = m.none ? evalfleet(["worker", BASIC, "--run", `${name}-none`, "--log-level", "warn"], { ...NO_NATS_ENV, ...m.none.env, NATS_URL: url }) : null;

    for (const r of runs) {
      const c = await exitOf(r.coordinatorProc, `${r.runId}: the coordinator`, 90_000);
      assert.equal(c.code, 0, `${r.runId}: ${c.stdout}${c.stderr}`);
      assert.match(c.stdout, new RegExp(`^run id: ${r.runId}$`, "m"));
      assert.match(c.stdout, /^2\/2 passed/m);
      assert.match(c.stdout, new RegExp(`worker ${r.workerProc.label} joined`), "the worker authenticated and joined");
      const w = await exitOf(r.workerProc, `${r.runId}: the worker`, 30_000);
      assert.equal(w.code, 0, `${r.runId}: ${w.stderr}`);
    }
    assertOneLineRefusal(await exitOf(wrong, `${name}: the coordinator with wrong credentials`, 30_000), m.wrongSays, `${name}: wrong credentials`);
    if (none) assertOneLineRefusal(await exitOf(none, `${name}: the worker without credentials`, 30_000), m.none!.says, `${name}: no credentials`);
    assertNoSecrets([...runs.flatMap((r) => [r.workerProc, r.coordinatorProc]), wrong, ...(none ? [none] : [])], m.secrets);
  } finally {
    await nats.stop();
  }
}

/** What a client without credentials is told by a server that requires some. */
export const REFUSED_WITHOUT_CREDENTIALS = /Authorization Violation: the server refused a client without credentials: pass --nats-token, --nats-user\/--nats-password, --nats-nkey or --nats-creds/;
