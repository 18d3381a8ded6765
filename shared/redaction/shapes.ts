// runs in: both
/**
 * The shapes of well-known credentials, recognised without being known (docs/security.md,
 * "Secrets stay out of output"): one entry per kind, named so a suite can leave some shapes in its
 * output (`redactShapes: { except: ["jwt"] }`). Pure; shared/redaction/redact.ts compiles them into
 * the redactor's one regular expression, shared/redaction/redact-stream.ts reads what may still
 * grow into each.
 *
 * Every shape is chosen so that ordinary text does not match it: a distinctive prefix (`ghp_`,
 * `AKIA`, `xoxb-`, `eyJ` with two dots), a minimum length, and for the looser ones (`sk-...`,
 * `Bearer <token>`) a digit or a long run, so prose (`the bearer of bad news`,
 * `an sk-learn-compatible model`), hex hashes, UUIDs and base64 do not. The test suite holds the
 * false positives guarded against (test/shared/redaction/shapes.test.ts).
 */

/** What replaces a secret in every output. */
export const REDACTED = "[REDACTED]";

/**
 * How far before a match the shapes look (a word boundary, the scheme of a NATS URL behind its
 * `://`), in characters: the streaming redactor keeps this much of the text it has released.
 */
export const LOOKBEHIND = 5;

/** The names of the shapes, in the order they are tried at a position. */
export const SECRET_SHAPES = [
  "private-key",
  "bearer",
  "sk-key",
  "github",
  "gitlab",
  "aws-key-id",
  "slack",
  "google-api-key",
  "stripe",
  "huggingface",
  "groq",
  "npm",
  "jwt",
  "url-credentials",
  "nkey-seed",
] as const;

/** One of {@link SECRET_SHAPES}. */
export type SecretShape = (typeof SECRET_SHAPES)[number];

/** One shape: how it is found, what replaces it, and (for streams) what may still grow into it. */
export interface ShapeRule {
  name: SecretShape;
  /** Regular expression sources (without flags), alternatives of one another. */
  sources: readonly string[];
  /** What replaces a match (`input`: the text it was found in, `index`: where). */
  replace: (match: string, input: string, index: number) => string;
  /**
   * For streams: sources matching a whole end of a text that is, or may still grow into, a match
   * (a superset is safe: it only holds text back a little longer). Anchored by the caller.
   */
  growing: readonly string[];
  /**
   * The characters a match may begin with (for streams: where to try {@link growing}). A shape
   * that begins with a letter begins at a word boundary (`\b`); one that begins otherwise
   * (`:`, `-`) anywhere.
   */
  starts: string;
  /**
   * The quick test before the full pass: a regular expression source that matches somewhere in
   * every match of the shape, built on one of its rarer characters (a pivot, looked around), so
   * that scanning for it is cheap. A superset is safe (the full pass then finds nothing).
   */
  precheck: string;
}

/** `atoms` as a regular expression that matches any non-empty prefix of their sequence: `a(?:b(?:c)?)?`. */
function prefixes(atoms: readonly string[]): string {
  let out = "";
  for (let i = atoms.length - 1; i >= 0; i--) out = i === atoms.length - 1 ? atoms[i]! : `${atoms[i]}(?:${out})?`;
  return out;
}

