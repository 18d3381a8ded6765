// Streamed text (shared/redaction/redact-stream.ts): a secret split across chunks or events is still found.
// Exhaustive over split points: every secret and key shape is cut at every position (into two
// chunks, and into three), and what comes out must equal redacting the whole text at once.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { REDACTED, Redactor } from "../../../shared/redaction/redact.ts";
import { EventStreamRedactor, MAX_HELD_EVENTS, StreamRedactor, holdStart } from "../../../shared/redaction/redact-stream.ts";
import { SECRET_SHAPES } from "../../../shared/redaction/shapes.ts";
import { leakedPiece, prng } from "../../support/secrets.ts";
import { privateKey, shapedTokens } from "../../support/token-shapes.ts";

const KEY = "proj-key-Q7f2LmX9vT4wZ1bN8c";
const SPACED = "correct horse battery staple";
const QUOTED = 'pw"quo\\te1';
const redactor = new Redactor([KEY, SPACED, QUOTED, "abcabcab"]);
/**
 * What the seeded random texts are made of: secrets whole and in pieces, the pieces of key shapes,
 * and word characters to stick to them (a word boundary decides whether a shape counts).
 */
const PIECES = ["the", " ", "x", "_", "\n", ":", "/", "@", "s", "sk", "sk-", "k-", "Bear", "er", "Bearer ", "bearer\t", "abc", "ab", "c", "S", "U", "A".repeat(10), "A".repeat(56), KEY, KEY.slice(0, 9), KEY.slice(9), SPACED, "correct ", "nats://", "na", "ts", "tls:", "//", "wss", "u:p", "***", 'pw"quo', "\\te1", "-", "12345678", '"', "\u00e9"];
const SHAPED = ["Bearer abc.DEF-123_xyz", `sk-proj-${"Ab9".repeat(10)}`, "nats://alice:pw-1234@host:4222", `SU${"A".repeat(56)}`, "nats://tok3n-abc@host", "postgres://u:pw-5678@db/x"];
/** What must not be left of each secret (a shape keeps its word, `Bearer`, or its URL's host). */
const SECRET_PART = new Map<string, string>([[SHAPED[0]!, "abc.DEF-123_xyz"], [SHAPED[2]!, "alice:pw-1234"], [SHAPED[4]!, "tok3n-abc"], [SHAPED[5]!, "pw-5678"]]);

/** Streams `chunks` through a StreamRedactor and returns everything that came out. */
function streamed(chunks: readonly string[], r: Redactor = redactor, maxHold?: number): string {
  const s = new StreamRedactor(r, { maxHold });
  return chunks.map((c) => s.push(c)).join("") + s.flush();
}

