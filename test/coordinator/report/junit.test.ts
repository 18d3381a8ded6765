// toJUnitXml (coordinator/report/junit.ts): the JUnit document is well-formed XML 1.0, read back
// with a small strict reader of the test's own, and carries the counts, cases and escaping.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CaseResult, SuiteResult, toJUnitXml } from "../../../index.ts";

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

  test("a failed trajectory check gives its reason, pointing at the step", () => {
    const reason = 'expected get_weather(city="London"), got get_weather(city="Paris") at step 2';
    const r = new CaseResult({ name: "weather", agentId: "geo", reliabilityPassed: false, reliability: { passed: false, passedToolCalls: [], failedToolCalls: [], additionalToolCalls: [], missingToolCalls: ['get_weather(city="London")'], reason } });
    const tc = child(child(parseXml(toJUnitXml(new SuiteResult([r]), "s", when)), "testsuite")!, "testcase")!;
    assert.equal(child(tc, "failure")!.attrs.message, `reliability failed: ${reason}`);
    assert.equal(child(tc, "failure")!.attrs.type, "check");
  });

  test("an empty suite is still a valid document", () => {
    const root = parseXml(toJUnitXml(new SuiteResult([]), "empty", when));
    assert.equal(root.attrs.tests, "0");
    assert.equal(child(root, "testsuite")!.children.filter((c) => c.name === "testcase").length, 0);
  });
});

describe("toJUnitXml: no secret in the document", () => {
  test("a key in an error, a reason, an output and a name is absent, even where a message is cut at 1000 characters", async () => {
    const { registerSecret } = await import("../../../shared/redaction/secrets.ts");
    const key = "junit-key-Q7f2LmX9vT4wZ1bN8c";
    registerSecret(key);
    // The error is long enough for the 1000-character message cut to fall inside the key: a
    // redaction after the cut would leave a piece of it.
    const long = `${"x".repeat(990)} ${key} tail`;
    const suite = new SuiteResult([
      new CaseResult({ name: `case-${key}`, agentId: "geo", error: `agent: Error: ${long}`, output: `out ${key}` }),
      new CaseResult({ name: "reasons", agentId: "geo", judgePassed: false, judgeReason: `saw ${key}`, score: { value: 0, passed: false, reason: `scorer ${key}` } }),
    ]);
    const xml = toJUnitXml(suite, `suite ${key}`);
    parseXml(xml);
    for (let i = 0; i + 8 <= key.length; i++) assert.ok(!xml.includes(key.slice(i, i + 8)), `a piece of the key: ${key.slice(i, i + 8)}`);
    assert.match(xml, /\[REDACTED\]/);
  });
});
