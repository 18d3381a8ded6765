// OpenTelemetry end to end: real runs export their spans over OTLP/HTTP (http/json) to a receiver
// in this test. A distributed run (a coordinator and two worker processes on a private
// nats-server) is one trace: the run's span on the coordinator, each case's span on a worker under
// it, the phases and checks under the case, and the agent's own span (made through
// @opentelemetry/api) under its case, a token in its attributes redacted by its shape. A local
// run: a model call's GenAI span under the judge's check, its messages captured only when asked,
// and redacted.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, outputOf, waitFor } from "./harness/processes.ts";
import { startScriptedOpenAI, type ScriptedOpenAIServer } from "../test/support/openai-server.ts";

const SUITE = fixture("traced-suite.ts");

/** One exported span, flattened: its resource's attributes beside its own. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: OtlpValue[] } };

function valueOf(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attrs = (list: Array<{ key: string; value: OtlpValue }> | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/** A local OTLP/HTTP traces receiver that accepts JSON only (so the exporter really speaks http/json). */
async function startReceiver(): Promise<{ url: string; spans: ExportedSpan[]; contentTypes: Set<string>; close: () => Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      contentTypes.add(String(req.headers["content-type"]));
      if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).startsWith("application/json")) {
        res.writeHead(415).end();
        return;
      }
      const parsed = JSON.parse(body) as { resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }> };
      for (const rs of parsed.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: String(s.traceId),
              spanId: String(s.spanId),
              parentSpanId: String(s.parentSpanId ?? ""),
              name: String(s.name),
              kind: Number(s.kind),
              attributes: attrs(s.attributes as never),
              resource,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, spans, contentTypes, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("OpenTelemetry traces over OTLP/HTTP (http/json)", () => {
  const nats = useNatsServer();
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let model: ScriptedOpenAIServer;
  before(async () => {
    rx = await startReceiver();
    model = await startScriptedOpenAI();
  });
  after(async () => {
    await rx?.close();
    await model?.close();
  });
  const otel = (): Record<string, string> => ({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "evalfleet-it" });

  test("a distributed run is one trace across the coordinator and two workers; parents right; the agent's own span under its case", async () => {
    rx.spans.length = 0;
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-trace-"));
    const runId = "traced-dist";
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir, ...otel() };
    const workers = [1, 2].map(() => evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--concurrency", "1", "--log-level", "warn"], env));
    const coordinator = evalfleet(["coordinator", "run", SUITE, "--run-id", runId], env);
    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 0, outputOf(c));
    const workerPids = workers.map((w) => w.child.pid);
    for (const w of workers) assert.equal((await exitOf(w, "a --run worker once its run is over")).code, 0);

    const named = (prefix: string): ExportedSpan[] => rx.spans.filter((s) => s.name.startsWith(prefix));
    // Every process flushed before it exited; the receiver may still be parsing the last request.
    await waitFor(() => named("agent.own-work").length === 6 && named("evalfleet.run").length === 1, () => `6 agent spans and the run span, got ${rx.spans.map((s) => s.name).join(", ")}`, 10_000);
    assert.deepEqual([...rx.contentTypes], ["application/json"]);

    // One trace.
    assert.deepEqual([...new Set(rx.spans.map((s) => s.traceId))], [named("evalfleet.run")[0]!.traceId]);
    const byId = new Map(rx.spans.map((s) => [s.spanId, s]));
    const parent = (s: ExportedSpan): ExportedSpan | undefined => byId.get(s.parentSpanId);

    // The coordinator's spans: the run (a root), the publishing under it.
    const run = named("evalfleet.run")[0]!;
    assert.equal(run.parentSpanId, "");
    assert.equal(run.resource["evalfleet.role"], "coordinator");
    assert.equal(run.resource["service.name"], "evalfleet-it");
    assert.equal(run.resource["process.pid"], coordinator.child.pid);
    assert.equal(run.attributes["evalfleet.run.id"], runId);
    const publish = named("evalfleet.publish");
    assert.equal(publish.length, 1);
    assert.equal(parent(publish[0]!), run);

    // Each case's span on a worker, under the publishing: both workers ran cases.
    const cases = named("evalfleet.case ");
    assert.equal(cases.length, 6);
    for (const k of cases) {
      assert.equal(parent(k), publish[0], `${k.name} is a child of the coordinator's publish span`);
      assert.equal(k.resource["evalfleet.role"], "thread");
      assert.deepEqual(k.attributes["evalfleet.case.tags"], ["trace"]);
      assert.equal(k.attributes["evalfleet.case.attempt"], 1);
      assert.match(String(k.attributes["evalfleet.worker"]), /\S/);
      assert.equal(k.attributes["evalfleet.case.passed"], true);
      assert.equal(k.name, `evalfleet.case ${k.attributes["evalfleet.case.name"]}`);
    }
    const pids = new Set(cases.map((k) => k.resource["process.pid"]));
    assert.equal(pids.size, 2, "cases ran in two worker processes");
    assert.equal(new Set(cases.map((k) => k.attributes["evalfleet.worker"])).size, 2, "each case span names its worker process, not its thread");
    assert.deepEqual([...pids].sort(), [...workerPids].sort());

    // Phases under their case; the scorer's check under the checks phase.
    for (const k of cases) {
      const phases = rx.spans.filter((s) => s.parentSpanId === k.spanId).map((s) => s.name).sort();
      assert.deepEqual(phases, ["evalfleet.phase checks", "evalfleet.phase run", "evalfleet.phase setup", "evalfleet.phase teardown"], k.name);
      const checks = rx.spans.find((s) => s.parentSpanId === k.spanId && s.name === "evalfleet.phase checks")!;
      const scorer = rx.spans.filter((s) => s.parentSpanId === checks.spanId);
      assert.deepEqual(scorer.map((s) => [s.name, s.attributes["evalfleet.check.passed"]]), [["evalfleet.check scorer", true]]);
    }

    // The agent's own span, under its case's run phase: it saw that span active and as ctx.traceparent.
    for (const a of named("agent.own-work")) {
      const phase = parent(a)!;
      assert.equal(phase.name, "evalfleet.phase run");
      assert.ok(cases.includes(parent(phase)!), "the run phase is a case's");
      assert.equal(a.attributes["agent.active_span_id"], phase.spanId);
      assert.equal(a.attributes["agent.traceparent"], `00-${a.traceId}-${phase.spanId}-01`);
      assert.equal(a.attributes["agent.note"], "deployed with [REDACTED]", "a token in a span's attribute is redacted by its shape");
      assert.equal(a.resource["process.pid"], parent(phase)!.resource["process.pid"]);
    }
  });

  test("a local run: a model call's GenAI span under the judge's check; messages captured only when asked, and redacted", async () => {
    rx.spans.length = 0;
    const secret = "svc-key-7hQ2vN9xLm4pR8tZ";
    model.reset();
    model.handle(() => ({ content: '{"passed": true, "reason": "It answers."}', usage: { prompt_tokens: 42, completion_tokens: 9 } }));
    const env = { ...otel(), EVALFLEET_TEST_OPENAI_URL: model.url, TRACED_SERVICE_API_KEY: secret, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" };
    const r = await exitOf(evalfleet(["run", SUITE, "--threads", "1", "--name", "judged", "--name", "traced_0"], env), "evalfleet run", 60_000);
    assert.equal(r.code, 0, outputOf(r));
    await waitFor(() => rx.spans.some((s) => s.name === "evalfleet.run"), "the run span", 10_000);
    const byId = new Map(rx.spans.map((s) => [s.spanId, s]));
    const chat = rx.spans.filter((s) => s.name === "chat trace-judge");
    assert.equal(chat.length, 1);
    const call = chat[0]!;
    assert.equal(call.kind, 3, "a CLIENT span");
    assert.equal(call.attributes["gen_ai.operation.name"], "chat");
    assert.equal(call.attributes["gen_ai.request.model"], "trace-judge");
    assert.equal(call.attributes["gen_ai.usage.input_tokens"], 42);
    assert.equal(call.attributes["gen_ai.usage.output_tokens"], 9);
    assert.equal(call.attributes["server.address"], "127.0.0.1");
    const check = byId.get(call.parentSpanId)!;
    assert.equal(check.name, "evalfleet.check judge");
    assert.equal(check.attributes["evalfleet.check.passed"], true);
    assert.equal(byId.get(byId.get(check.parentSpanId)!.parentSpanId)!.name, "evalfleet.case judged");
    // The prompt is there, the secret in it is not.
    const input = String(call.attributes["gen_ai.input.messages"]);
    assert.match(input, /judged with \[REDACTED\]/);
    assert.ok(!JSON.stringify(rx.spans).includes(secret), "no span holds the secret");
    assert.match(String(call.attributes["gen_ai.output.messages"]), /It answers/);
    // Local mode: the cases' spans come from this process's threads, under the run's.
    const run = rx.spans.find((s) => s.name === "evalfleet.run")!;
    for (const k of rx.spans.filter((s) => s.name.startsWith("evalfleet.case "))) assert.equal(k.parentSpanId, run.spanId);

    // Without the capture variable, no message content.
    rx.spans.length = 0;
    const { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: _, ...plain } = env;
    const again = await exitOf(evalfleet(["run", SUITE, "--threads", "1", "--name", "judged"], plain), "evalfleet run", 60_000);
    assert.equal(again.code, 0, outputOf(again));
    await waitFor(() => rx.spans.some((s) => s.name === "chat trace-judge"), "the model call span", 10_000);
    const quiet = rx.spans.find((s) => s.name === "chat trace-judge")!;
    assert.equal(quiet.attributes["gen_ai.input.messages"], undefined);
    assert.equal(quiet.attributes["gen_ai.output.messages"], undefined);
  });
});