/** The characters of a literal, each escaped, as atoms for {@link prefixes}. */
function chars(literal: string): string[] {
  return [...literal].map((c) => c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"));
}

/** A run of `cls` of at least `min` characters that holds a digit, or of at least `long` without one. */
function tokenRun(cls: string, min: number, long: number): string {
  return `(?=${cls}{${min}})(?=${cls}*[0-9]|${cls}{${long}})${cls}+`;
}

const whole = (): string => REDACTED;
/** Keeps the first `n` characters of a match (its prefix says what was there). */
const keep = (n: number) => (m: string): string => `${m.slice(0, n)}${REDACTED}`;

/** A bearer token's characters (RFC 6750's b64token). */
const B64TOKEN = "[A-Za-z0-9._~+/=-]";
/** The schemes of a NATS server's URL, whose user information may be a token alone. */
const NATS_SCHEME = "(?:nats|tls|wss?)";
/** A NATS scheme at the end of the text before a match, at a word boundary (the looked-behind scheme of the url-credentials shape). */
const NATS_BEFORE = new RegExp(`(?:^|[^A-Za-z0-9_])${NATS_SCHEME}$`);
/** What may follow `://` in a URL's credentials. */
const USERINFO = String.raw`[^\s/?#@"'<>]*`;
/** What a PEM private key's body may hold: base64, its headers (`Proc-Type: 4,ENCRYPTED`), line breaks, escaped ones (`\n` in JSON). */
const PEM_BODY = String.raw`(?:[A-Za-z0-9+/=:,.\\\s]|-(?!----))`;
/** The label of a private key's armour: `RSA PRIVATE KEY`, `PRIVATE KEY`, `OPENSSH PRIVATE KEY`, `PGP PRIVATE KEY BLOCK`. */
const PEM_LABEL = "[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?";

/**
 * Text from a `-----BEGIN ... PRIVATE KEY-----` line on that is, or may still grow into, a private
 * key block (its end line not yet complete). The only shape that spans whitespace: the streaming
 * redactor looks for it apart from the last word (redact-stream.ts).
 */
export const PRIVATE_KEY_SO_FAR = new RegExp(
  String.raw`^-----BEGIN(?:[A-Z0-9 ]*-{0,5}|${PEM_LABEL}-----${PEM_BODY}*(?:-{1,5}(?:E(?:N(?:D[A-Z0-9 ]*-{0,5})?)?)?)?)$`,
);

/** Every shape; see the module comment and docs/security.md for each. */
export const SHAPE_RULES: readonly ShapeRule[] = [
  {
    // The armour stays (what kind of key it was), the key goes; a block cut before its end line
    // is removed as far as its body goes.
    name: "private-key",
    // Its body begins with base64 (or an encrypted key's headers): the armour named in prose, or
    // already redacted (`-----BEGIN ...-----[REDACTED]`), is not a key.
    sources: [String.raw`-----BEGIN ${PEM_LABEL}-----(?=(?:\s|\\[nr])*(?:[A-Za-z0-9+/]{16}|Proc-Type:))${PEM_BODY}*(?:-----END ${PEM_LABEL}-----)?`],
    replace: (m) => {
      const begin = m.slice(0, m.indexOf("-----", 10) + 5);
      const end = m.lastIndexOf("-----END ");
      return `${begin}${REDACTED}${end > 0 ? m.slice(end) : ""}`;
    },
    growing: [prefixes([...chars("-----BEGIN"), "[A-Z0-9]*"])],
    starts: "-",
    precheck: String.raw`V(?=ATE KEY)(?<=PRIV)`,
  },
  {
    // The word stays: "Bearer [REDACTED]" still says what was there. The token holds a digit or is
    // long: "the bearer of bad news" is prose.
    name: "bearer",
    // (The word first, its boundary checked after: a scan for a literal is cheaper than for `\b`.)
    // A full stop after the token ends the sentence, not the token.
    sources: [String.raw`[Bb]earer(?<=\b[Bb]earer)[ \t]+${tokenRun(B64TOKEN, 6, 20)}(?<!\.)`],
    replace: (m) => `${m.slice(0, 6)} ${REDACTED}`,
    // The gap and the token after the word are handled by the streaming redactor itself.
    growing: [prefixes(["[Bb]", ...chars("earer")])],
    starts: "Bb",
    precheck: String.raw`[Bb](?=earer[ \t])`,
  },
  {
    // OpenAI (`sk-...`, `sk-proj-`, `sk-svcacct-`), Anthropic (`sk-ant-`), DeepSeek, OpenRouter (`sk-or-`).
    name: "sk-key",
    sources: [String.raw`\bsk-${tokenRun("[A-Za-z0-9_-]", 20, 40)}`],
    replace: whole,
    growing: [prefixes([...chars("sk-"), "[A-Za-z0-9_-]*"])],
    starts: "s",
    precheck: String.raw`k(?=-)(?<=\bsk)`,
  },
  {
    // Personal, OAuth, user-to-server, server-to-server and refresh tokens; fine-grained tokens.
    name: "github",
    sources: [String.raw`\bgh[pousr]_[A-Za-z0-9]{30,}`, String.raw`\bgithub_pat_[A-Za-z0-9_]{30,}`],
    replace: whole,
    growing: [prefixes(["g", "h", "[pousr]", "_", "[A-Za-z0-9]*"]), prefixes([...chars("github_pat_"), "[A-Za-z0-9_]*"])],
    starts: "g",
    precheck: String.raw`_(?<=\bgh[pousr]_|\bgithub_pat_)`,
  },
  {
    name: "gitlab",
    sources: [String.raw`\bglpat-[A-Za-z0-9_-]{20,}`],
    replace: whole,
    growing: [prefixes([...chars("glpat-"), "[A-Za-z0-9_-]*"])],
    starts: "g",
    precheck: String.raw`-(?<=\bglpat-)`,
  },
  {
    // Access key ids: long-term (AKIA), temporary (ASIA), and the two newer kinds; exactly 20 characters.
    name: "aws-key-id",
    sources: [String.raw`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`],
    replace: whole,
    growing: [prefixes(["A", "[KSBC]", "[IC]", "A", "[A-Z0-9]{0,16}"])],
    starts: "A",
    precheck: String.raw`A(?=(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16})(?<=\bA)`,
  },
  {
    // Bot, user, app, configuration and refresh tokens (`xoxb-`, `xoxp-`, ...), and incoming
    // webhooks, whose path is the credential (`hooks.slack.com/services/[REDACTED]`).
    name: "slack",
    sources: [String.raw`\bxox[abeprs]-(?=[A-Za-z0-9-]*[0-9])[A-Za-z0-9-]{10,}`, String.raw`\bhooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_\/-]{16,}`],
    replace: (m) => (m.startsWith("hooks") ? keep(m.indexOf("/", 16) + 1)(m) : REDACTED),
    growing: [prefixes([...chars("xox"), "[abeprs]", "-", "[A-Za-z0-9-]*"]), prefixes([...chars("hooks.slack.com/"), "[A-Za-z0-9_/-]*"])],
    starts: "xh",
    precheck: String.raw`x(?=ox[abeprs]-)(?<=\bx)|k(?=\.com\/)(?<=\bhooks\.slack)`,
  },
  {
    // Google Cloud and Gemini API keys.
    name: "google-api-key",
    sources: [String.raw`\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])`],
    replace: whole,
    growing: [prefixes([...chars("AIza"), "[A-Za-z0-9_-]*"])],
    starts: "A",
    precheck: String.raw`z(?=a)(?<=\bAIz)`,
  },
  {
    // Secret and restricted keys, live and test.
    name: "stripe",
    sources: [String.raw`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`],
    replace: whole,
    growing: [prefixes(["[rs]", "k", "_", "[a-z]{0,4}", "_", "[A-Za-z0-9]*"])],
    starts: "rs",
    precheck: String.raw`_(?<=\b[rs]k_(?:live|test)_)`,
  },
  {
    name: "huggingface",
    sources: [String.raw`\bhf_[A-Za-z0-9]{30,}`],
    replace: whole,
    growing: [prefixes([...chars("hf_"), "[A-Za-z0-9]*"])],
    starts: "h",
    precheck: String.raw`_(?<=\bhf_)`,
  },
  {
    name: "groq",
    sources: [String.raw`\bgsk_[A-Za-z0-9]{40,}`],
    replace: whole,
    growing: [prefixes([...chars("gsk_"), "[A-Za-z0-9]*"])],
    starts: "g",
    precheck: String.raw`_(?<=\bgsk_)`,
  },
  {
    name: "npm",
    sources: [String.raw`\bnpm_[A-Za-z0-9]{36,}`],
    replace: whole,
    growing: [prefixes([...chars("npm_"), "[A-Za-z0-9]*"])],
    starts: "n",
    precheck: String.raw`_(?<=\bnpm_)`,
  },
  {
    // A JSON Web Token (signed: three parts; encrypted: five), its header base64url JSON (`eyJ`).
    // Base64 of JSON alone (a pagination cursor) has no dots and stays.
    name: "jwt",
    sources: [String.raw`\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?`],
    replace: whole,
    growing: [prefixes([...chars("eyJ"), "[A-Za-z0-9_-]*", "\\.", "[A-Za-z0-9_-]*", "\\.", "[A-Za-z0-9_-]*", "\\.", "[A-Za-z0-9_-]*", "\\.", "[A-Za-z0-9_-]*"])],
    starts: "e",
    precheck: String.raw`J(?<=\beyJ)`,
  },
  {
    // A NATS URL's user information, a token or user:password (`nats://[REDACTED]@host`); any
    // other URL's password (`postgres://user:[REDACTED]@host`). A lone user name
    // (`ssh://git@host`) and a password already masked (`***`) are left. Both begin at `://`
    // (one scan for a literal; the scheme is looked behind), so the scheme stays as it was.
    name: "url-credentials",
    sources: [String.raw`:\/\/(?:(?<=\b${NATS_SCHEME}:\/\/)[^\s/?#@"'<>]+@|[^\s/?#@"'<>:]*:(?!\*+@)[^\s/?#@"'<>]+@)`],
    replace: (m, input, index) => (NATS_BEFORE.test(input.slice(Math.max(0, index - 5), index)) ? `://${REDACTED}@` : `${m.slice(0, m.indexOf(":", 3) + 1)}${REDACTED}@`),
    growing: [
      prefixes([..."nats".split(""), ":", "\\/", "\\/", USERINFO]),
      prefixes([..."tls".split(""), ":", "\\/", "\\/", USERINFO]),
      prefixes(["w", "s", "s?", ":", "\\/", "\\/", USERINFO]),
      prefixes([":", "\\/", "\\/", USERINFO]),
    ],
    starts: "ntw:",
    precheck: String.raw`@(?<=:\/\/[^\s/?#@"'<>]*@)`,
  },
  {
    // NKey seeds (user, account, operator, server, cluster, curve keys).
    name: "nkey-seed",
    sources: [String.raw`\bS[UAOCNPX][A-Z2-7]{56}\b`],
    replace: whole,
    growing: [prefixes(["S", "[UAOCNPX]", "[A-Z2-7]{0,56}"])],
    starts: "S",
    precheck: String.raw`S(?=[UAOCNPX][A-Z2-7]{56})(?<=\bS)`,
  },
];

/**
 * Which shapes are redacted (`defineSuite({ redactShapes })`, `runCases(cases, { redactShapes })`,
 * `cli(cases, { redactShapes })`): `true` (the default) every one, `false` none, or every one but
 * those named (`{ except: ["jwt"] }`). Known values (the environment's secrets, the NATS
 * credentials) are redacted whatever it says.
 */
export type RedactShapes = boolean | { readonly except: readonly SecretShape[] };

/**
 * What is wrong with a `redactShapes` value (named `field` in the text), or null when it is one:
 * `true`, `false`, or `{ except: [names of SECRET_SHAPES] }`.
 */
export function redactShapesProblem(value: unknown, field = "redactShapes"): string | null {
  if (value === undefined || value === null || typeof value === "boolean") return null;
  const shown = (v: unknown): string => (typeof v === "string" ? `'${v}'` : Array.isArray(v) ? "a list" : v === null ? "null" : typeof v === "object" ? "an object" : `${typeof v} ${String(v)}`);
  if (typeof value !== "object" || Array.isArray(value)) return `${field} must be true, false or { except: [shape names] }, got ${shown(value)}`;
  const keys = Object.keys(value);
  const other = keys.find((k) => k !== "except");
  if (other !== undefined) return `${field}: unknown option '${other}' (the one option is except: [shape names])`;
  const except = (value as { except?: unknown }).except;
  if (!Array.isArray(except)) return `${field}.except must be a list of shape names, got ${shown(except)}`;
  const known: ReadonlySet<string> = new Set(SECRET_SHAPES);
  for (let i = 0; i < except.length; i++) {
    if (typeof except[i] !== "string" || !known.has(except[i] as string)) return `${field}.except[${i}]: unknown shape ${shown(except[i])} (the shapes: ${SECRET_SHAPES.join(", ")})`;
  }
  return null;
}

/** The shapes a `redactShapes` value redacts, in {@link SECRET_SHAPES} order (null and undefined: every one). */
export function shapesRedacted(option: RedactShapes | null | undefined): readonly SecretShape[] {
  if (option === undefined || option === null || option === true) return SECRET_SHAPES;
  if (option === false) return [];
  const except: ReadonlySet<string> = new Set(option.except);
  return SECRET_SHAPES.filter((name) => !except.has(name));
}
