/**
 * The seed's math tutor (Agno cookbook `evals.py`) with evalfleet's built-in agent and a real
 * model. Needs OPENAI_API_KEY (and OPENAI_BASE_URL for a local server); see examples/openai-env.ts.
 *
 *   OPENAI_API_KEY=sk-... npx evalfleet run examples/openai-math-suite.ts
 *   OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=ollama \
 *     EVALFLEET_AGENT_MODEL=llama3.1 EVALFLEET_JUDGE_MODEL=llama3.1 npx evalfleet run examples/openai-math-suite.ts
 *
 * The judge is evalfleet's default judge (EVALFLEET_JUDGE_MODEL, default gpt-5-mini).
 */
import { Case, defineSuite, openAIAgent, type Scorer } from "evalfleet";
import { add, factorial, multiply } from "./calculator-tools.ts";
import { agentConnection } from "./openai-env.ts";

const agent = openAIAgent({
  id: "math-tutor",
  ...agentConnection(),
  instructions: "Use the calculator tools for any arithmetic.",
  tools: [add, multiply, factorial],
});

/** Exact text comparison, as the seed's ExactAnswer scorer. */
const exactAnswer: Scorer = {
  score(run, expected) {
    const passed = String(run.content ?? "").trim() === String(expected);
    return { value: passed ? 1 : 0, passed, reason: "Exact text comparison" };
  },
};

export default defineSuite({
  name: "openai-math",
  defaultTimeout: 120,
  cases: [
    new Case({
      name: "factorial_uses_calculator",
      agent,
      input: "What is 10! (ten factorial)?",
      tags: ["smoke"],
      criteria: "States that 10! equals 3628800.",
      expectedToolCalls: ["factorial"],
    }),
    new Case({
      name: "explains_compound_interest",
      agent,
      input: "Explain compound interest in one short paragraph.",
      criteria: "Explains that interest is earned on both the principal and previously earned interest.",
    }),
    new Case({
      name: "exact_sum",
      agent,
      input: "What is 2 + 2? Return only the number.",
      scorer: exactAnswer,
      expected: "4",
    }),
  ],
});
