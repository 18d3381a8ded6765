// The redactor (shared/redaction/redact.ts): known values in every form they can take in an output, the
// shapes of well-known credentials, plain data walked copy-on-write, and what it must leave alone.
// The exhaustive checks put every secret at every position of a text and search the result for
// any 8-character piece of it.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { CLEAN_MEMO_MAX_TEXT, CLEAN_MEMO_SIZE, REDACTED, Redactor, secretForms } from "../../../shared/redaction/redact.ts";
import { leakedPiece, prng } from "../../support/secrets.ts";

const KEY = "proj-key-Q7f2LmX9vT4wZ1bN8c";
const TOKEN = "nats.token/with+odd=chars";
const QUOTED = 'pa"ss\\word-123';
const SEED = `SU${"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".repeat(2).slice(0, 56)}`;

describe("known secrets", () => {
  const r = new Redactor([KEY, TOKEN, QUOTED, ""]);

  test("each is replaced wherever it appears, as often as it appears; the rest is kept", () => {
    assert.equal(r.text(`a ${KEY} b ${KEY}${TOKEN}c`), `a ${REDACTED} b ${REDACTED}${REDACTED}c`);
    assert.equal(r.text("nothing here"), "nothing here");
    assert.equal(r.text(""), "");
  });

  test("in its JSON-escaped and percent-encoded forms too (a log line, a stored report, a URL)", () => {
    const json = JSON.stringify({ m: `say ${QUOTED}` });
    assert.ok(!json.includes(QUOTED), "the JSON form differs from the raw one");
    assert.equal(r.text(json), JSON.stringify({ m: `say ${REDACTED}` }));
    assert.equal(r.text(`https://h/?t=${encodeURIComponent(TOKEN)}&x=1`), `https://h/?t=${REDACTED}&x=1`);
    assert.deepEqual(secretForms("plain-value"), ["plain-value"]);
  });

  test("a secret that contains another is removed whole (longest first)", () => {
    const nested = new Redactor(["abcdefgh", "xxabcdefghyy"]);
    assert.equal(nested.text("1 xxabcdefghyy 2 abcdefgh"), `1 ${REDACTED} 2 ${REDACTED}`);
    assert.equal(nested.longest, 12);
  });

  test("regular-expression characters in a secret are literal", () => {
    const odd = new Redactor(["a.b*c+d?(e)[f]{g}|h^$\\/-"]);
    assert.equal(odd.text("x a.b*c+d?(e)[f]{g}|h^$\\/- y axb*c"), `x ${REDACTED} y axb*c`);
  });

  test("exhaustive: every secret at every position of a text leaves no 8-character piece of itself", () => {
    const base = "The agent said: 'done'. Tools: add, multiply.\n{\"k\": [1, 2]} <b>&amp;</b>";
    for (const secret of [KEY, TOKEN, QUOTED]) {
      for (let at = 0; at <= base.length; at++) {
        const text = base.slice(0, at) + secret + base.slice(at);
        const out = r.text(text);
        assert.equal(leakedPiece(out, secret), null, `${secret} at ${at}: ${out}`);
        assert.equal(out, base.slice(0, at) + REDACTED + base.slice(at));
      }
    }
  });
});

