// Authentication end to end, part 2 (part 1: security-auth.test.ts): a `.creds` file in operator
// mode (operator, account and user JWTs generated in the test with @nats-io/jwt, the account
// preloaded into a memory resolver), and TLS with a test CA and client certificates made with
// openssl, on a server that verifies clients (`verify: true`). Same checks as part 1
// (integration/harness/auth-runs.ts), plus a client that does not trust the server's certificate.
import { after, describe, test } from "node:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertOneLineRefusal, exerciseAuthMethod, NO_NATS_ENV } from "./harness/auth-runs.ts";
import { makeOperatorSetup, makeTlsFiles } from "./harness/credentials.ts";
import { startNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers } from "./harness/processes.ts";

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-sec-${what}-`));

describe("security: .creds (operator mode) and TLS client certificates through the real CLI", () => {
  after(killLeftovers);

  test(".creds: --nats-creds FILE and NATS_CREDS, operator mode with JWTs generated in the test", async () => {
    const op = await makeOperatorSetup(tmp("creds"));
    await exerciseAuthMethod("creds", {
      config: op.serverConfig,
      flags: ["--nats-creds", op.credsFile],
      env: { NATS_CREDS: op.credsFile },
      // Well-formed, but its account was never issued by this server's operator.
      wrongFlags: ["--nats-creds", op.foreignCredsFile],
      wrongSays: new RegExp(`Authorization Violation: the server refused the credentials in ${op.foreignCredsFile} \\(--nats-creds, NATS_CREDS\\)$`),
      secrets: [op.userSeed, op.foreignUserSeed],
    });
  });

  test("TLS with client certificates: --nats-ca/--nats-cert/--nats-key and NATS_CA/NATS_CERT/NATS_KEY, a test CA made with openssl", async () => {
    const t = makeTlsFiles(tmp("tls"));
    const keyBody = (file: string): string => readFileSync(file, "utf8").split("\n")[1]!;
    const clientVerified = /the TLS handshake failed: the server answered with the alert '[a-z ]+' \(the server verifies client certificates: --nats-cert\/--nats-key must be a certificate signed by a CA it trusts, and its key\)$/;
    // A client that does not trust the server's certificate (no --nats-ca), started alongside.
    const untrusted = startNatsServer({ config: t.serverConfig }).then(async (nats) => {
      try {
        const args = ["coordinator", "run", fixture("basic-suite.ts"), "--run-id", "untrusted", "--nats", nats.url, "--nats-cert", t.clientCertFile, "--nats-key", t.clientKeyFile];
        return await exitOf(evalfleet(args, NO_NATS_ENV), "the coordinator without the CA", 30_000);
      } finally {
        await nats.stop();
      }
    });
    await exerciseAuthMethod("tls", {
      config: t.serverConfig,
      flags: ["--nats-ca", t.caFile, "--nats-cert", t.clientCertFile, "--nats-key", t.clientKeyFile],
      env: { NATS_CA: t.caFile, NATS_CERT: t.clientCertFile, NATS_KEY: t.clientKeyFile },
      // A certificate from a CA the server does not trust.
      wrongFlags: ["--nats-ca", t.caFile, "--nats-cert", t.rogueCertFile, "--nats-key", t.rogueKeyFile],
      wrongSays: clientVerified,
      // The CA, but no client certificate.
      none: { env: { NATS_CA: t.caFile }, says: clientVerified },
      secrets: [keyBody(t.clientKeyFile), keyBody(t.rogueKeyFile)],
    });
    assertOneLineRefusal(await untrusted, /the TLS handshake failed: .*certificate.* \(the server's certificate is not trusted: --nats-ca must name the CA that signed it\)$/, "no --nats-ca");
  });
});
