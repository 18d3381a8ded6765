/**
 * The demo suite: deterministic agents (no model, no API key) that mirror Agno's cookbook.
 * Run it with `npx evalfleet run examples/math-suite.ts`.
 */
import { Case, defineSuite, type Agent, type RunEvent, type RunOutput, type Scorer } from "evalfleet";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

function factorial(n: number): number {
  return n <= 1 ? 1 : n * factorial(n - 1);
}

/** A math tutor that always uses its calculator tools, streaming events like a real agent. */
const mathTutor: Agent = {
  id: "math-tutor",
  async *run(input, { signal }): AsyncIterable<RunEvent> {
    const text = typeof input === "string" ? input : input.map((m) => m.content).join("\n");
    yield { type: "run_started" };
    await sleep(50 + Math.random() * 150, signal); // simulated model latency
    const fact = /(\d+)\s*!|(\d+) factorial/i.exec(text);
    const sum = /(\d+)\s*\+\s*(\d+)/.exec(text);
    let output: RunOutput;
    if (fact) {
      const n = Number(fact[1] ?? fact[2]);
      yield { type: "tool_call_started", tool: { toolName: "factorial" } };
      const value = factorial(n);
      yield { type: "tool_call_completed", tool: { toolName: "factorial" } };
      output = { content: `${n}! = ${value}`, tools: [{ toolName: "factorial", toolArgs: { n }, result: value }] };
    } else if (sum) {
      const value = Number(sum[1]) + Number(sum[2]);
      yield { type: "tool_call_started", tool: { toolName: "add" } };
      output = { content: String(value), tools: [{ toolName: "add", toolArgs: { a: Number(sum[1]), b: Number(sum[2]) }, result: value }] };
    } else {
      output = { content: "Compound interest is interest earned on the principal and on previously earned interest." };
    }
    yield { type: "run_output", output };
  },
};

/** A team whose calculator member does the arithmetic; the leader only delegates. */
const assistantTeam: Agent = {
  id: "assistant-team",
  async run(input, { signal }) {
    const text = typeof input === "string" ? input : input.map((m) => m.content).join("\n");
    await sleep(50 + Math.random() * 100, signal);
    const m = /(\d+) multiplied by (\d+)/.exec(text);
    if (!m) return { content: "I can only multiply." };
    const product = Number(m[1]) * Number(m[2]);
    return {
      content: `The product is ${product.toLocaleString("en-US")}.`,
      tools: [{ toolName: "delegate_task_to_member", toolArgs: { member: "calculator" } }],
      memberResponses: [{ content: String(product), tools: [{ toolName: "multiply", toolArgs: { a: Number(m[1]), b: Number(m[2]) }, result: product }] }],
    };
  },
};

/** Passes when the output contains the expected text (ignoring thousands separators). */
const mentions: Scorer = {
  score(run, expected) {
    const text = String(run.content ?? "").replace(/,/g, "");
    const passed = text.includes(String(expected));
    return { value: passed ? 1 : 0, passed, reason: passed ? `mentions ${String(expected)}` : `does not mention ${String(expected)}` };
  },
};

export default defineSuite({
  name: "math",
  cases: [
    new Case({
      name: "factorial_uses_calculator",
      agent: mathTutor,
      input: "What is 10! (ten factorial)?",
      tags: ["smoke"],
      expectedToolCalls: ["factorial"],
      scorer: mentions,
      expected: "3628800",
    }),
    new Case({
      name: "exact_sum",
      agent: mathTutor,
      input: "What is 2 + 2? Return only the number.",
      tags: ["smoke"],
      scorer: { score: (run, expected) => ({ value: String(run.content).trim() === expected ? 1 : 0, passed: String(run.content).trim() === expected, reason: "Exact text comparison" }) },
      expected: "4",
    }),
    new Case({
      name: "team_uses_calculator",
      team: assistantTeam,
      input: "What is 4891 multiplied by 7238?",
      tags: ["smoke", "team"],
      expectedToolCalls: ["multiply"],
      scorer: mentions,
      expected: "35401058",
    }),
    new Case({
      name: "conversation_keeps_context",
      agent: mathTutor,
      input: [
        { role: "user", content: "I need a factorial." },
        { role: "assistant", content: "Which number?" },
        { role: "user", content: "5 factorial, please." },
      ],
      tags: ["regression"],
      expectedToolCalls: ["factorial"],
      allowAdditionalToolCalls: false,
      scorer: mentions,
      expected: "120",
    }),
    new Case({
      name: "explains_compound_interest",
      agent: mathTutor,
      input: "Explain compound interest in one short paragraph.",
      tags: ["regression"],
      scorer: mentions,
      expected: "previously earned interest",
    }),
  ],
});
