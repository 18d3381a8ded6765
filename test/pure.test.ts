import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Case, CaseResult, ExitCode, Score, ScoreRangeError, SuiteResult, exitCodeFor, selectCases, suiteFingerprint, toJUnitXml } from "../index.ts";
import type { CaseOptions, ScoreData } from "../index.ts";
import { contentAsString, toolsCalled } from "../worker/evidence.ts";
import { pyRepr, round3 } from "../shared/py-format.ts";
import { describeSelector } from "../coordinator/select.ts";
import { ResultCollector, reassemble } from "../coordinator/reassemble.ts";
import { StubAgent, StubScorer } from "./support/doubles.ts";

/**
 * The pure building blocks: evidence text, Python formatting, Score, CaseResult/SuiteResult and
 * their JSON contract (spec J, K), selection (B), reassembly, exit codes, JUnit, fingerprints.
 */

const agent = new StubAgent({ id: "stub-agent" });

function mkCase(name: string, extra: Partial<CaseOptions> = {}): Case {
  return new Case({ name, input: "What is the capital of France?", agent, criteria: "Mentions Paris.", ...extra });
}

/** A deterministic PRNG (mulberry32), so the property test is reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], rand: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// A small, strict XML 1.0 reader: enough to prove the JUnit text is well-formed and read it back.

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

function parseXml(xml: string): XmlNode {
  const bad = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u.exec(xml);
  assert.equal(bad, null, `character not allowed in XML 1.0: U+${bad?.[0].codePointAt(0)?.toString(16).padStart(4, "0")}`);
  let i = 0;
  const fail = (why: string): never => assert.fail(`malformed XML at ${i}: ${why}\n${xml.slice(Math.max(0, i - 40), i + 40)}`);
  const skipWs = (): void => {
    while (i < xml.length && /\s/.test(xml[i]!)) i++;
  };
  const readName = (): string => {
    const m = /[A-Za-z_][\w.:-]*/y;
    m.lastIndex = i;
    const found = m.exec(xml);
    if (!found) fail("expected a name");
    i += found![0].length;
    return found![0];
  };
  const decode = (raw: string): string => {
    if (raw.includes("<")) fail("raw < in character data");
    return raw.replace(/&([^;]*);|&/g, (all, ref: string | undefined) => {
      if (ref === undefined) return fail("bare &");
      const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
      if (ref in named) return named[ref]!;
      const num = /^#(\d+)$/.exec(ref) ?? null;
      const hex = /^#x([0-9a-fA-F]+)$/.exec(ref) ?? null;
      const code = num ? Number(num[1]) : hex ? parseInt(hex[1]!, 16) : fail(`unknown entity ${all}`);
      const char = String.fromCodePoint(code);
      if (/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u.test(char)) fail(`character reference to an illegal character ${all}`);
      return char;
    });
  };
  const element = (): XmlNode => {
    if (xml[i] !== "<") fail("expected <");
    i++;
    const node: XmlNode = { name: readName(), attrs: {}, children: [], text: "" };
    for (;;) {
      skipWs();
      if (xml.startsWith("/>", i)) {
        i += 2;
        return node;
      }
      if (xml[i] === ">") {
        i++;
        break;
      }
      const attr = readName();
      skipWs();
      if (xml[i] !== "=") fail("expected =");
      i++;
      skipWs();
      const quote = xml[i];
      if (quote !== '"' && quote !== "'") fail("expected a quoted value");
      const end = xml.indexOf(quote!, i + 1);
      if (end === -1) fail("unterminated attribute");
      if (attr in node.attrs) fail(`duplicate attribute ${attr}`);
      node.attrs[attr] = decode(xml.slice(i + 1, end));
      i = end + 1;
    }
    for (;;) {
      if (i >= xml.length) fail(`unclosed <${node.name}>`);
      if (xml.startsWith("</", i)) {
        i += 2;
        const closing = readName();
        if (closing !== node.name) fail(`</${closing}> closes <${node.name}>`);
        skipWs();
        if (xml[i] !== ">") fail("expected >");
        i++;
        return node;
      }
      if (xml.startsWith("<![CDATA[", i)) {
        const end = xml.indexOf("]]>", i);
        if (end === -1) fail("unterminated CDATA");
        node.text += xml.slice(i + 9, end);
        i = end + 3;
      } else if (xml[i] === "<") {
        node.children.push(element());
      } else {
        const next = xml.indexOf("<", i);
        const raw = xml.slice(i, next === -1 ? xml.length : next);
        if (raw.includes("]]>")) fail("]]> in character data");
        node.text += decode(raw);
        i += raw.length;
      }
    }
  };
  const decl = /^<\?xml version="1\.0"( encoding="UTF-8")?\?>/.exec(xml);
  if (decl) i = decl[0].length;
  skipWs();
  const root = element();
  skipWs();
  if (i !== xml.length) fail("content after the root element");
  return root;
}

const child = (node: XmlNode, name: string): XmlNode | undefined => node.children.find((c) => c.name === name);

