import { randomUUID } from "node:crypto";
import { isAsyncIterable, type Agent, type RunEvent, type RunOutput } from "../../shared/case/agent.ts";
import type { JudgeCallOptions, JudgeModel, JudgeRequest } from "../../shared/case/judge-model.ts";
import { ModelCallError } from "../../shared/errors.ts";
import { textModeInstruction } from "./openai-judge.ts";

/**
 * Any evalfleet agent as a judge (AgentAsJudgeEval's `evaluatorAgent`): the agent gets the
 * evaluator prompt as a conversation (system, then user) with the answer's JSON Schema spelled
 * out, and its final content (an object, or text holding JSON) is the answer.
 */
export class AgentJudge implements JudgeModel {
  readonly id: string | null;
  readonly #agent: Agent;

  constructor(agent: Agent) {
    this.#agent = agent;
    this.id = agent.id ?? null;
  }

  async judge(request: JudgeRequest, options: JudgeCallOptions): Promise<unknown> {
    const schema = { ...request.jsonSchema };
    delete schema.$schema;
    const input = [
      { role: "system", content: `${request.system}\n\n${textModeInstruction(schema)}` },
      { role: "user", content: request.user },
    ];
    const ret = this.#agent.run(input, { signal: options.signal, sessionId: `eval-judge-${randomUUID().slice(0, 8)}`, deadline: options.deadline });
    let output: RunOutput | null = null;
    if (isAsyncIterable(ret)) {
      for await (const event of ret as AsyncIterable<RunEvent>) {
        if (event?.type === "run_output") output = (event as { output: RunOutput }).output ?? null;
        else if (event?.type === "run_error") {
          throw new ModelCallError(`the evaluator agent failed: ${String((event as { content?: unknown }).content || (event as { error?: unknown }).error || "unknown error")}`);
        }
      }
    } else {
      output = (await ret) ?? null;
    }
    if (!output) throw new ModelCallError("the evaluator agent returned no output");
    const status = output.status ?? "completed";
    if (status !== "completed") throw new ModelCallError(`the evaluator agent's run ended with status ${String(status)}`);
    const m = output.metrics;
    if (m) options.onUsage?.({ inputTokens: m.inputTokens, outputTokens: m.outputTokens, totalTokens: m.totalTokens });
    return output.content;
  }
}

/** Adapts an evalfleet agent into a judge model. */
export function agentAsJudgeModel(agent: Agent): AgentJudge {
  return new AgentJudge(agent);
}
