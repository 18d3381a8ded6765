/**
 * What evalfleet's own model plumbing costs, against the scripted OpenAI-compatible server on
 * loopback (so the figures are evalfleet + the `openai` client + HTTP, not a model): a judge call,
 * a two-turn tool-calling run of the built-in agent, and an MCP stdio server's connect, call and
 * close. Run: `node --import tsx bench/model-overhead.ts`.
 */
import { performance } from "node:perf_hooks";
import { join } from "node:path";
import { z } from "zod";
import { buildJudgeRequest, defineTool, mcpToolkit, openAIAgent, openAIJudge } from "../index.ts";
import { startScriptedOpenAI } from "../test/support/openai-server.ts";

const CALLS = Number(process.env.BENCH_CALLS ?? 300);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
function summary(label: string, samples: number[]): void {
  const s = [...samples].sort((a, b) => a - b);
  console.log(`${label.padEnd(44)} n=${String(s.length).padStart(4)}  p50 ${percentile(s, 50).toFixed(2)} ms  p95 ${percentile(s, 95).toFixed(2)} ms  max ${s[s.length - 1]!.toFixed(2)} ms`);
}
async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const v = await fn();
  return [performance.now() - t, v];
}

const server = await startScriptedOpenAI();
try {
  // Judge: one call per request, sequential, then 8 at a time.
  server.handle(() => ({ content: '{"passed": true, "reason": "ok"}' }));
  const judge = openAIJudge({ model: "bench", baseURL: server.url, apiKey: "sk-bench-0123456789" });
  const request = buildJudgeRequest({ criteria: "Names Paris.", mode: "binary", input: "Capital of France?", output: "Paris." });
  const signal = new AbortController().signal;
  const [first] = await timed(() => judge.judge(request, { signal }));
  console.log(`${"judge: first call (loads the openai client)".padEnd(44)} ${first.toFixed(1)} ms`);
  const seq: number[] = [];
  for (let i = 0; i < CALLS; i++) seq.push((await timed(() => judge.judge(request, { signal })))[0]);
  summary("judge: one call, sequential", seq);
  const par: number[] = [];
  const started = performance.now();
  for (let i = 0; i < CALLS; i += 8) par.push(...(await Promise.all(Array.from({ length: 8 }, () => timed(() => judge.judge(request, { signal })).then(([t]) => t)))));
  const wall = performance.now() - started;
  summary("judge: one call, 8 in flight", par);
  console.log(`${"judge: throughput, 8 in flight".padEnd(44)} ${((par.length / wall) * 1000).toFixed(0)} calls/s`);

  // The built-in agent: model -> factorial -> model.
  server.handle((req) => (req.lastToolResult ? { content: `10! = ${req.lastToolResult.content}` } : { toolCalls: [{ name: "factorial", arguments: { n: 10 } }] }));
  const factorial = defineTool({ name: "factorial", parameters: z.object({ n: z.number().int() }), execute: ({ n }) => { let r = 1; for (let i = 2; i <= n; i++) r *= i; return r; } });
  const agent = openAIAgent({ model: "bench", baseURL: server.url, apiKey: "sk-bench-0123456789", tools: [factorial] });
  const runs: number[] = [];
  for (let i = 0; i < Math.ceil(CALLS / 3); i++) {
    runs.push(
      (
        await timed(async () => {
          for await (const _ of agent.run("What is 10!?", { signal, sessionId: "bench" })) void _;
        })
      )[0],
    );
  }
  summary("agent: 2 model turns + 1 tool call", runs);
} finally {
  await server.close();
}

// MCP over stdio: a node process per connect.
const toolkit = mcpToolkit({ name: "calc", command: process.execPath, args: [join(import.meta.dirname, "..", "test", "fixtures", "mcp-calculator-server.mjs")] });
const connects: number[] = [];
const calls: number[] = [];
const closes: number[] = [];
for (let i = 0; i < 5; i++) {
  connects.push((await timed(() => toolkit.connect()))[0]);
  const signal = new AbortController().signal;
  const tools = await toolkit.tools(signal);
  const multiply = tools.find((t) => t.name === "multiply")!;
  for (let j = 0; j < 40; j++) calls.push((await timed(async () => multiply.execute({ a: 6, b: 7 }, { signal, sessionId: "bench", emit: () => undefined })))[0]);
  closes.push((await timed(() => toolkit.close()))[0]);
}
summary("mcp: connect (spawn node + handshake)", connects);
summary("mcp: tool call", calls);
summary("mcp: close (stdin end, wait for exit)", closes);