describe("parseXml (the test's own checker)", () => {
  test("rejects malformed documents", () => {
    assert.throws(() => parseXml("<a><b></a>"));
    assert.throws(() => parseXml("<a>&</a>"));
    assert.throws(() => parseXml("<a>\u0001</a>"));
    assert.throws(() => parseXml('<a x="<"/>'));
    assert.throws(() => parseXml("<a/><b/>"));
    assert.throws(() => parseXml("<a>&foo;</a>"));
    assert.throws(() => parseXml("<a>&#0;</a>"));
    assert.deepEqual(parseXml('<a x="&lt;&amp;&quot;">t&gt;<b/></a>').attrs, { x: '<&"' });
  });
});

// ---------------------------------------------------------------------------------------------

describe("contentAsString (spec E6)", () => {
  test("null and undefined give an empty string", () => {
    assert.equal(contentAsString(null), "");
    assert.equal(contentAsString(undefined), "");
  });

  test("a string is kept as is", () => {
    assert.equal(contentAsString("Paris"), "Paris");
    assert.equal(contentAsString(""), "");
    assert.equal(contentAsString('{"not": "parsed"}'), '{"not": "parsed"}');
  });

  test("structured content is written as Python's json.dumps would (', ' and ': ' separators)", () => {
    assert.equal(contentAsString({ answer: 42 }), '{"answer": 42}');
    assert.equal(
      contentAsString({ a: [1, 2, { b: null }], c: { d: true, e: 'x"y' } }),
      '{"a": [1, 2, {"b": null}], "c": {"d": true, "e": "x\\"y"}}',
    );
    assert.equal(contentAsString([]), "[]");
    assert.equal(contentAsString({}), "{}");
    assert.equal(contentAsString([[1, [2, []]], {}]), "[[1, [2, []]], {}]");
  });

  test("non-ASCII is kept (ensure_ascii=False)", () => {
    assert.equal(contentAsString({ city: "Zürich", emoji: "🗼" }), '{"city": "Zürich", "emoji": "🗼"}');
  });

  test("falsy values are kept", () => {
    assert.equal(contentAsString(0), "0");
    assert.equal(contentAsString(false), "false");
    assert.equal(contentAsString(true), "true");
    assert.equal(contentAsString(3.5), "3.5");
  });

  test("undefined members are dropped from objects and become null in arrays, as JSON does", () => {
    assert.equal(contentAsString({ a: 1, b: undefined }), '{"a": 1}');
    assert.equal(contentAsString([1, undefined]), "[1, null]");
  });

  test("a sparse array still gives valid JSON", () => {
    const text = contentAsString([, 1]);
    assert.equal(text, "[null, 1]");
    assert.deepEqual(JSON.parse(text), [null, 1]);
  });

  test("the same object twice (no cycle) is serialised twice", () => {
    const shared = { x: 1 };
    assert.equal(contentAsString({ a: shared, b: [shared] }), '{"a": {"x": 1}, "b": [{"x": 1}]}');
  });

  test("a cycle falls back to a util.inspect form without throwing", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    let text = "";
    assert.doesNotThrow(() => (text = contentAsString(cyclic)));
    assert.match(text, /\[Circular \*1\]/);
    assert.match(text, /name: 'loop'/);
  });

  test("a BigInt inside falls back to the inspect form", () => {
    const text = contentAsString({ tokens: 10n, model: "m" });
    assert.equal(text, "{ tokens: 10n, model: 'm' }");
  });

  test("a Date serialises through toJSON", () => {
    const at = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
    assert.equal(contentAsString(at), '"2024-01-02T03:04:05.000Z"');
    assert.equal(contentAsString({ at }), '{"at": "2024-01-02T03:04:05.000Z"}');
  });
});

describe("toolsCalled (spec E7)", () => {
  test("top-level tools then members' tools, one level deep only", () => {
    const names = toolsCalled({
      tools: [{ toolName: "delegate_task_to_member" }, { toolName: "search" }],
      memberResponses: [
        { tools: [{ toolName: "multiply" }], memberResponses: [{ tools: [{ toolName: "grandchild_tool" }] }] },
        { tools: [{ toolName: "add" }, { toolName: "format" }] },
      ],
    });
    assert.deepEqual(names, ["delegate_task_to_member", "search", "multiply", "add", "format"]);
  });

  test("a nameless call shows as ?", () => {
    assert.deepEqual(toolsCalled({ tools: [{ toolName: null }, { toolName: "" }, {}, { toolName: "ok" }] }), ["?", "?", "?", "ok"]);
  });

  test("no tools gives an empty list", () => {
    assert.deepEqual(toolsCalled({}), []);
    assert.deepEqual(toolsCalled({ tools: null, memberResponses: null }), []);
  });
});