describe("StreamRedactor", () => {
  test("exhaustive: a secret split at any point into two chunks comes out as redacting the whole would", () => {
    for (const secret of [KEY, SPACED, ...SHAPED]) {
      const text = `The answer: ${secret} (done).\nNext line ${secret}`;
      const whole = redactor.text(text);
      assert.ok(!whole.includes(secret), `the whole text is redacted (${secret})`);
      for (let cut = 0; cut <= text.length; cut++) {
        const out = streamed([text.slice(0, cut), text.slice(cut)]);
        assert.equal(out, whole, `${secret} cut at ${cut}`);
      }
    }
  });

  test("exhaustive: into three chunks at any two points", () => {
    for (const secret of [KEY, SHAPED[0]!, SHAPED[1]!]) {
      const text = `x ${secret} y`;
      const whole = redactor.text(text);
      for (let a = 0; a <= text.length; a++) {
        for (let b = a; b <= text.length; b++) {
          assert.equal(streamed([text.slice(0, a), text.slice(a, b), text.slice(b)]), whole, `${secret} cut at ${a}, ${b}`);
        }
      }
    }
  });

  test("one character at a time, and every chunk size", () => {
    const text = `start ${KEY} mid Bearer tok-123 and ${SPACED}; end ${KEY}`;
    const whole = redactor.text(text);
    for (let size = 1; size <= text.length; size++) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      const out = streamed(chunks);
      assert.equal(out, whole, `chunks of ${size}`);
      assert.equal(leakedPiece(out, KEY), null);
    }
  });

  test("what cannot grow into a secret goes out at once; only the beginning of a secret is held", () => {
    const s = new StreamRedactor(redactor);
    const plain = "plain words, nothing secret here at all, just text ";
    assert.equal(s.push(plain), plain);
    assert.equal(s.push("and then pro"), "and then ", "the start of the known key waits");
    assert.equal(s.push("j-key-Q7"), "", "still the start of it");
    assert.equal(s.push("x more"), "proj-key-Q7x more", "not the key after all: out as it was");
    assert.equal(s.push(" correct horse"), " ", "the start of the spaced secret");
    assert.equal(s.push(" battery staple!"), `${REDACTED}!`);
    assert.equal(s.flush(), "");
    // Without known secrets only a key shape's beginning waits.
    const shapes = new StreamRedactor(new Redactor([]));
    assert.equal(shapes.push("one two thr"), "one two thr");
    assert.equal(shapes.push(" Be"), " ", "maybe Bearer");
    assert.equal(shapes.push("arer "), "", "a Bearer with its token still to come waits");
    assert.equal(shapes.push("abc123"), "", "the token may go on");
    assert.equal(shapes.push(" and s"), `Bearer ${REDACTED} and `);
    assert.equal(shapes.push("o on"), "so on");
  });

  test("holdStart: the beginning of a secret or of a key shape, at a word boundary", () => {
    const none = new Redactor([]);
    assert.equal(holdStart("abc def", none), 7);
    assert.equal(holdStart("abc sk-12", none), 4);
    assert.equal(holdStart("abc Bearer  ", none), 4);
    assert.equal(holdStart("abc Bearer  tok.1", none), 4);
    assert.equal(holdStart("abc xBearer ", none), 12, "not a word of its own");
    assert.equal(holdStart("abc xsk-12", none), 10, "not a word of its own");
    assert.equal(holdStart("see nats:/", none), 4, "a NATS URL from its scheme");
    assert.equal(holdStart("see na", none), 4);
    assert.equal(holdStart("see https:/", none), 9, "any other URL's credentials from their ://");
    assert.equal(holdStart(`a ${`SU${"A".repeat(56)}`}`, none), 2, "a whole seed may still grow into a longer word");
    assert.equal(holdStart("say pro", redactor), 4);
    assert.equal(holdStart("say pro", redactor, { from: 5 }), 7, "a beginning that is partly out already is not held");
  });

  test("a key-shaped word longer than maxHold is let go, redacted as far as it is known", () => {
    const long = `sk-${"x".repeat(97)}`;
    const s = new StreamRedactor(new Redactor([]), { maxHold: 16 });
    assert.equal(s.push(long), REDACTED);
    assert.equal(s.flush(), "");
  });

  test("seeded random streams: random chunking never changes the result", () => {
    const rand = prng(7);
    for (let n = 0; n < 3000; n++) {
      let text = "";
      for (let i = 0; i < 25; i++) text += PIECES[Math.floor(rand() * PIECES.length)];
      const chunks: string[] = [];
      for (let i = 0; i < text.length; ) {
        const size = 1 + Math.floor(rand() * 12);
        chunks.push(text.slice(i, i + size));
        i += size;
      }
      assert.equal(streamed(chunks), redactor.text(text), JSON.stringify(chunks));
    }
  });
});

/** Pushes `events` through an EventStreamRedactor, checking that they come out in order, and returns them. */
function released(events: ReadonlyArray<Record<string, unknown>>, r: Redactor = redactor): Array<Record<string, unknown>> {
  const s = new EventStreamRedactor(r);
  const out = events.flatMap((e) => s.push(e));
  out.push(...s.flush());
  assert.equal(out.length, events.length, "every event comes out once");
  return out;
}

const delta = (text: string): Record<string, unknown> => ({ type: "text_delta", delta: text });