describe("shapes recognised without being known", () => {
  const r = new Redactor([]);

  test("Bearer tokens keep the word, lose the token", () => {
    assert.equal(r.text("Authorization: Bearer abc.DEF-123_~+/=="), `Authorization: Bearer ${REDACTED}`);
    assert.equal(r.text("header was bearer\tZ9z9z9"), `header was bearer ${REDACTED}`);
  });

  test("sk- keys, of every family", () => {
    for (const key of [`sk-${"a".repeat(40)}`, "sk-proj-AbC_dEf-0123456789", "sk-ant-api03-xyzXYZ0123456789"]) {
      assert.equal(r.text(`key ${key}.`), `key ${REDACTED}.`, key);
    }
    assert.equal(r.text("task-12345678 and disk-usage"), "task-12345678 and disk-usage", "not inside a word, not short ones");
  });

  test("a NATS URL's credentials (a token, or user and password); any other URL's password; the host stays", () => {
    assert.equal(r.text("nats://alice:s3cr%40t@nats.example:4222"), `nats://${REDACTED}@nats.example:4222`);
    assert.equal(r.text("lost nats://tok3n@10.0.0.1:4222, tls://t@h and wss://u:p@h"), `lost nats://${REDACTED}@10.0.0.1:4222, tls://${REDACTED}@h and wss://${REDACTED}@h`);
    assert.equal(r.text("postgres://u:pw@db/x and https://bob:hunter2@h/"), `postgres://u:${REDACTED}@db/x and https://bob:${REDACTED}@h/`);
    assert.equal(r.text("https://example.com/a@b"), "https://example.com/a@b", "an @ in the path is not user information");
    for (const kept of ["ssh://git@github.com/x", "use postgres://USER@HOST:PORT/DATABASE", "mysql://root:***@db/evals"]) assert.equal(r.text(kept), kept, "a lone user name, a password already masked");
  });

  test("NKey seeds", () => {
    assert.equal(r.text(`seed ${SEED} end`), `seed ${REDACTED} end`);
    assert.equal(r.text(`not ${SEED}X`), `not ${SEED}X`, "a longer word is not a seed");
  });

  test("ordinary text is left alone", () => {
    const text = "The capital of France is Paris. See https://example.com/docs?q=1#top, mail me@example.com, ask-me-anything, 2 + 2 = 4.";
    assert.equal(r.text(text), text);
  });
});

describe("matches", () => {
  test("what text() replaces, with offsets and replacements, in order", () => {
    const r = new Redactor([KEY]);
    const text = `x ${KEY} Bearer tok-123 y`;
    const m = r.matches(text);
    assert.deepEqual(m, [
      { start: 2, end: 2 + KEY.length, replacement: REDACTED },
      { start: 3 + KEY.length, end: 3 + KEY.length + "Bearer tok-123".length, replacement: `Bearer ${REDACTED}` },
    ]);
    let rebuilt = "";
    let pos = 0;
    for (const x of m) {
      rebuilt += text.slice(pos, x.start) + x.replacement;
      pos = x.end;
    }
    assert.equal(rebuilt + text.slice(pos), r.text(text));
  });
});

describe("value: plain data, copy on write", () => {
  const r = new Redactor([KEY]);

  test("strings at any depth and object keys are redacted; the input is untouched", () => {
    const input = { a: [1, { b: `x${KEY}` }], [KEY]: true, n: null, ok: "fine" };
    const out = r.value(input);
    assert.deepEqual(out, { a: [1, { b: `x${REDACTED}` }], [REDACTED]: true, n: null, ok: "fine" });
    assert.equal((input.a[1] as { b: string }).b, `x${KEY}`);
  });

  test("what holds no secret is returned as is: the same object, so a clean value costs no copy", () => {
    const clean = { a: [1, { b: "x" }], c: "y" };
    assert.equal(r.value(clean), clean);
    const dirty = { keep: { b: "x" }, change: [KEY] };
    const out = r.value(dirty);
    assert.notEqual(out, dirty);
    assert.equal(out.keep, dirty.keep, "an untouched branch is shared");
  });

  test("objects that are not plain data are kept; cycles do not loop", () => {
    const when = new Date(0);
    const map = new Map([["k", KEY]]);
    const cyclic: Record<string, unknown> = { s: KEY };
    cyclic.self = cyclic;
    const out = r.value({ when, map, cyclic });
    assert.equal(out.when, when);
    assert.equal(out.map, map);
    assert.equal((out.cyclic as Record<string, unknown>).s, REDACTED);
    assert.equal(r.value("plain string " + KEY), `plain string ${REDACTED}`);
    assert.equal(r.value(42), 42);
  });

  test("a change after clean keys keeps every key, in order, with what the clean ones held", () => {
    const input = { a: 1, b: { c: "x" }, d: KEY, e: "y", [KEY]: 2 };
    const out = r.value(input);
    assert.deepEqual(Object.entries(out), [["a", 1], ["b", { c: "x" }], ["d", REDACTED], ["e", "y"], [REDACTED, 2]]);
    assert.equal(out.b, input.b, "an untouched branch before the change is shared");
  });

  test("a __proto__ key stays an own key", () => {
    const parsed = JSON.parse(`{"__proto__": {"x": "${KEY}"}, "y": 1}`) as Record<string, unknown>;
    const out = r.value(parsed);
    assert.deepEqual(Object.keys(out), ["__proto__", "y"]);
    assert.equal(JSON.stringify(out), `{"__proto__":{"x":"${REDACTED}"},"y":1}`);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
  });
});