describe("pyRepr", () => {
  test("strings are single-quoted", () => {
    assert.equal(pyRepr("nope"), "'nope'");
    assert.equal(pyRepr(""), "''");
  });

  test("quotes inside strings follow Python's choice", () => {
    assert.equal(pyRepr("it's"), `"it's"`);
    assert.equal(pyRepr('say "hi"'), `'say "hi"'`);
    assert.equal(pyRepr(`it's "x"`), `'it\\'s "x"'`);
  });

  test("backslashes and newlines are escaped", () => {
    assert.equal(pyRepr("a\\b\nc"), "'a\\\\b\\nc'");
  });

  test("None, True, False", () => {
    assert.equal(pyRepr(null), "None");
    assert.equal(pyRepr(undefined), "None");
    assert.equal(pyRepr(true), "True");
    assert.equal(pyRepr(false), "False");
  });

  test("numbers and lists", () => {
    assert.equal(pyRepr(0), "0");
    assert.equal(pyRepr(1.5), "1.5");
    assert.equal(pyRepr(["a", "b"]), "['a', 'b']");
  });
});

describe("round3", () => {
  test("rounds to milliseconds", () => {
    assert.equal(round3(1.23456), 1.235);
    assert.equal(round3(12.3456789), 12.346);
    assert.equal(round3(0.1 + 0.2), 0.3);
    assert.equal(round3(0.0004), 0);
    assert.equal(round3(2), 2);
    assert.equal(round3(0), 0);
  });

  test("rounds the stored binary value, as Python's round(x, 3) does", () => {
    // 1.2345 is stored as 1.23449999...; Python gives 1.234, naive scaling gives 1.235.
    assert.equal(round3(1.2345), 1.234);
    assert.equal(round3(1.0005), 1);
    assert.equal(round3(0.0005), 0.001);
  });

  test("exact ties go to the even digit, as Python's round does", () => {
    assert.equal(round3(0.0625), 0.062);
    assert.equal(round3(0.1875), 0.188);
    assert.equal(round3(3.0625), 3.062);
  });
});

describe("Score (spec I3)", () => {
  test("values outside [0, 1] throw with Agno's message", () => {
    assert.throws(() => new Score({ value: 1.4, passed: true }), { message: "Score.value must be in [0, 1], got 1.4" });
    assert.throws(() => new Score({ value: -0.1, passed: false }), { message: "Score.value must be in [0, 1], got -0.1" });
    assert.throws(() => new Score({ value: 1.4, passed: true }), ScoreRangeError);
  });

  test("0 and 1 are valid bounds", () => {
    assert.equal(new Score({ value: 0, passed: false }).value, 0);
    assert.equal(new Score({ value: 1, passed: true }).value, 1);
    assert.equal(new Score({ value: 0.5, passed: true, reason: "half" }).reason, "half");
  });

  test("NaN, infinities and non-numbers are invalid", () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "0.5" as unknown as number, null as unknown as number]) {
      assert.throws(() => new Score({ value, passed: true }), /Score\.value must be in \[0, 1\], got /);
    }
  });

  test("defaults and immutability", () => {
    const s = new Score({ value: 1, passed: true });
    assert.equal(s.reason, null);
    assert.equal(s.detail, null);
    assert.ok(Object.isFrozen(s));
  });

  test("Score.from validates plain data and keeps a Score as is", () => {
    const s = new Score({ value: 0.2, passed: false });
    assert.equal(Score.from(s), s);
    assert.ok(Score.from({ value: 0.3, passed: true }) instanceof Score);
    assert.throws(() => Score.from({ value: 2, passed: true }), { message: "Score.value must be in [0, 1], got 2" });
  });
});

describe("CaseResult.passed (spec J)", () => {
  const score = (passed: boolean, value = passed ? 1 : 0): ScoreData => ({ value, passed, reason: null });

  test("an error fails the case whatever the verdicts", () => {
    const r = new CaseResult({ name: "x", judgePassed: true, reliabilityPassed: true, score: score(true), error: "cleanup: OSError: could not delete" });
    assert.equal(r.passed, false);
  });

  test("no verdicts means not passed (skipped, timed out, never checked)", () => {
    assert.equal(new CaseResult({ name: "x" }).passed, false);
    assert.equal(new CaseResult({ name: "x", skipped: true, error: "skipped: suite aborted after cancelled run" }).passed, false);
    assert.equal(new CaseResult({ name: "x", timedOut: true, error: "timeout: exceeded 1s" }).passed, false);
  });

  test("every verdict true passes", () => {
    assert.equal(new CaseResult({ name: "x", judgePassed: true }).passed, true);
    assert.equal(new CaseResult({ name: "x", reliabilityPassed: true }).passed, true);
    assert.equal(new CaseResult({ name: "x", judgePassed: true, reliabilityPassed: true, score: score(true) }).passed, true);
  });

  test("any verdict false fails", () => {
    assert.equal(new CaseResult({ name: "x", judgePassed: true, reliabilityPassed: false }).passed, false);
    assert.equal(new CaseResult({ name: "x", judgePassed: false, reliabilityPassed: true }).passed, false);
  });

  test("score.passed counts as a verdict", () => {
    assert.equal(new CaseResult({ name: "x", score: score(true) }).passed, true);
    assert.equal(new CaseResult({ name: "x", score: score(false, 0.2) }).passed, false);
    assert.equal(new CaseResult({ name: "x", judgePassed: true, score: score(false) }).passed, false);
  });

  test("addError joins parts with '; '", () => {
    const r = new CaseResult({ name: "x" });
    r.addError("agent: boom mid-stream");
    r.addError("");
    r.addError("timeout: exceeded 1s");
    assert.equal(r.error, "agent: boom mid-stream; timeout: exceeded 1s");
  });
});

