// Quick subsets (coordinator/run/subset.ts): --grep, --filter-metadata (same key ORs, different
// keys AND), --sample with a seed (reproducible, declaration order), --limit; all ANDed after the
// selection, and bad values refused naming the flag.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Case } from "../../../index.ts";
import { selectCases } from "../../../coordinator/run/select.ts";
import { applySubset, drawSeed, grepPattern, hasSubset, metadataFilters, sample } from "../../../coordinator/run/subset.ts";
import { EvalfleetError } from "../../../shared/errors.ts";
import { StubAgent } from "../../support/doubles.ts";

const agent = new StubAgent();
const mk = (name: string, metadata: Record<string, unknown> | null = null, tags: string[] = []): Case => new Case({ name, agent, input: "q", expectedOutput: "x", metadata, tags });
const cases = [
  mk("refund_basic", { lang: "en", tier: "gold", area: { team: "billing" } }, ["smoke"]),
  mk("refund_partial", { lang: "de", tier: "gold", labels: ["hard", "money"] }),
  mk("shipping_late", { lang: "en", tier: "free" }, ["smoke"]),
  mk("shipping_lost", { lang: "fr", tier: "gold" }),
  mk("greeting", null),
];
const names = (sel: ReturnType<typeof selectCases>): string[] => sel.map((s) => s.case.name);
const all = selectCases(cases);

test("--grep keeps names the regular expression finds, in declaration order; a bad pattern names the flag", () => {
  assert.deepEqual(names(applySubset(all, { grep: "^refund_" })), ["refund_basic", "refund_partial"]);
  assert.deepEqual(names(applySubset(all, { grep: "late|lost" })), ["shipping_late", "shipping_lost"]);
  assert.deepEqual(names(applySubset(all, { grep: "REFUND" })), [], "case-sensitive");
  assert.throws(() => grepPattern("(refund"), (err: unknown) => err instanceof EvalfleetError && err.code === "USAGE" && /^--grep: not a regular expression: '\(refund'/.test(err.message));
});

test("--filter-metadata: the same key ORs, different keys AND; dotted keys and list values; cases without metadata never match", () => {
  assert.deepEqual(names(applySubset(all, { filterMetadata: ["lang=en"] })), ["refund_basic", "shipping_late"]);
  assert.deepEqual(names(applySubset(all, { filterMetadata: ["lang=en", "lang=de"] })), ["refund_basic", "refund_partial", "shipping_late"]);
  assert.deepEqual(names(applySubset(all, { filterMetadata: ["lang=en", "lang=de", "tier=gold"] })), ["refund_basic", "refund_partial"]);
  assert.deepEqual(names(applySubset(all, { filterMetadata: ["area.team=billing"] })), ["refund_basic"]);
  assert.deepEqual(names(applySubset(all, { filterMetadata: ["labels=money"] })), ["refund_partial"]);
  assert.deepEqual(names(applySubset(all, { filterMetadata: ["lang=es"] })), []);
  assert.deepEqual([...metadataFilters(["a=1", "b=x=y", "a=2"])], [["a", ["1", "2"]], ["b", ["x=y"]]], "a value may hold '='");
  assert.throws(() => metadataFilters(["lang"]), /--filter-metadata must be key=value, got 'lang'/);
  assert.throws(() => metadataFilters(["=en"]), /--filter-metadata must be key=value, got '=en'/);
});

test("--sample draws N with its seed: the same seed the same cases, in declaration order; another seed usually others", () => {
  const items = Array.from({ length: 100 }, (_, i) => i);
  const a = sample(items, 10, 42);
  assert.equal(a.length, 10);
  assert.deepEqual(a, sample(items, 10, 42), "reproducible");
  assert.deepEqual(a, [...a].sort((x, y) => x - y), "in order");
  assert.equal(new Set(a).size, 10, "distinct");
  assert.notDeepEqual(a, sample(items, 10, 43));
  assert.deepEqual(sample(items, 500, 1), items, "N over the count keeps everything");
  // Every item can be drawn (no off-by-one at either end).
  const seen = new Set<number>();
  for (let seed = 0; seed < 400; seed++) for (const x of sample(items.slice(0, 10), 3, seed)) seen.add(x);
  assert.equal(seen.size, 10);
  assert.deepEqual(names(applySubset(all, { sample: 2, seed: 7 })), names(applySubset(all, { sample: 2, seed: 7 })));
  assert.throws(() => applySubset(all, { sample: 2 }), /--sample needs a seed/);
  const s = drawSeed(() => 0.5);
  assert.equal(s, 2 ** 31);
  assert.equal(drawSeed(() => 0.9999999999), 4294967295);
});

test("--limit keeps the first N after every other filter; the filters AND with the selection", () => {
  assert.deepEqual(names(applySubset(all, { limit: 2 })), ["refund_basic", "refund_partial"]);
  assert.deepEqual(names(applySubset(all, { limit: 99 })), names(all));
  const smoke = selectCases(cases, { tag: "smoke" });
  assert.deepEqual(names(applySubset(smoke, { grep: "refund|shipping", filterMetadata: ["lang=en"], limit: 1 })), ["refund_basic"]);
  assert.deepEqual(names(applySubset(smoke, { grep: "shipping", limit: 1 })), ["shipping_late"]);
  assert.equal(hasSubset({}), false);
  assert.equal(hasSubset({ grep: null, limit: null, sample: null, filterMetadata: [] }), false);
  assert.equal(hasSubset({ limit: 3 }), true);
});
