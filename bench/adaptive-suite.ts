// BENCH_CASES cases (default 400) with seeded pass probabilities, the verdict simulation's mix
// (bench/verdict-simulation.ts): four in five stable (0.96-1.0), one in five flaky (0.3-0.9). Each
// trial flips its own coin (Math.random), so trials are independent, as an agent's are. For
// bench/adaptive-cli.ts. The probabilities come from the seeded generator the CLI samples with.
import { Case, defineSuite, type Agent } from "evalfleet";
import { seededRandom } from "../shared/seeded-random.ts";

const random = seededRandom(28);
const n = Number(process.env.BENCH_CASES ?? 400);
const rates = Array.from({ length: n }, () => (random() < 0.8 ? 0.96 + random() * 0.04 : 0.3 + random() * 0.6));
const agent: Agent = { id: "coin", run: async (input) => ({ content: Math.random() < rates[Number(input)]! ? "pass" : "fail" }) };

export default defineSuite({
  name: "adaptive",
  cases: rates.map((_, i) => new Case({ name: `c${i}`, agent, input: String(i), expectedOutput: "pass" })),
});