describe("EventStreamRedactor", () => {
  test("exhaustive: a secret split across two events at any point is removed; the events are otherwise unchanged", () => {
    for (const secret of [KEY, SPACED, ...SHAPED]) {
      const text = `Here: ${secret} and more.`;
      const whole = redactor.text(text);
      for (let cut = 0; cut <= text.length; cut++) {
        const events = [delta(text.slice(0, cut)), delta(text.slice(cut))];
        const out = released(events);
        assert.deepEqual(out.map((e) => e.type), ["text_delta", "text_delta"]);
        const joined = out.map((e) => e.delta).join("");
        assert.equal(joined, whole, `${secret} cut at ${cut}`);
        for (const e of out) assert.equal(leakedPiece(JSON.stringify(e), SECRET_PART.get(secret) ?? secret, 4), null, `${secret} cut at ${cut}: ${JSON.stringify(out)}`);
        assert.equal(events[0]!.delta, text.slice(0, cut), "the input events are left untouched");
      }
    }
  });

  test("no text moves between events: each keeps its own part, the secret's marker goes where it began", () => {
    const out = released([delta(`key ${KEY.slice(0, 10)}`), delta(`${KEY.slice(10)} done`)]);
    assert.deepEqual(out, [delta(`key ${REDACTED}`), delta(" done")]);
  });

  test("fields at the same place form one text; other places (types, ids, tool names) are apart", () => {
    const a = KEY.slice(0, 12);
    const b = KEY.slice(12);
    const out = released([
      { type: "raw", data: { type: "output_text_delta", delta: a }, id: "run-1" },
      { type: "tool_called", tool: { toolName: "add" } },
      { type: "raw", data: { type: "output_text_delta", delta: b }, id: "run-1" },
      { type: "done" },
    ]);
    assert.deepEqual(out, [
      { type: "raw", data: { type: "output_text_delta", delta: REDACTED }, id: "run-1" },
      { type: "tool_called", tool: { toolName: "add" } },
      { type: "raw", data: { type: "output_text_delta", delta: "" }, id: "run-1" },
      { type: "done" },
    ]);
  });

  test("events go out as soon as nothing after them can complete a secret, in order", () => {
    const s = new EventStreamRedactor(new Redactor([]));
    assert.deepEqual(s.push({ type: "started" }), [{ type: "started" }], "nothing to wait for: out at once");
    assert.deepEqual(s.push(delta("hello, here is s")), [], "its end may begin a key");
    // (A name that cannot begin a key: "x" could, as `xoxb-...`, and would be held for its own path.)
    assert.deepEqual(s.push({ type: "tool", name: "add" }), [], "held behind the event before it");
    assert.deepEqual(s.push(delta("ome text")), [delta("hello, here is s"), { type: "tool", name: "add" }, delta("ome text")]);
    assert.deepEqual(s.push({ type: "started" }), [{ type: "started" }], "types and ids never wait");
    assert.deepEqual(s.flush(), []);
  });

  test("arrays, nested text and odd keys", () => {
    const out = released([{ type: "m", content: [{ text: `a ${KEY.slice(0, 5)}` }] }, { type: "m", content: [{ text: `${KEY.slice(5)} b` }] }, JSON.parse('{"__proto__": {"x": 1}, "k": "v"}')]);
    assert.deepEqual(out.slice(0, 2), [{ type: "m", content: [{ text: `a ${REDACTED}` }] }, { type: "m", content: [{ text: " b" }] }]);
    assert.deepEqual(Object.keys(out[2]!), ["__proto__", "k"]);
  });

  test("a stream that stops sending text does not hold events forever", () => {
    const s = new EventStreamRedactor(new Redactor([]));
    assert.deepEqual(s.push(delta("sk")), []);
    let out: Array<Record<string, unknown>> = [];
    for (let i = 0; i < MAX_HELD_EVENTS; i++) out = out.concat(s.push({ type: "tick", i }));
    assert.deepEqual(out[0], delta("sk"), "the oldest is let go once too many are held");
    assert.equal(out.length + s.flush().length, MAX_HELD_EVENTS + 1);
  });

  test("seeded random event streams: per field, the text that comes out is the whole text redacted", () => {
    const rand = prng(11);
    for (let n = 0; n < 2000; n++) {
      let text = "";
      for (let i = 0; i < 20; i++) text += PIECES[Math.floor(rand() * PIECES.length)];
      const events: Array<Record<string, unknown>> = [];
      for (let i = 0; i < text.length; ) {
        const size = 1 + Math.floor(rand() * 15);
        events.push(delta(text.slice(i, i + size)));
        if (rand() < 0.2) events.push({ type: "tool_called", name: "t" });
        i += size;
      }
      const out = released(events);
      assert.equal(out.filter((e) => e.type === "text_delta").map((e) => e.delta).join(""), redactor.text(text));
    }
  });
});

