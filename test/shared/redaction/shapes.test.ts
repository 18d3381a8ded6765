// The shapes of well-known credentials (shared/redaction/shapes.ts), recognised without being
// known: every shape in the places a token turns up (prose, JSON, an assignment, quotes, a URL),
// what replaces it and what stays, the quick test before the full pass (never misses what the
// full pass finds), ordinary text left alone (the false positives a demanding reviewer would try),
// and the opt-out (`redactShapes`).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { REDACTED, Redactor } from "../../../shared/redaction/redact.ts";
import { SECRET_SHAPES, SHAPE_RULES, redactShapesProblem, shapesRedacted } from "../../../shared/redaction/shapes.ts";
import { leakedPiece, prng } from "../../support/secrets.ts";
import { privateKey, shapedTokens, tokenBody } from "../../support/token-shapes.ts";

const r = new Redactor([]);
const TOKENS = shapedTokens();

/** The places a token turns up in an agent's output, a log line or a tool's arguments. */
const CONTEXTS: ReadonlyArray<(t: string) => string> = [
  (t) => t,
  (t) => `Here is the key: ${t}. Keep it safe.`,
  (t) => `export TOKEN=${t}\nnext line`,
  (t) => `{"token":"${t}","n":1}`,
  (t) => JSON.stringify({ args: { header: t } }),
  (t) => `'${t}' and "${t}"`,
  (t) => `(${t}), [${t}]; <${t}>`,
  (t) => `curl -H "Authorization: ${t}" https://api.example/v1`,
  (t) => `line one\n\t${t}\r\nline two`,
];

describe("every shape, wherever it appears", () => {
  test("each shape has tokens here (the list in docs/security.md is the list in shapes.ts)", () => {
    assert.deepEqual([...new Set(TOKENS.map((t) => t.shape))].sort(), [...SECRET_SHAPES].sort());
    assert.deepEqual(SHAPE_RULES.map((rule) => rule.name), [...SECRET_SHAPES]);
  });

  for (const t of TOKENS) {
    test(`${t.label} (${t.shape}) in every context: replaced, no 8-character piece of it left`, () => {
      for (const context of CONTEXTS) {
        const text = context(t.token);
        const out = r.text(text);
        assert.equal(leakedPiece(out, t.secret), null, `${t.label} leaks from ${JSON.stringify(text)}: ${JSON.stringify(out)}`);
        // The JSON contexts escape the token (a private key's line breaks): compare where it is verbatim.
        if (text.includes(t.token)) assert.equal(out, text.split(t.token).join(t.redacted), JSON.stringify(text));
      }
    });
  }

  test("what stays says what was there: the Bearer word, a webhook's host, a URL's scheme and host, a key's armour", () => {
    const webhook = TOKENS.find((t) => t.label === "a Slack webhook")!;
    assert.equal(r.text(`post to ${webhook.token} now`), `post to https://hooks.slack.com/services/${REDACTED} now`);
    assert.equal(r.text(`Authorization: bearer ${tokenBody(30, 1)}`), `Authorization: bearer ${REDACTED}`);
    assert.equal(r.text(`wss://user:${tokenBody(12, 2)}@h:443 and tls://${tokenBody(12, 3)}@h`), `wss://${REDACTED}@h:443 and tls://${REDACTED}@h`);
    assert.match(r.text(privateKey("EC PRIVATE KEY").token), /^-----BEGIN EC PRIVATE KEY-----\[REDACTED\]-----END EC PRIVATE KEY-----$/);
    assert.match(r.text(privateKey("PGP PRIVATE KEY BLOCK").token), /^-----BEGIN PGP PRIVATE KEY BLOCK-----\[REDACTED\]-----END PGP PRIVATE KEY BLOCK-----$/);
  });

  test("a private key: in a JSON string (escaped line breaks), encrypted (with headers), and cut before its end line", () => {
    const { token, body } = privateKey("RSA PRIVATE KEY", 6, 3);
    const json = JSON.stringify({ file: "id_rsa", content: token });
    assert.equal(r.text(json), JSON.stringify({ file: "id_rsa", content: "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----" }));
    const encrypted = `-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,${tokenBody(32, 4, "0123456789ABCDEF")}\n\n${body}\n-----END RSA PRIVATE KEY-----`;
    assert.equal(leakedPiece(r.text(encrypted), body), null);
    // `head -3 id_rsa`: the block stops short; what there is of its body goes.
    const cut = token.split("\n").slice(0, 3).join("\n");
    const out = r.text(`$ head -3 id_rsa\n${cut}`);
    assert.equal(out, `$ head -3 id_rsa\n-----BEGIN RSA PRIVATE KEY-----${REDACTED}`);
  });

  test("a JWT of five parts (encrypted) goes whole; a sentence's full stop after a JWT stays", () => {
    const jwe = `eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..${tokenBody(16, 5)}.${tokenBody(40, 6)}.${tokenBody(22, 7)}`;
    assert.equal(r.text(`got ${jwe} back`), `got ${REDACTED} back`);
    const jwt = TOKENS.find((t) => t.shape === "jwt")!.token;
    assert.equal(r.text(`The token is ${jwt}.`), `The token is ${REDACTED}.`);
  });

  test("tokens side by side, and a known secret inside a shape, are each removed", () => {
    const all = TOKENS.map((t) => t.token).join(" ");
    const out = r.text(all);
    for (const t of TOKENS) assert.equal(leakedPiece(out, t.secret), null, t.label);
    assert.equal(out, TOKENS.map((t) => t.redacted).join(" "));
    const known = new Redactor(["abcdef123456"]);
    assert.equal(known.text("Bearer abcdef123456"), `Bearer ${REDACTED}`);
  });
});