describe("SuiteResult (spec K)", () => {
  const pass = (name: string) => new CaseResult({ name, judgePassed: true });
  const fail = (name: string) => new CaseResult({ name, judgePassed: false });
  const skip = (name: string) => new CaseResult({ name, skipped: true, error: "skipped: suite aborted after cancelled run" });

  test("an empty suite is FAIL with zero totals", () => {
    const s = new SuiteResult([]);
    assert.equal(s.total, 0);
    assert.equal(s.passed, 0);
    assert.equal(s.failed, 0);
    assert.equal(s.status, "FAIL");
    assert.deepEqual(s.toJSON(), {
      // evalfleet's additive keys (issue 8) follow Agno's.
      summary: { total: 0, passed: 0, failed: 0, status: "FAIL", skipped: 0, run_id: null, duration_seconds: 0, pass_rate: 0, pass_threshold: null, repeat: 1, pass_at_k: null },
      cases: [],
    });
    assert.equal(new SuiteResult().status, "FAIL");
  });

  test("PASS only when every case passed", () => {
    assert.equal(new SuiteResult([pass("a"), pass("b")]).status, "PASS");
    const mixed = new SuiteResult([pass("a"), fail("b"), skip("c")]);
    assert.equal(mixed.status, "FAIL");
    assert.equal(mixed.total, 3);
    assert.equal(mixed.passed, 1);
    assert.equal(mixed.failed, 2, "skipped cases count as failed");
    assert.equal(mixed.skipped, 1);
  });

  test("toJSON keys are in the exact contract order", () => {
    const r = new CaseResult({
      name: "capital",
      tags: ["smoke"],
      agentId: "geo-agent",
      sessionId: "eval-capital-0a1b2c3d",
      durationSeconds: 1.234,
      judgePassed: true,
      judgeReason: "mentions Paris",
      reliabilityPassed: true,
      output: "Paris",
      toolsCalled: ["search"],
      score: { value: 1, passed: true, reason: "stub ok", detail: { raw: 1 } },
      index: 4,
      attempts: 2,
      worker: "thread-1",
    });
    const json = new SuiteResult([r], { runId: "run-1", durationSeconds: 2.5 }).toJSON();
    assert.deepEqual(Object.keys(json), ["summary", "cases"]);
    assert.deepEqual(Object.keys(json.summary), ["total", "passed", "failed", "status", "skipped", "run_id", "duration_seconds", "pass_rate", "pass_threshold", "repeat", "pass_at_k"]);
    assert.deepEqual(json.summary, { total: 1, passed: 1, failed: 0, status: "PASS", skipped: 0, run_id: "run-1", duration_seconds: 2.5, pass_rate: 1, pass_threshold: null, repeat: 1, pass_at_k: null });
    const agnoKeys = [
      "name", "agent_id", "team_id", "tags", "session_id", "duration_seconds",
      "judge_passed", "judge_reason", "judge_score", "reliability_passed", "output",
      "tools_called", "timed_out", "skipped", "passed", "error",
      "score_value", "score_passed", "score_reason",
    ];
    assert.equal(agnoKeys.length, 19);
    assert.deepEqual(Object.keys(json.cases[0]!), [...agnoKeys, "index", "attempts", "worker", "expectations", "repeats", "pass_rate", "pass_at_k"]);
    assert.deepEqual(json.cases[0], {
      name: "capital",
      agent_id: "geo-agent",
      team_id: null,
      tags: ["smoke"],
      session_id: "eval-capital-0a1b2c3d",
      duration_seconds: 1.234,
      judge_passed: true,
      judge_reason: "mentions Paris",
      judge_score: null,
      reliability_passed: true,
      output: "Paris",
      tools_called: ["search"],
      timed_out: false,
      skipped: false,
      passed: true,
      error: null,
      score_value: 1,
      score_passed: true,
      score_reason: "stub ok",
      index: 4,
      attempts: 2,
      worker: "thread-1",
      expectations: null,
      repeats: null,
      pass_rate: null,
      pass_at_k: null,
    });
  });

  test("score_* are null without a score; no response, detail or reliability keys", () => {
    const r = new CaseResult({
      name: "x",
      judgePassed: false,
      response: { content: "raw" },
      reliability: { passed: true, passedToolCalls: [], failedToolCalls: [], additionalToolCalls: [], missingToolCalls: [] },
    });
    const c = r.toJSON();
    assert.equal(c.score_value, null);
    assert.equal(c.score_passed, null);
    assert.equal(c.score_reason, null);
    for (const key of ["response", "detail", "reliability", "score"]) assert.ok(!(key in c), `no ${key} key`);
  });

  test("the report is JSON-serialisable even when the raw response is not", () => {
    const response: Record<string, unknown> = { content: "x", usage: 10n };
    response.self = response;
    const r = new CaseResult({ name: "x", judgePassed: true, response, tags: ["a"], toolsCalled: ["t"] });
    const suite = new SuiteResult([r]);
    const text = JSON.stringify(suite);
    assert.deepEqual(JSON.parse(text), suite.toJSON());
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r.toJSON());
  });

  test("tags and tools_called are emitted as fresh arrays", () => {
    const tags = Object.freeze(["a"]);
    const r = new CaseResult({ name: "x", tags, toolsCalled: tags });
    const c = r.toJSON();
    assert.ok(Array.isArray(c.tags) && c.tags !== tags);
    assert.ok(Array.isArray(c.tools_called) && c.tools_called !== tags);
  });
});

