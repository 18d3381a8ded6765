/**
 * Made-up credentials of every shape the redactor recognises (shared/redaction/shapes.ts), for the
 * redaction tests and the secrets suites. Built from parts at run time, so no file of the repo
 * holds a string that a secret scanner would take for a real token.
 */
import type { SecretShape } from "../../shared/redaction/shapes.ts";
import { seededRandom } from "../../shared/seeded-random.ts";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** `n` characters of `alphabet` from `seed`, ending in a digit when the alphabet has one (tokens do). */
export function tokenBody(n: number, seed: number, alphabet = ALNUM): string {
  const rand = seededRandom(seed);
  let out = "";
  for (let i = 0; i < n; i++) out += alphabet[Math.floor(rand() * alphabet.length)];
  const digit = [...alphabet].find((c) => c >= "0" && c <= "9");
  return digit && !/[0-9]/.test(out) ? `${out.slice(0, -1)}${digit}` : out;
}

const b64url = (s: string): string => Buffer.from(s).toString("base64url");

/** One made-up credential: its shape, the text, what replaces it, and the part that must not be left. */
export interface ShapedToken {
  shape: SecretShape;
  /** What it is, for messages. */
  label: string;
  token: string;
  /** What the redactor turns it into. */
  redacted: string;
  /** The secret part (what no output may hold any piece of). */
  secret: string;
}

const R = "[REDACTED]";

function plain(shape: SecretShape, label: string, token: string): ShapedToken {
  return { shape, label, token, redacted: R, secret: token };
}

/** A private key block of `lines` lines of base64 (64 characters each), with its armour. */
export function privateKey(label = "RSA PRIVATE KEY", lines = 4, seed = 7): { token: string; body: string } {
  const rows = Array.from({ length: lines }, (_, i) => tokenBody(64, seed + i, `${ALNUM}+/`));
  const body = rows.join("\n");
  return { token: `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----`, body };
}

/** One token of every shape (and of each variant of a shape). */
export function shapedTokens(): ShapedToken[] {
  const rsa = privateKey("RSA PRIVATE KEY", 4, 11);
  const openssh = privateKey("OPENSSH PRIVATE KEY", 3, 21);
  const bearer = `${tokenBody(24, 3)}.${tokenBody(12, 4)}-_~+/=`;
  const jwt = `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url('{"sub":"1234567890","name":"A Tester","iat":1516239022}')}.${tokenBody(43, 5, `${ALNUM}-_`)}`;
  const hook = `T${tokenBody(10, 6, UPPER_DIGITS)}/B${tokenBody(10, 7, UPPER_DIGITS)}/${tokenBody(24, 8)}`;
  const natsToken = `tok${tokenBody(16, 9)}`;
  const pgPassword = `pw-${tokenBody(14, 10)}`;
  return [
    { shape: "private-key", label: "an RSA private key", token: rsa.token, redacted: `-----BEGIN RSA PRIVATE KEY-----${R}-----END RSA PRIVATE KEY-----`, secret: rsa.body },
    { shape: "private-key", label: "an OpenSSH private key", token: openssh.token, redacted: `-----BEGIN OPENSSH PRIVATE KEY-----${R}-----END OPENSSH PRIVATE KEY-----`, secret: openssh.body },
    { shape: "bearer", label: "a bearer token", token: `Bearer ${bearer}`, redacted: `Bearer ${R}`, secret: bearer },
    plain("sk-key", "an OpenAI key", `sk-${tokenBody(48, 12)}`),
    plain("sk-key", "an OpenAI project key", `sk-proj-${tokenBody(60, 13, `${ALNUM}_-`)}`),
    plain("sk-key", "an Anthropic key", `sk-ant-api03-${tokenBody(86, 14, `${ALNUM}_-`)}AA`),
    ...(["p", "o", "u", "s", "r"] as const).map((k, i) => plain("github", `a GitHub gh${k}_ token`, `gh${k}_${tokenBody(36, 20 + i)}`)),
    plain("github", "a GitHub fine-grained token", `github_pat_${tokenBody(22, 30)}_${tokenBody(59, 31)}`),
    plain("gitlab", "a GitLab token", `glpat-${tokenBody(20, 32, `${ALNUM}_-`)}`),
    plain("aws-key-id", "an AWS access key id", `AKIA${tokenBody(16, 33, UPPER_DIGITS)}`),
    plain("aws-key-id", "an AWS temporary key id", `ASIA${tokenBody(16, 34, UPPER_DIGITS)}`),
    plain("slack", "a Slack bot token", `xoxb-${tokenBody(11, 35, "0123456789")}-${tokenBody(13, 36, "0123456789")}-${tokenBody(24, 37)}`),
    plain("slack", "a Slack user token", `xoxp-${tokenBody(11, 38, "0123456789")}-${tokenBody(12, 39, "0123456789")}-${tokenBody(32, 40, "abcdef0123456789")}`),
    { shape: "slack", label: "a Slack webhook", token: `https://hooks.slack.com/services/${hook}`, redacted: `https://hooks.slack.com/services/${R}`, secret: hook },
    plain("google-api-key", "a Google API key", `AIza${tokenBody(35, 41, `${ALNUM}_-`)}`),
    plain("stripe", "a Stripe secret key", `sk_live_${tokenBody(24, 42)}`),
    plain("stripe", "a Stripe restricted test key", `rk_test_${tokenBody(24, 43)}`),
    plain("huggingface", "a Hugging Face token", `hf_${tokenBody(34, 44)}`),
    plain("groq", "a Groq key", `gsk_${tokenBody(52, 45)}`),
    plain("npm", "an npm token", `npm_${tokenBody(36, 46)}`),
    plain("jwt", "a JWT", jwt),
    { shape: "url-credentials", label: "a NATS URL's token", token: `nats://${natsToken}@nats.example:4222`, redacted: `nats://${R}@nats.example:4222`, secret: natsToken },
    { shape: "url-credentials", label: "a database URL's password", token: `postgres://evals:${pgPassword}@db.example/evals`, redacted: `postgres://evals:${R}@db.example/evals`, secret: pgPassword },
    plain("nkey-seed", "an NKey seed", `SU${tokenBody(56, 47, BASE32)}`),
  ];
}
