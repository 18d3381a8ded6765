/**
 * What redaction costs per result (shared/redaction/redact.ts, shared/redaction/secrets.ts): a 256 KB output (the
 * largest a result carries across a boundary) with 10 known secrets of 40 characters planted in
 * it, and the same output clean; through the redactor's text pass, a whole CaseResult, the
 * streaming redactor (1 KB chunks) and the event redactor (100-character deltas). Then the
 * credential shapes (shared/redaction/shapes.ts): a mixed output (prose, code, JSON, URLs, the
 * near misses of the shapes' quick tests) clean and with 10 shaped tokens in it, and each output
 * with the shapes off (`redactShapes: false`, known values only) beside it, so the shapes' share
 * shows. Prints ns/byte, the fastest of 25 rounds and their median (a shared machine's other work
 * only ever adds time). Run: `node --import tsx bench/redact.ts`.
 */
import { performance } from "node:perf_hooks";
import { Redactor } from "../shared/redaction/redact.ts";
import { EventStreamRedactor, StreamRedactor } from "../shared/redaction/redact-stream.ts";
import { CaseResult } from "../shared/result/result.ts";
import { shapedTokens } from "../test/support/token-shapes.ts";

const SIZE = 256 * 1024;
const ROUNDS = 25;

/** Deterministic pseudo-random text: words, punctuation, URLs and JSON-ish bits, like an agent's output. */
function output(seed: number): string {
  const words = ["the", "agent", "called", "add(2, 3)", "and", "got", "5.", "See", "https://example.com/docs?q=1", "{\"ok\": true}", "Paris", "is", "the", "capital", "\n"];
  let a = seed;
  let text = "";
  while (text.length < SIZE) {
    a = (a * 1103515245 + 12345) >>> 0;
    text += `${words[a % words.length]} `;
  }
  return text.slice(0, SIZE);
}

/**
 * Deterministic text like a coding agent's output: prose, code, JSON, paths and URLs, with the
 * near misses the shapes' quick tests stop at (`task-...`, `snake_case`, `user@host` URLs, a
 * `Bearer token` mention, uppercase words).
 */
function mixed(seed: number): string {
  const words = [
    "The", "agent", "read", "the", "config", "and", "ran", "`npm test`:", "all", "passed.", "\n", "const", "user_name", "=", "await", "fetchUser(id);",
    "{\"task_id\": \"task-1234\", \"status\": \"done\", \"items\": [1, 2, 3]}", "see", "https://docs.example.com/api/v2?page=3", "ssh://git@github.com/org/repo.git",
    "user@example.com", "SUCCESS:", "README.md", "src/lib/disk-usage.ts", "a", "Bearer", "token", "goes", "in", "the", "header.", "risk-adjusted", "snake_case_name", "SELECT", "*", "FROM", "runs;", "Skip", "it.",
  ];
  let a = seed;
  let text = "";
  while (text.length < SIZE) {
    a = (a * 1103515245 + 12345) >>> 0;
    text += `${words[a % words.length]} `;
  }
  return text.slice(0, SIZE);
}

const secrets = Array.from({ length: 10 }, (_, i) => `secret-${i}-${"x7Qp2Lm9".repeat(4)}`);
const redactor = new Redactor(secrets);
const clean = output(1);
let dirty = clean;
for (let i = 0; i < secrets.length; i++) {
  const at = Math.floor(((i + 0.5) / secrets.length) * dirty.length);
  dirty = `${dirty.slice(0, at)} ${secrets[i]} ${dirty.slice(at)}`;
}
dirty = dirty.slice(0, SIZE);

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function measure(label: string, bytes: number, fn: () => unknown): void {
  for (let i = 0; i < 3; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    fn();
    samples.push(((performance.now() - t) * 1e6) / bytes);
  }
  const best = Math.min(...samples);
  console.log(`${label.padEnd(46)} ${best.toFixed(2).padStart(6)} ns/byte (median ${median(samples).toFixed(2).padStart(6)})  ${((best * bytes) / 1e6).toFixed(2)} ms per 256 KB`);
}

console.log(`256 KB output, ${secrets.length} known secrets of ${secrets[0]!.length} characters, plus the key shapes`);
measure("text(): clean output", clean.length, () => redactor.text(clean));
measure("text(): 10 secrets in it", dirty.length, () => redactor.text(dirty));
if (redactor.text(dirty).includes(secrets[0]!)) throw new Error("a secret survived");
const result = new CaseResult({ name: "big", output: dirty, error: `agent: failed with ${secrets[3]}`, judgeReason: "fine" });
measure("value(): a CaseResult's data (output + texts)", dirty.length, () => redactor.value(result.toData()));
measure("StreamRedactor: 1 KB chunks", dirty.length, () => {
  const s = new StreamRedactor(redactor);
  let n = 0;
  for (let i = 0; i < dirty.length; i += 1024) n += s.push(dirty.slice(i, i + 1024)).length;
  return n + s.flush().length;
});
measure("EventStreamRedactor: 100-character deltas", dirty.length, () => {
  const s = new EventStreamRedactor(redactor);
  let n = 0;
  for (let i = 0; i < dirty.length; i += 100) n += s.push({ type: "text_delta", delta: dirty.slice(i, i + 100) }).length;
  return n + s.flush().length;
});

// The credential shapes: their share of the cost, side by side with the known values alone.
const noShapes = new Redactor(secrets, { shapes: [] });
const tokens = shapedTokens().slice(2, 12);
const other = mixed(2);
let shaped = other;
for (let i = 0; i < tokens.length; i++) {
  const at = shaped.indexOf(" ", Math.floor(((i + 0.5) / tokens.length) * shaped.length));
  shaped = `${shaped.slice(0, at)} ${tokens[i]!.token} ${shaped.slice(at)}`;
}
shaped = shaped.slice(0, SIZE);
const cut = redactor.text(shaped);
for (const t of tokens) if (cut.includes(t.secret)) throw new Error(`${t.label} survived`);
console.log(`\nthe credential shapes (${redactor.shapes.length}) beside the known values alone (redactShapes: false)`);
measure("text(): clean output, shapes off", clean.length, () => noShapes.text(clean));
measure("text(): mixed output, clean", other.length, () => redactor.text(other));
measure("text(): mixed output, clean, shapes off", other.length, () => noShapes.text(other));
measure("text(): mixed output, 10 shaped tokens in it", shaped.length, () => redactor.text(shaped));
measure("StreamRedactor: mixed output, 1 KB chunks", other.length, () => {
  const s = new StreamRedactor(redactor);
  let n = 0;
  for (let i = 0; i < other.length; i += 1024) n += s.push(other.slice(i, i + 1024)).length;
  return n + s.flush().length;
});
