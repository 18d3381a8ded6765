// BENCH_CASES cases (default 2000) whose agent returns a big run output: BENCH_TRANSCRIPT_KB KiB
// (default 16) spread over messages and a tool result, for bench/transcript-memory.ts.
import { Case, defineSuite, type Agent } from "evalfleet";

const kb = Number(process.env.BENCH_TRANSCRIPT_KB ?? 16);
const agent: Agent = {
  id: "verbose",
  async run(input) {
    const filler = "x".repeat(1024);
    return {
      content: `answer ${String(input)}`,
      tools: [{ toolName: "lookup", toolArgs: { q: String(input) }, result: filler.repeat(Math.max(1, Math.floor(kb / 4))) }],
      messages: Array.from({ length: Math.max(1, Math.floor((kb * 3) / 4)) }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: filler })),
    };
  },
};
const n = Number(process.env.BENCH_CASES ?? 2000);
export default defineSuite({
  name: "transcripts",
  cases: Array.from({ length: n }, (_, i) => new Case({ name: `t${i}`, agent, input: String(i), scorer: { score: (run) => ({ value: 1, passed: Boolean(run.content) }) } })),
});
