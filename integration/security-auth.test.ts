// Authentication end to end, part 1 (part 2, .creds and TLS: security-auth-creds-tls.test.ts): a
// token, a user and password, and an NKey generated in the test, each on its own private
// nats-server started from a generated configuration. For each, a coordinator and a worker complete
// a run twice through the real CLI, once with the coordinator configured by flags and the worker by
// environment variables and once the other way round; a coordinator with wrong credentials, and
// (once: every password-like method refuses "nothing" alike) a worker with none, get one clear line
// and exit 3; no byte of any output holds a secret (integration/harness/auth-runs.ts).
import { after, describe, test } from "node:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exerciseAuthMethod, REFUSED_WITHOUT_CREDENTIALS } from "./harness/auth-runs.ts";
import { makeNkeyUser, randomSecret } from "./harness/credentials.ts";
import { killLeftovers } from "./harness/processes.ts";

describe("security: token, user/password and NKey authentication through the real CLI", () => {
  after(killLeftovers);

  test("token: --nats-token and NATS_TOKEN", async () => {
    const token = randomSecret("tok-");
    const wrongToken = randomSecret("tok-");
    await exerciseAuthMethod("token", {
      config: `authorization { token: "${token}" }`,
      flags: ["--nats-token", token],
      env: { NATS_TOKEN: token },
      wrongFlags: ["--nats-token", wrongToken],
      wrongSays: /Authorization Violation: the server refused the given token \(--nats-token, NATS_TOKEN\)$/,
      none: { env: {}, says: REFUSED_WITHOUT_CREDENTIALS },
      secrets: [token, wrongToken],
    });
  });

  test("user and password: --nats-user/--nats-password and NATS_USER/NATS_PASSWORD", async () => {
    const password = randomSecret("pw-");
    const wrongPassword = randomSecret("pw-");
    await exerciseAuthMethod("userpass", {
      config: `authorization { users: [ { user: "evalfleet", password: "${password}" } ] }`,
      flags: ["--nats-user", "evalfleet", "--nats-password", password],
      env: { NATS_USER: "evalfleet", NATS_PASSWORD: password },
      wrongFlags: ["--nats-user", "evalfleet", "--nats-password", wrongPassword],
      wrongSays: /Authorization Violation: the server refused user 'evalfleet' with the given password/,
      secrets: [password, wrongPassword],
    });
  });

  test("NKey: --nats-nkey FILE and NATS_NKEY, keys generated in the test", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-nkey-"));
    const user = makeNkeyUser(dir, "evalfleet");
    const stranger = makeNkeyUser(dir, "stranger");
    await exerciseAuthMethod("nkey", {
      config: `authorization { users: [ { nkey: ${user.publicKey} } ] }`,
      flags: ["--nats-nkey", user.seedFile],
      env: { NATS_NKEY: user.seedFile },
      wrongFlags: ["--nats-nkey", stranger.seedFile],
      wrongSays: new RegExp(`Authorization Violation: the server refused the NKey seed in ${stranger.seedFile} \\(--nats-nkey, NATS_NKEY\\)$`),
      secrets: [user.seed, stranger.seed],
    });
  });
});
