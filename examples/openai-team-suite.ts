/**
 * The seed's team (Agno cookbook `team_evals.py`): a leader that delegates arithmetic to a
 * calculator member and writing to a writer member, built with `openAITeam`. Reliability sees the
 * member's `multiply` call. Needs OPENAI_API_KEY (see examples/openai-env.ts).
 *
 *   OPENAI_API_KEY=sk-... npx evalfleet run examples/openai-team-suite.ts
 */
import { Case, JudgeMode, defineSuite, openAIAgent, openAITeam } from "evalfleet";
import { add, multiply } from "./calculator-tools.ts";
import { agentConnection } from "./openai-env.ts";

const connection = agentConnection();

const calculator = openAIAgent({
  id: "calculator",
  ...connection,
  instructions: "Use the calculator tools for every arithmetic operation.",
  tools: [add, multiply],
});
const writer = openAIAgent({
  id: "writer",
  ...connection,
  instructions: "Answer in one clear paragraph.",
});
const assistantTeam = openAITeam({
  id: "assistant-team",
  ...connection,
  members: [calculator, writer],
  instructions: "Delegate arithmetic to the calculator member and writing to the writer member.",
});

export default defineSuite({
  name: "openai-team",
  defaultTimeout: 180,
  cases: [
    new Case({
      name: "team_uses_calculator",
      team: assistantTeam,
      input: "What is 4891 multiplied by 7238?",
      tags: ["smoke"],
      criteria: "States that the product is 35,401,058.",
      judgeMode: JudgeMode.NUMERIC,
      judgeThreshold: 7,
      expectedToolCalls: ["multiply"],
    }),
    new Case({
      name: "team_explains_clearly",
      team: assistantTeam,
      input: "Explain compound interest in one paragraph.",
      criteria: "Explains that interest is earned on both the principal and previously earned interest.",
      judgeMode: JudgeMode.NUMERIC,
      judgeThreshold: 7,
    }),
  ],
});
