/**
 * Credentials generated inside a test, never checked in: NKey users, operator-mode JWTs and
 * `.creds` files (@nats-io/nkeys, @nats-io/jwt), and a TLS CA with server and client certificates
 * (/usr/bin/openssl). Each helper writes into a folder the test owns and returns the paths, the
 * secret values (so the test can look for them in every byte of output) and a server
 * configuration fragment for {@link startNatsServer}'s `config` option.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAccount, createOperator, createUser, encodeAccount, encodeOperator, encodeUser, fmtCreds } from "@nats-io/jwt";
import { createUser as createUserKey } from "@nats-io/nkeys";

/** A random secret of `bytes` random bytes in hex (a token, a password). */
export function randomSecret(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString("hex")}`;
}

/** An NKey user: its public key (for the server) and its seed, written to `<dir>/<name>.nk` (for the client). */
export interface NkeyUser {
  publicKey: string;
  seed: string;
  seedFile: string;
}

/** Creates an NKey user and writes its seed file (mode 0600, as a real one would be). */
export function makeNkeyUser(dir: string, name: string): NkeyUser {
  const kp = createUserKey();
  const seed = new TextDecoder().decode(kp.getSeed());
  const seedFile = join(dir, `${name}.nk`);
  writeFileSync(seedFile, `${seed}\n`, { mode: 0o600 });
  return { publicKey: kp.getPublicKey(), seed, seedFile };
}

/** Operator mode: the server configuration, a `.creds` file for a user of a JetStream-enabled account, and the secrets in it. */
export interface OperatorSetup {
  /** `operator`, `resolver: MEMORY` and `resolver_preload` with the account's JWT. */
  serverConfig: string;
  credsFile: string;
  /** The user's seed: the secret part of the `.creds` file. */
  userSeed: string;
  /** A well-formed `.creds` file the server must refuse: its user is signed by an account the operator never issued. */
  foreignCredsFile: string;
  foreignUserSeed: string;
}

/**
 * An operator, an account it signs (JetStream enabled, no limits) and a user the account signs,
 * as `nsc` would make them. The memory resolver is preloaded with the account, so the server needs
 * nothing else; the foreign user comes from a second operator and account the server does not know.
 */
export async function makeOperatorSetup(dir: string): Promise<OperatorSetup> {
  const operator = createOperator();
  const account = createAccount();
  const operatorJwt = await encodeOperator("evalfleet-test-operator", operator);
  // Every limit spelled out: a partial limits object leaves the others at 0 (no connection allowed).
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const jetstream = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
  const accountJwt = await encodeAccount("EVALFLEET", account, { limits: { ...unlimited, ...jetstream } }, { signer: operator });
  const creds = async (acct: ReturnType<typeof createAccount>, file: string): Promise<string> => {
    const user = createUser();
    const jwt = await encodeUser("evalfleet", user, acct);
    writeFileSync(file, fmtCreds(jwt, user), { mode: 0o600 });
    return new TextDecoder().decode(user.getSeed());
  };
  const credsFile = join(dir, "evalfleet.creds");
  const userSeed = await creds(account, credsFile);
  // Signed by an account whose JWT the server never saw (issued by another operator).
  const stranger = createAccount();
  const foreignCredsFile = join(dir, "foreign.creds");
  const foreignUserSeed = await creds(stranger, foreignCredsFile);
  // JetStream in operator mode needs a system account (nats-server 2.9 refuses to start without one).
  const system = createAccount();
  const systemJwt = await encodeAccount("SYS", system, {}, { signer: operator });
  const serverConfig = [
    `operator: ${operatorJwt}`,
    `system_account: ${system.getPublicKey()}`,
    "resolver: MEMORY",
    "resolver_preload: {",
    `  ${system.getPublicKey()}: ${systemJwt}`,
    `  ${account.getPublicKey()}: ${accountJwt}`,
    "}",
  ].join("\n");
  return { serverConfig, credsFile, userSeed, foreignCredsFile, foreignUserSeed };
}

/** TLS material: a CA, a server certificate for 127.0.0.1, a client certificate, and a client certificate from a CA the server does not trust. */
export interface TlsFiles {
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  rogueCertFile: string;
  rogueKeyFile: string;
  /** `tls { cert_file, key_file, ca_file, verify: true }`: clients must present a certificate the CA signed. */
  serverConfig: string;
}

const OPENSSL = existsSync("/usr/bin/openssl") ? "/usr/bin/openssl" : "openssl";

function openssl(dir: string, args: string[]): void {
  const r = spawnSync(OPENSSL, args, { cwd: dir, encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) throw new Error(`openssl ${args.slice(0, 2).join(" ")} failed (${r.status}): ${(r.stderr || r.error?.message || "").trim()}`);
}

/** Makes the TLS files with openssl (P-256 keys: quick to generate). */
export function makeTlsFiles(dir: string): TlsFiles {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const ca = (name: string): void => openssl(dir, ["req", "-x509", ...ec, "-keyout", `${name}-key.pem`, "-out", `${name}.pem`, "-days", "2", "-subj", `/CN=evalfleet test ${name}`]);
  const leaf = (name: string, issuer: string, ext: string): void => {
    writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
    openssl(dir, ["req", ...ec, "-keyout", `${name}-key.pem`, "-out", `${name}.csr`, "-subj", `/CN=evalfleet test ${name}`]);
    openssl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", `${issuer}.pem`, "-CAkey", `${issuer}-key.pem`, "-CAcreateserial", "-out", `${name}.pem`, "-days", "2", "-extfile", `${name}.ext`]);
  };
  ca("ca");
  ca("rogue-ca");
  leaf("server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth");
  leaf("client", "ca", "extendedKeyUsage=clientAuth");
  leaf("rogue", "rogue-ca", "extendedKeyUsage=clientAuth");
  const f = (name: string): string => join(dir, name);
  return {
    caFile: f("ca.pem"),
    serverCertFile: f("server.pem"),
    serverKeyFile: f("server-key.pem"),
    clientCertFile: f("client.pem"),
    clientKeyFile: f("client-key.pem"),
    rogueCertFile: f("rogue.pem"),
    rogueKeyFile: f("rogue-key.pem"),
    serverConfig: `tls {\n  cert_file: "${f("server.pem")}"\n  key_file: "${f("server-key.pem")}"\n  ca_file: "${f("ca.pem")}"\n  verify: true\n  timeout: 5\n}`,
  };
}