describe("ordinary text is left alone", () => {
  const kept = [
    // Words near the prefixes.
    "the bearer of bad news; a Bearer token goes in the header; bearer bonds; Bearer YOUR_TOKEN; Bearer <token>; Bearer ${TOKEN}",
    "task-1234567890abcdefghijklmnop, disk-usage-report-2024-final, risk-adjusted, ask-me-anything-1234567890abcdef",
    "an sk-learn-compatible estimator; sk-... is a placeholder; sk-your-key-here; the sk in skill",
    "ghp_ tokens start with ghp_; ghp_xxx; gh_pages; GITHUB_TOKEN=$GITHUB_TOKEN; github_pat_ is the prefix",
    "xoxo, love; xoxb-your-bot-token; hooks.slack.com/services/ is the webhook host",
    "AKIA is the prefix of an access key id; AKIAEXAMPLE; SUCCESSFULLY COMPLETED ALL THE STEPS IN THE PLAN WITHOUT ERRORS",
    "AIza is a Google prefix; hf_hub_download(); npm_config_cache; gsk_ is Groq's; glpat- is GitLab's; sk_live_ and rk_test_ prefixes",
    // Hashes, ids, encodings.
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and 550e8400-e29b-41d4-a716-446655440000",
    `cursor eyJwYWdlIjoyLCJzaXplIjoxMDB9 (base64 of JSON, no dots); data ${Buffer.from("just some ordinary words, nothing secret").toString("base64")}`,
    "eyJ alone; eyJhbGciOiJIUzI1NiJ9 (a header alone); a.b.c; v1.2.3; file.tar.gz",
    // URLs, emails, paths, certificates.
    "https://example.com/a@b, mailto:me@example.com, ssh://git@github.com/x, postgres://USER@HOST:5432/db, mysql://root:***@db/evals",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE----- and -----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
    "/home/user/.ssh/id_rsa and ~/.aws/credentials; the PRIVATE KEY section; -----BEGIN with nothing after",
    "the file starts with a -----BEGIN RSA PRIVATE KEY----- line and ends with its END line",
    "The capital of France is Paris. 2 + 2 = 4. {\"ok\": true, \"items\": [1, 2, 3]} -- done --",
  ];
  for (const text of kept) {
    test(JSON.stringify(text.slice(0, 60)), () => assert.equal(r.text(text), text));
  }
});