describe("selectCases / describeSelector (spec B)", () => {
  const cases = [
    mkCase("first", { tags: ["smoke", "geo"] }),
    mkCase("second", { tags: ["slow"] }),
    mkCase("third", { tags: ["smoke"] }),
    mkCase("fourth"),
    mkCase("First", { tags: ["smoke"] }),
  ];
  const names = (sel: ReturnType<typeof selectCases>) => sel.map((s) => s.case.name);

  test("no filter selects everything in order, with indices", () => {
    const sel = selectCases(cases);
    assert.deepEqual(names(sel), ["first", "second", "third", "fourth", "First"]);
    assert.deepEqual(sel.map((s) => s.index), [0, 1, 2, 3, 4]);
    assert.equal(sel[0]!.case, cases[0]);
  });

  test("name is exact and case-sensitive", () => {
    assert.deepEqual(names(selectCases(cases, { name: "first" })), ["first"]);
    assert.deepEqual(names(selectCases(cases, { name: "fir" })), []);
    const sel = selectCases(cases, { name: "First" });
    assert.deepEqual(sel.map((s) => s.index), [4]);
  });

  test("tag is exact membership; a list matches any of its tags", () => {
    assert.deepEqual(names(selectCases(cases, { tag: "smoke" })), ["first", "third", "First"]);
    assert.deepEqual(names(selectCases(cases, { tag: "smok" })), []);
    assert.deepEqual(names(selectCases(cases, { tag: ["slow", "geo"] })), ["first", "second"]);
  });

  test("name and tag are ANDed, order and indices are kept", () => {
    assert.deepEqual(names(selectCases(cases, { name: "third", tag: "smoke" })), ["third"]);
    assert.deepEqual(names(selectCases(cases, { name: "second", tag: "smoke" })), []);
    const sel = selectCases(cases, { name: ["First", "third", "second"], tag: "smoke" });
    assert.deepEqual(names(sel), ["third", "First"]);
    assert.deepEqual(sel.map((s) => s.index), [2, 4]);
  });

  test("null and empty lists mean no filter", () => {
    assert.equal(selectCases(cases, { name: null, tag: null }).length, 5);
    assert.equal(selectCases(cases, { name: [], tag: [] }).length, 5);
    assert.deepEqual(names(selectCases(cases, { name: [], tag: ["slow"] })), ["second"]);
  });

  test("an empty selection is an empty list, not an error", () => {
    assert.deepEqual(selectCases(cases, { tag: "nope" }), []);
    assert.deepEqual(selectCases([], {}), []);
  });

  test("describeSelector prints the selector as Agno does", () => {
    assert.equal(describeSelector({ tag: "nope" }), "name=None, tag='nope'");
    assert.equal(describeSelector({}), "name=None, tag=None");
    assert.equal(describeSelector({ name: "only_case", tag: null }), "name='only_case', tag=None");
    assert.equal(describeSelector({ tag: ["a", "b"] }), "name=None, tag=['a', 'b']");
    assert.equal(describeSelector({ name: [], tag: ["x"] }), "name=None, tag='x'");
  });
});

