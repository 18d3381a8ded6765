// The suite of the dataset benchmark (bench/dataset-scenario.ts): every row of $BENCH_DATASET (a
// JSONL file the scenario writes) is a case for a trivial agent that answers the row's number.
import { dataset, defineSuite, type Agent, type CaseInput } from "evalfleet";

const file = process.env.BENCH_DATASET;
if (!file) throw new Error("BENCH_DATASET is not set: run bench/dataset-scenario.ts");

function lastUser(input: CaseInput): string {
  return typeof input === "string" ? input : (input.filter((m) => m.role === "user").at(-1)?.content ?? "");
}

/** Answers the number after `answer=` in the last user message. */
export const numberAgent: Agent = {
  id: "number",
  async run(input) {
    return { content: /answer=(\d+)/.exec(lastUser(input))?.[1] ?? "?" };
  },
};

export default defineSuite({ name: "dataset-bench", agents: [numberAgent], datasets: [dataset(file, { agent: "number" })] });