describe("key shapes in streams (shared/redaction/shapes.ts)", () => {
  const shapes = new Redactor([]);
  const TOKENS = shapedTokens();

  test("exhaustive: every shape split at any point into two chunks, and into two events, comes out as redacting the whole would", () => {
    for (const t of TOKENS) {
      const text = `Here: ${t.token} and more.`;
      const whole = shapes.text(text);
      assert.equal(leakedPiece(whole, t.secret), null, t.label);
      for (let cut = 0; cut <= text.length; cut++) {
        const chunks = [text.slice(0, cut), text.slice(cut)];
        assert.equal(streamed(chunks, shapes), whole, `${t.label} cut at ${cut}`);
        const out = released(chunks.map(delta), shapes);
        assert.equal(out.map((e) => e.delta).join(""), whole, `${t.label} cut at ${cut} (events)`);
        for (const e of out) assert.equal(leakedPiece(String(e.delta), t.secret), null, `${t.label} cut at ${cut}: ${JSON.stringify(out)}`);
      }
    }
  });

  test("a private key streamed line by line, and a character at a time, is held until its end line and goes out redacted", () => {
    const { token, body } = privateKey("OPENSSH PRIVATE KEY", 8, 5);
    const text = `Here is the key:\n${token}\nDone.`;
    const whole = shapes.text(text);
    assert.equal(whole, `Here is the key:\n-----BEGIN OPENSSH PRIVATE KEY-----${REDACTED}-----END OPENSSH PRIVATE KEY-----\nDone.`);
    const lines = text.split(/(?<=\n)/);
    const s = new StreamRedactor(shapes);
    const out: string[] = lines.map((l) => s.push(l));
    out.push(s.flush());
    assert.equal(out.join(""), whole);
    assert.equal(out[0], "Here is the key:\n", "what comes before goes out at once");
    assert.ok(out.slice(1, -3).every((o) => o === ""), `the block is held until its end line: ${JSON.stringify(out)}`);
    assert.equal(out.at(-3), "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----\n");
    assert.equal(streamed([...text], shapes), whole, "a character at a time");
    assert.equal(leakedPiece(out.join(""), body), null);
  });

  test("holdStart: the beginnings of the shapes, complete ones that may still grow (or stop being one), and an open key block", () => {
    for (const end of ["gh", "ghp_", "ghp_abc", "github_pa", "glpat-x", "AKI", `AKIA${"A".repeat(16)}`, "xox", "xoxb-1", "hooks.slack.c", "AIza", "sk_li", "rk_test_", "hf_", "gsk_", "npm", "eyJ", "eyJabc.def", "-----BEG", "sk-proj-"]) {
      assert.equal(holdStart(`see ${end}`, shapes), 4, end);
    }
    assert.equal(holdStart("see -----BEGIN RSA PRIV", shapes), 4, "the armour's words");
    assert.equal(holdStart("see -----BEGIN RSA PRIVATE KEY-----\nMIIE\nabcd", shapes), 4, "an open block");
    const closed = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nok then";
    assert.equal(holdStart(closed, shapes), closed.length, "a closed block is not held");
    for (const end of ["the agent", "ghq_", "xoxo", "AKIZ", "ghp_abc!", "eyK", "-----BEGIX", "-q"]) assert.equal(holdStart(`see ${end}`, shapes), 4 + end.length, end);
  });

  test("with shapes off, nothing is held for them and they pass as they are", () => {
    const none = new Redactor([], { shapes: [] });
    for (const end of ["ghp_abc", "sk-", "Bearer ", "nats://t", "-----BEGIN RSA"]) assert.equal(holdStart(`see ${end}`, none), 4 + end.length, end);
    const jwt = TOKENS.find((t) => t.shape === "jwt")!.token;
    assert.equal(streamed([`a ${jwt.slice(0, 20)}`, `${jwt.slice(20)} b`], none), `a ${jwt} b`);
    const butJwt = new Redactor([], { shapes: SECRET_SHAPES.filter((s) => s !== "jwt") });
    assert.equal(holdStart("see eyJabc", butJwt), 10);
    assert.equal(holdStart("see ghp_abc", butJwt), 4);
  });

  test("seeded random streams of token pieces: random chunking never changes the result", () => {
    const pieces = [" ", "\n", ".", "-", "_", ":", "/", "@", "gh", "p_", "ghp_", "github_pat_", "glpat-", "AK", "IA", "AKIA", "xox", "b-", "hooks.slack.com/services/", "AIza", "k_live_", "hf_", "gsk_", "npm_", "eyJ", "J", "-----BEGIN ", "PRIVATE KEY-----", "-----END ", "RSA ", "nats://", "SU", "x", "9", "A".repeat(16), "Ab3".repeat(12), ...TOKENS.map((t) => t.token)];
    const rand = prng(29);
    for (let n = 0; n < 2000; n++) {
      let text = "";
      for (let i = 0; i < 12; i++) text += pieces[Math.floor(rand() * pieces.length)];
      const chunks: string[] = [];
      for (let i = 0; i < text.length; ) {
        const size = 1 + Math.floor(rand() * 24);
        chunks.push(text.slice(i, i + size));
        i += size;
      }
      assert.equal(streamed(chunks, shapes), shapes.text(text), JSON.stringify(chunks));
      if (n % 4 === 0) assert.equal(released(chunks.map(delta), shapes).map((e) => e.delta).join(""), shapes.text(text), `events: ${JSON.stringify(chunks)}`);
    }
  });
});