describe("the quick test before the full pass", () => {
  test("each shape's quick test matches every token of the shape", () => {
    for (const t of TOKENS) {
      const rule = SHAPE_RULES.find((x) => x.name === t.shape)!;
      assert.ok(new RegExp(rule.precheck).test(t.token), `${t.label}: ${rule.precheck}`);
    }
  });

  test("seeded random texts: the redactor gives what one full pass over every shape gives", () => {
    // The reference: every shape in one expression, no quick test.
    const all = new RegExp(SHAPE_RULES.map((rule) => `(${rule.sources.join("|")})`).join("|"), "g");
    const reference = (text: string): string =>
      text.replace(all, (m: string, ...groups: unknown[]) => {
        const i = groups.findIndex((g, k) => k < SHAPE_RULES.length && g !== undefined);
        return SHAPE_RULES[i]!.replace(m, text, groups[SHAPE_RULES.length] as number);
      });
    const pieces = [" ", "\n", ".", "-", "_", ":", "//", "@", "=", '"', "sk", "sk-", "k-", "gh", "p_", "ghp_", "github_pat_", "glpat-", "AK", "IA", "AKIA", "ASIA", "xox", "b-", "xoxb-", "hooks.slack.com/services/", "AIza", "k_live_", "hf_", "gsk_", "npm_", "eyJ", "ey", "J", "Bearer ", "bearer\t", "-----BEGIN ", "PRIVATE KEY-----", "-----END ", "RSA ", "nats://", "postgres://u:", "SU", "the", "x", "9"];
    const rand = prng(23);
    for (let n = 0; n < 3000; n++) {
      let text = "";
      for (let i = 0; i < 20; i++) {
        const roll = rand();
        if (roll < 0.08) text += TOKENS[Math.floor(rand() * TOKENS.length)]!.token;
        else if (roll < 0.2) text += tokenBody(1 + Math.floor(rand() * 40), n * 31 + i);
        else text += pieces[Math.floor(rand() * pieces.length)];
      }
      const once = r.text(text);
      assert.equal(once, reference(text), JSON.stringify(text));
      // Redacting again changes nothing (a worker's events are redacted as a stream, then each one as it is published).
      assert.equal(r.text(once), once, `twice: ${JSON.stringify(text)}`);
    }
  });

  test("redacting twice is redacting once, for every token in every context", () => {
    for (const t of TOKENS) for (const context of CONTEXTS) {
      const once = r.text(context(t.token));
      assert.equal(r.text(once), once, t.label);
    }
  });
});

describe("the opt-out: which shapes are redacted", () => {
  test("none: every token passes; known values still go", () => {
    const none = new Redactor(["known-secret-1"], { shapes: [] });
    for (const t of TOKENS) assert.equal(none.text(`x ${t.token} y`), `x ${t.token} y`, t.label);
    assert.equal(none.text("a known-secret-1 b"), `a ${REDACTED} b`);
    const gh = TOKENS.find((t) => t.shape === "github")!.token;
    assert.equal(new Redactor([gh], { shapes: [] }).text(`token ${gh}`), `token ${REDACTED}`, "a known value of a shape is redacted as a known value");
  });

  test("all but some: the others are still redacted", () => {
    const butJwt = new Redactor([], { shapes: shapesRedacted({ except: ["jwt", "bearer"] }) });
    for (const t of TOKENS) {
      const out = butJwt.text(t.token);
      if (t.shape === "jwt" || t.shape === "bearer") assert.equal(out, t.token, t.label);
      else assert.equal(out, t.redacted, t.label);
    }
    assert.deepEqual(butJwt.shapes, SECRET_SHAPES.filter((s) => s !== "jwt" && s !== "bearer"));
  });

  test("redactShapes values: true, false, { except }, and what is wrong with the others", () => {
    assert.deepEqual(shapesRedacted(undefined), SECRET_SHAPES);
    assert.deepEqual(shapesRedacted(true), SECRET_SHAPES);
    assert.deepEqual(shapesRedacted(false), []);
    for (const ok of [undefined, null, true, false, { except: [] }, { except: ["jwt", "github"] }]) assert.equal(redactShapesProblem(ok), null, JSON.stringify(ok));
    assert.equal(redactShapesProblem("off"), "redactShapes must be true, false or { except: [shape names] }, got 'off'");
    assert.equal(redactShapesProblem(["jwt"]), "redactShapes must be true, false or { except: [shape names] }, got a list");
    assert.equal(redactShapesProblem({ expect: ["jwt"] }), "redactShapes: unknown option 'expect' (the one option is except: [shape names])");
    assert.equal(redactShapesProblem({ except: "jwt" }), "redactShapes.except must be a list of shape names, got 'jwt'");
    assert.equal(redactShapesProblem({ except: ["jwt", "jwts"] }), `redactShapes.except[1]: unknown shape 'jwts' (the shapes: ${SECRET_SHAPES.join(", ")})`);
  });
});