describe("the memo of clean short texts", () => {
  test("a short text found clean is clean again; one with a secret is redacted every time", () => {
    const r = new Redactor([KEY]);
    for (let i = 0; i < 3; i++) {
      assert.equal(r.text("agentId"), "agentId");
      assert.equal(r.text(`k${KEY}`), `k${REDACTED}`);
      assert.equal(r.text("Bearer abcdef123456"), `Bearer ${REDACTED}`);
    }
  });

  test("it is per redactor: a secret added (a new redactor) is found in a text an older one remembered clean", () => {
    const secret = "late-secret-123";
    const before = new Redactor([KEY]);
    assert.equal(before.text(secret), secret);
    assert.equal(before.text(secret), secret);
    assert.equal(new Redactor([KEY, secret]).text(secret), REDACTED);
  });

  test("past its size it starts again, and keeps answering the same", () => {
    const r = new Redactor([KEY]);
    for (let i = 0; i < CLEAN_MEMO_SIZE * 2 + 10; i++) assert.equal(r.text(`word-${i}`), `word-${i}`);
    assert.equal(r.text(`x${KEY}`), `x${REDACTED}`);
    assert.equal(r.text("word-1"), "word-1");
  });

  test("texts at and past its length limit are redacted the same, remembered or not", () => {
    const r = new Redactor([KEY]);
    const pad = (n: number): string => "a".repeat(n);
    for (const n of [CLEAN_MEMO_MAX_TEXT - KEY.length, CLEAN_MEMO_MAX_TEXT - KEY.length + 1]) {
      assert.equal(r.text(pad(n) + KEY), pad(n) + REDACTED);
      assert.equal(r.text(pad(n) + KEY), pad(n) + REDACTED);
    }
    for (const n of [CLEAN_MEMO_MAX_TEXT, CLEAN_MEMO_MAX_TEXT + 1]) {
      assert.equal(r.text(pad(n)), pad(n));
      assert.equal(r.text(pad(n)), pad(n));
    }
  });
});

describe("random texts (seeded): no secret survives, nothing else changes", () => {
  test("1000 texts of random words with known secrets and shapes mixed in", () => {
    const rand = prng(15);
    const known = Array.from({ length: 10 }, (_, i) => `known-${i}-${Math.floor(rand() * 1e12).toString(36)}`);
    const r = new Redactor(known);
    const words = ["the", "agent", "said", "ok", "\n", "{", "}", "\"", "a:b", "x@y", "https://h/p", "s", "sk", "Bear", "-", "#"];
    for (let n = 0; n < 1000; n++) {
      const parts: string[] = [];
      const planted: string[] = [];
      for (let w = 0; w < 30; w++) {
        const roll = rand();
        if (roll < 0.05) planted.push(known[Math.floor(rand() * known.length)]!);
        else if (roll < 0.07) planted.push(`sk-${Math.floor(rand() * 1e15).toString(36).padStart(10, "0")}${Math.floor(rand() * 1e15).toString(36).padStart(10, "0")}x9yz`);
        else {
          parts.push(words[Math.floor(rand() * words.length)]!);
          continue;
        }
        parts.push(planted.at(-1)!);
      }
      const text = parts.join(" ");
      const out = r.text(text);
      for (const s of planted) assert.equal(leakedPiece(out, s), null, `${s} in ${out}`);
      const withoutSecrets = parts.map((p) => (planted.includes(p) ? REDACTED : p)).join(" ");
      assert.equal(out, withoutSecrets);
    }
  });
});