describe("ResultCollector / reassemble", () => {
  const suite = [mkCase("a", { tags: ["t1"] }), mkCase("b"), mkCase("c", { tags: ["t2"] }), new Case({ name: "d", input: "q", team: new StubAgent({ id: "the-team" }), criteria: "x" })];
  const selected = selectCases(suite);
  const resultFor = (i: number, extra: Partial<ConstructorParameters<typeof CaseResult>[0]> = {}) =>
    new CaseResult({ name: suite[i]!.name, index: i, judgePassed: true, sessionId: `eval-${suite[i]!.name}-00000000`, durationSeconds: 1, ...extra });

  test("the first result per index wins; a duplicate is refused", () => {
    const col = new ResultCollector(selected);
    const first = resultFor(1, { worker: "w1" });
    assert.equal(col.add(first), "accepted");
    assert.equal(col.add(resultFor(1, { worker: "w2" })), "duplicate");
    assert.equal(col.has(1), true);
    assert.equal(col.size, 1);
    const out = col.finish("lost");
    assert.equal(out[1], first);
    assert.equal(out[1]!.worker, "w1");
  });

  test("an unknown index or a name mismatch is refused", () => {
    const col = new ResultCollector(selectCases(suite, { name: ["a", "c"] }));
    assert.equal(col.add(new CaseResult({ name: "b", index: 1 })), "unknown", "index not selected");
    assert.equal(col.add(new CaseResult({ name: "zz", index: 99 })), "unknown", "index not in the suite");
    assert.equal(col.add(new CaseResult({ name: "c", index: 0 })), "unknown", "name does not match the index");
    assert.equal(col.size, 0);
    assert.equal(col.add(new CaseResult({ name: "c", index: 2 })), "accepted");
    assert.equal(col.size, 1);
  });

  test("missing cases become skipped results with the reason, no session, duration 0", () => {
    const col = new ResultCollector(selected);
    col.add(resultFor(2));
    assert.equal(col.complete, false);
    assert.deepEqual(col.missing().map((s) => s.index), [0, 1, 3]);
    const out = col.finish("worker lost");
    assert.deepEqual(out.map((r) => r.name), ["a", "b", "c", "d"]);
    for (const i of [0, 1, 3]) {
      const r = out[i]!;
      assert.equal(r.skipped, true);
      assert.equal(r.error, "skipped: worker lost");
      assert.equal(r.sessionId, "");
      assert.equal(r.durationSeconds, 0);
      assert.equal(r.passed, false);
      assert.equal(r.index, i);
    }
    assert.deepEqual(out[0]!.tags, ["t1"], "tags are kept");
    assert.equal(out[0]!.agentId, "stub-agent");
    assert.equal(out[0]!.teamId, null);
    assert.equal(out[3]!.teamId, "the-team", "a team case keeps its team id");
    assert.equal(out[3]!.agentId, null);
    assert.equal(out[2]!.skipped, false);
  });

  test("declaration order regardless of arrival order", () => {
    const col = new ResultCollector(selected);
    for (const i of [3, 0, 2, 1]) assert.equal(col.add(resultFor(i)), "accepted");
    assert.equal(col.complete, true);
    assert.deepEqual(col.missing(), []);
    assert.deepEqual(col.finish("unused").map((r) => r.index), [0, 1, 2, 3]);
  });

  test("reassemble orders by index and fills gaps", () => {
    const sel = selectCases(suite, { name: ["d", "a"] });
    const held = new Map([[3, resultFor(3)]]);
    const out = reassemble([...sel].reverse(), (i) => held.get(i), "suite cancelled");
    assert.deepEqual(out.map((r) => [r.name, r.skipped, r.error]), [["a", true, "skipped: suite cancelled"], ["d", false, null]]);
  });

  test("property: 500 shuffled arrivals with duplicates fold into one result per case, in order", () => {
    const rand = prng(20260823);
    const big = Array.from({ length: 300 }, (_, i) => mkCase(`case-${i}`, { tags: i % 3 === 0 ? ["skip-me"] : ["run"] }));
    const sel = selectCases(big, { tag: "run" });
    assert.equal(sel.length, 200);
    const arrivals: CaseResult[] = [];
    // Every selected case but a few arrives 1-3 times; some unknown results arrive too.
    const neverArrive = new Set(sel.filter(() => rand() < 0.05).map((s) => s.index));
    for (const s of sel) {
      if (neverArrive.has(s.index)) continue;
      arrivals.push(new CaseResult({ name: s.case.name, index: s.index, judgePassed: true, attempts: 1 }));
    }
    while (arrivals.length < 480) {
      const s = sel[Math.floor(rand() * sel.length)]!;
      if (neverArrive.has(s.index)) continue;
      arrivals.push(new CaseResult({ name: s.case.name, index: s.index, judgePassed: rand() < 0.5, attempts: 2 }));
    }
    while (arrivals.length < 500) {
      const i = Math.floor(rand() * big.length);
      arrivals.push(i % 3 === 0 ? new CaseResult({ name: big[i]!.name, index: i }) : new CaseResult({ name: "impostor", index: i }));
    }
    shuffle(arrivals, rand);
    assert.equal(arrivals.length, 500);

    const col = new ResultCollector(sel);
    const winner = new Map<number, CaseResult>();
    const outcomes = { accepted: 0, duplicate: 0, unknown: 0 };
    for (const r of arrivals) {
      const selectedHere = sel.some((s) => s.index === r.index && s.case.name === r.name);
      const expected = !selectedHere ? "unknown" : winner.has(r.index) ? "duplicate" : "accepted";
      const got = col.add(r);
      assert.equal(got, expected, `index ${r.index} (${r.name})`);
      outcomes[got]++;
      if (got === "accepted") winner.set(r.index, r);
    }
    assert.equal(outcomes.accepted, sel.length - neverArrive.size);
    assert.equal(outcomes.unknown, 20);
    assert.ok(outcomes.duplicate > 0);
    assert.ok(neverArrive.size > 0, "the seed leaves some cases without a result");

    const out = col.finish("lost in transit");
    assert.equal(out.length, sel.length, "every selected case is accounted for exactly once");
    assert.deepEqual(out.map((r) => r.index), sel.map((s) => s.index), "declaration order");
    for (const r of out) {
      if (neverArrive.has(r.index)) {
        assert.equal(r.skipped, true);
        assert.equal(r.error, "skipped: lost in transit");
      } else {
        assert.equal(r, winner.get(r.index), "the first arrival wins");
      }
    }
  });
});

