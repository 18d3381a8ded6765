import { Case, type CaseOptions } from "../../index.ts";
import { StubAgent } from "./doubles.ts";

/** The stub agent every {@link mkCase} case runs (one per test file that imports this module). */
const agent = new StubAgent({ id: "stub-agent" });

/** A judged case about the capital of France, with any option overridden. */
export function mkCase(name: string, extra: Partial<CaseOptions> = {}): Case {
  return new Case({ name, input: "What is the capital of France?", agent, criteria: "Mentions Paris.", ...extra });
}
