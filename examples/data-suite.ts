/**
 * A data-driven suite: the agents are code, the cases are rows of examples/data/*.jsonl and
 * *.csv, grouped into eval sets by examples/data/sets.yaml. Deterministic: no model, no API key.
 *   npx evalfleet run examples/data-suite.ts
 *   npx evalfleet run examples/data-suite.ts --set smoke --repeat 3 --pass-threshold 0.9
 */
import { dataset, defineSuite, type Agent, type CaseInput, type RunOutput } from "evalfleet";

const lastUser = (input: CaseInput): string => (typeof input === "string" ? input : (input.filter((m) => m.role === "user").at(-1)?.content ?? ""));

/** A tiny knowledge base: the support bot retrieves the entries whose keyword the question mentions. */
const KNOWLEDGE: Record<string, { source: string; answer: string }> = {
  refund: { source: "kb-refunds", answer: "You can return an item within 30 days for a full refund." },
  shipping: { source: "kb-shipping", answer: "Standard shipping takes 3 to 5 business days." },
  price: { source: "kb-pricing", answer: "The Pro plan costs $20 per month." },
};

/** Answers from the knowledge base, and says which sources it retrieved (RunOutput.knowledgeSources). */
const supportBot: Agent = {
  id: "support-bot",
  async run(input) {
    const question = lastUser(input).toLowerCase();
    const hits = Object.entries(KNOWLEDGE).filter(([keyword]) => question.includes(keyword));
    if (hits.length === 0) return { content: "I don't know; let me connect you with a person.", knowledgeSources: [] };
    return { content: hits.map(([, e]) => e.answer).join(" "), knowledgeSources: hits.map(([, e]) => e.source), tools: [{ toolName: "search_knowledge", result: hits.length }] };
  },
};

/** A team whose calculator member multiplies; the member's output carries its id (for expected_agent_tools). */
const mathTeam: Agent = {
  id: "math-team",
  async run(input): Promise<RunOutput> {
    const m = /(\d+)\s*(?:x|\*|times|multiplied by)\s*(\d+)/i.exec(lastUser(input));
    if (!m) return { content: "I can only multiply." };
    const product = Number(m[1]) * Number(m[2]);
    return {
      content: `The product is ${product.toLocaleString("en-US")}.`,
      tools: [{ toolName: "delegate_task_to_member", toolArgs: { member_id: "calculator" } }],
      memberResponses: [{ agentId: "calculator", content: String(product), tools: [{ toolName: "multiply", toolArgs: { a: Number(m[1]), b: Number(m[2]) }, result: product }] }],
    };
  },
};

export default defineSuite({
  name: "data-demo",
  agents: [supportBot],
  teams: [mathTeam],
  datasets: [dataset("./data/support.jsonl", { agent: "support-bot", scoring: { method: "contains", ignoreCase: true } }), dataset("./data/math.csv", { agent: "math-team" })],
  evalSets: "./data/sets.yaml",
});