describe("exitCodeFor", () => {
  const pass = (name = "p") => new CaseResult({ name, judgePassed: true });
  const fail = (name = "f") => new CaseResult({ name, judgePassed: false });
  const skip = (name = "s") => new CaseResult({ name, skipped: true, error: "skipped: suite cancelled" });

  test("an empty run is a usage error (2), even when cancelled", () => {
    assert.equal(exitCodeFor(new SuiteResult([])), 2);
    assert.equal(exitCodeFor(new SuiteResult([], { cancelled: true })), ExitCode.Usage);
  });

  test("a cancelled run or skipped cases give 3, even with failures", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass()], { cancelled: true })), 3);
    assert.equal(exitCodeFor(new SuiteResult([fail(), pass()], { cancelled: true })), 3);
    assert.equal(exitCodeFor(new SuiteResult([fail(), skip()])), ExitCode.Incomplete);
    assert.equal(exitCodeFor(new SuiteResult([pass(), skip()]), { reportFailed: true }), 3);
  });

  test("a failed case gives 1", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass(), fail()])), 1);
    assert.equal(exitCodeFor(new SuiteResult([new CaseResult({ name: "e", judgePassed: true, error: "agent: boom" })])), ExitCode.Failed);
  });

  test("a failed report write gives 1 even when every case passed", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass()]), { reportFailed: true }), 1);
  });

  test("all passed gives 0", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass("a"), pass("b")])), 0);
    assert.equal(exitCodeFor(new SuiteResult([pass()]), { reportFailed: false }), ExitCode.Ok);
  });
});

describe("toJUnitXml", () => {
  const when = new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 123));
  const results = [
    new CaseResult({ name: "passes", agentId: "geo", judgePassed: true, output: "Paris", durationSeconds: 1.5 }),
    new CaseResult({ name: "wrong_city", agentId: "geo", judgePassed: false, judgeReason: "says Lyon", output: "Lyon" }),
    new CaseResult({ name: "slow", agentId: "geo", timedOut: true, error: "timeout: exceeded 1s" }),
    new CaseResult({ name: "crashes", teamId: "crew", error: "agent: RuntimeError: model exploded" }),
    new CaseResult({ name: "never_run", agentId: "geo", skipped: true, error: "skipped: suite aborted after cancelled run" }),
    new CaseResult({
      name: "tools",
      agentId: "geo",
      reliabilityPassed: false,
      reliability: { passed: false, passedToolCalls: [], failedToolCalls: ["rm"], additionalToolCalls: [], missingToolCalls: ["search"] },
    }),
  ];
  const suite = new SuiteResult(results, { runId: "run-42", durationSeconds: 3.25 });

  test("is well-formed and carries the counts", () => {
    const xml = toJUnitXml(suite, "math-suite", when);
    assert.ok(xml.endsWith("\n"));
    const root = parseXml(xml);
    assert.equal(root.name, "testsuites");
    const counts = { tests: "6", failures: "2", errors: "2", skipped: "1", time: "3.250" };
    for (const [k, v] of Object.entries(counts)) assert.equal(root.attrs[k], v, `testsuites ${k}`);
    const ts = child(root, "testsuite")!;
    assert.ok(ts);
    for (const [k, v] of Object.entries(counts)) assert.equal(ts.attrs[k], v, `testsuite ${k}`);
    assert.equal(ts.attrs.name, "math-suite");
    assert.equal(ts.attrs.timestamp, "2024-05-06T07:08:09");
    const prop = child(child(ts, "properties")!, "property")!;
    assert.deepEqual(prop.attrs, { name: "run_id", value: "run-42" });
  });

  test("one testcase per case with the right element: failure, error or skipped", () => {
    const ts = child(parseXml(toJUnitXml(suite, "math-suite", when)), "testsuite")!;
    const cases = ts.children.filter((c) => c.name === "testcase");
    assert.deepEqual(cases.map((c) => c.attrs.name), ["passes", "wrong_city", "slow", "crashes", "never_run", "tools"]);
    const kinds = cases.map((c) => c.children.filter((k) => k.name !== "system-out").map((k) => k.name));
    assert.deepEqual(kinds, [[], ["failure"], ["error"], ["error"], ["skipped"], ["failure"]]);

    const [passes, wrong, slow, crashes, never, tools] = cases as [XmlNode, XmlNode, XmlNode, XmlNode, XmlNode, XmlNode];
    assert.equal(passes.attrs.time, "1.500");
    assert.equal(passes.attrs.classname, "math-suite.geo");
    assert.equal(child(passes, "system-out")?.text, "Paris");
    assert.equal(child(wrong, "failure")!.attrs.type, "check");
    assert.match(child(wrong, "failure")!.attrs.message!, /judge failed: says Lyon/);
    assert.equal(child(slow, "error")!.attrs.type, "timeout");
    assert.equal(child(slow, "error")!.attrs.message, "timeout: exceeded 1s");
    assert.equal(crashes.attrs.classname, "math-suite.crew");
    assert.equal(child(crashes, "error")!.attrs.type, "agent");
    assert.equal(child(crashes, "error")!.text, "agent: RuntimeError: model exploded");
    assert.equal(child(never, "skipped")!.attrs.message, "skipped: suite aborted after cancelled run");
    assert.match(child(tools, "failure")!.attrs.message!, /missing search; unexpected rm/);
  });

  test("XML specials are escaped and control characters removed, in names and outputs", () => {
    const nasty = new CaseResult({
      name: `a<b>&"c'\u0001d`,
      agentId: "ag\u0002<&>",
      judgePassed: false,
      judgeReason: "reason <&>\u0000 here",
      output: `out <tag attr="x">&amp; ]]> \u0007bell \u001bESC \ud800lone`,
      error: null,
    });
    const errored = new CaseResult({ name: "err\u000b", agentId: "x", error: "agent: ValueError: bad <input> & \u0003 stuff" });
    const xml = toJUnitXml(new SuiteResult([nasty, errored], { runId: "run\u0005<1>" }), "suite\u0006&<", when);
    const root = parseXml(xml);
    assert.equal(root.attrs.name, "suite&<");
    const ts = child(root, "testsuite")!;
    assert.equal(child(child(ts, "properties")!, "property")!.attrs.value, "run<1>");
    const [tc1, tc2] = ts.children.filter((c) => c.name === "testcase") as [XmlNode, XmlNode];
    assert.equal(tc1.attrs.name, `a<b>&"c'd`);
    assert.equal(tc1.attrs.classname, "suite&<.ag<&>");
    assert.match(child(tc1, "failure")!.attrs.message!, /judge failed: reason <&> here/);
    assert.equal(child(tc1, "system-out")!.text, `out <tag attr="x">&amp; ]]> bell ESC lone`);
    assert.equal(tc2.attrs.name, "err");
    assert.equal(child(tc2, "error")!.attrs.message, "agent: ValueError: bad <input> &  stuff");
    assert.equal(child(tc2, "error")!.text, "agent: ValueError: bad <input> &  stuff");
  });

  test("entity-looking text (&amp; &foo; &#0; &#65;) round-trips literally and keeps the document well-formed", () => {
    const text = "a &amp; b &foo; c &#0; d &#65; e &lt;";
    const r = new CaseResult({ name: `n ${text}`, agentId: "x", error: `agent: Error: ${text}`, output: text });
    const root = parseXml(toJUnitXml(new SuiteResult([r], { runId: "&run;" }), "s &amp;", when));
    assert.equal(root.attrs.name, "s &amp;");
    const ts = child(root, "testsuite")!;
    assert.equal(child(child(ts, "properties")!, "property")!.attrs.value, "&run;");
    const tc = child(ts, "testcase")!;
    assert.equal(tc.attrs.name, `n ${text}`);
    assert.equal(child(tc, "error")!.attrs.message, `agent: Error: ${text}`);
    assert.equal(child(tc, "error")!.text, `agent: Error: ${text}`);
    assert.equal(child(tc, "system-out")!.text, text);
  });

  test("an empty suite is still a valid document", () => {
    const root = parseXml(toJUnitXml(new SuiteResult([]), "empty", when));
    assert.equal(root.attrs.tests, "0");
    assert.equal(child(root, "testsuite")!.children.filter((c) => c.name === "testcase").length, 0);
  });
});

describe("suiteFingerprint", () => {
  const build = () => [mkCase("a", { tags: ["x"] }), mkCase("b", { expectedToolCalls: ["search"] }), mkCase("c", { scorer: new StubScorer() })];

  test("is a stable sha256 for equal cases", () => {
    const fp = suiteFingerprint(build());
    assert.match(fp, /^[0-9a-f]{64}$/);
    assert.equal(suiteFingerprint(build()), fp, "separately built but equal cases give the same fingerprint");
    assert.equal(suiteFingerprint(build()), suiteFingerprint(build()));
  });

  test("changes when a name, the order or a setting changes", () => {
    const [a, b, c] = build() as [Case, Case, Case];
    const base = suiteFingerprint([a, b, c]);
    assert.notEqual(suiteFingerprint([a, mkCase("b2", { expectedToolCalls: ["search"] }), c]), base, "renamed");
    assert.notEqual(suiteFingerprint([b, a, c]), base, "reordered");
    assert.notEqual(suiteFingerprint([a, b]), base, "a case removed");
    assert.notEqual(suiteFingerprint([a, mkCase("b", { expectedToolCalls: ["lookup"] }), c]), base, "a check changed");
    assert.notEqual(suiteFingerprint([]), base);
  });
});
