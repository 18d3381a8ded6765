import * as z from "zod";
import { isAsyncIterable, type Agent, type CaseInput, type RunContext, type RunEvent, type RunOutput, type Team } from "../../shared/case/agent.ts";
import { ConfigError, ErrorCode, describeError } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { contentAsString } from "../runtime/evidence.ts";
import { addUsage, runToolLoop } from "../models/openai-agent.ts";
import { AGENT_OPTION_KEYS, toolLoopConfig, type OpenAIAgentOptions, type ToolLoopConfig } from "../models/tool-loop-config.ts";
import { rejectUnknownOptions } from "../../shared/option-keys.ts";
import { defineTool, type Tool } from "../models/tool.ts";

/**
 * A team: a leader model that delegates to member agents through one tool,
 * `delegate_task_to_member(member_id, task)`, as Agno's teams do. Each member's output lands in
 * the team output's `memberResponses`, so reliability sees the members' tool calls (a case can
 * expect `multiply` when the calculator member runs it) and `tools_called` lists them.
 *
 * Members are any evalfleet agents: `openAIAgent`s, wrapped AI SDK or Agents SDK agents, your own.
 * Member events stream to `onRunEvent` as `{ type: "member_event", memberId, event }`.
 */

/** The leader's delegation tool. */
export const DELEGATE_TOOL_NAME = "delegate_task_to_member";

/** A member: an agent with an id, and optionally a description for the leader. */
export interface TeamMember {
  agent: Agent;
  /** What the member is good at, shown to the leader in the delegation tool's description. */
  description?: string;
}

/** The known keys of {@link openAITeam}'s options: the agent's and `members`. */
const TEAM_OPTION_KEYS: ReadonlySet<string> = new Set([...AGENT_OPTION_KEYS, "members"]);

/** Options of {@link openAITeam}: the leader's connection and prompt, and the members. */

export interface OpenAITeamOptions extends Omit<OpenAIAgentOptions, "id"> {
  /** The team's id in reports (`team_id`). Default: none (the case name is used). */
  id?: string | null;
  /** Agents with an `id`, or `{ agent, description }`. At least one; ids unique. */
  members: ReadonlyArray<Agent | TeamMember>;
}

/** The team; see {@link openAITeam}. */
export class OpenAITeam implements Team {
  readonly id: string | null;
  /** Members by id, in declaration order. */
  readonly members: ReadonlyMap<string, TeamMember>;
  readonly #config: ToolLoopConfig;

  constructor(options: OpenAITeamOptions) {
    const who = "openAITeam";
    if (options === null || typeof options !== "object") throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: options must be an object, got ${pyRepr(options)}`, { field: "options" });
    rejectUnknownOptions(who, options, TEAM_OPTION_KEYS);
    if (!Array.isArray(options.members) || options.members.length === 0) {
      throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: members must be a non-empty list of agents, got ${pyRepr(options.members)}`, { field: "members" });
    }
    const members = new Map<string, TeamMember>();
    options.members.forEach((m, i) => {
      const member: TeamMember = m && typeof m === "object" && "agent" in m && (m as TeamMember).agent ? (m as TeamMember) : { agent: m as Agent };
      if (!member.agent || typeof member.agent.run !== "function") {
        throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: members[${i}] must be an agent (an object with run()), got ${pyRepr(m)}`, { field: `members[${i}]` });
      }
      const id = member.agent.id;
      if (typeof id !== "string" || id.trim() === "") {
        throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: members[${i}] needs an id (the leader delegates by id), got ${pyRepr(id ?? null)}`, { field: `members[${i}].id` });
      }
      if (members.has(id)) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: member ids must be unique, got ${pyRepr(id)} twice`, { field: "members" });
      members.set(id, member);
    });
    this.#config = toolLoopConfig(who, options);
    this.id = options.id ?? null;
    this.members = members;
  }

  run(input: CaseInput, context: RunContext): AsyncIterable<RunEvent> {
    const config = this.#config;
    const members = this.members;
    return (async function* () {
      const memberResponses: RunOutput[] = [];
      const delegate = delegationTool(members, memberResponses, context);
      const output = yield* runToolLoop(config, input, context, [delegate]);
      const metrics = { ...(output.metrics ?? {}) };
      for (const m of memberResponses) addUsage(metrics, m.metrics);
      yield { type: "run_output", output: { ...output, memberResponses, metrics } };
    })();
  }
}

/** The leader's tool: runs the named member on the task and keeps its output. */
function delegationTool(members: ReadonlyMap<string, TeamMember>, memberResponses: RunOutput[], context: RunContext): Tool {
  const ids = [...members.keys()] as [string, ...string[]];
  const roster = [...members.entries()].map(([id, m]) => `- ${id}${m.description ? `: ${m.description}` : ""}`).join("\n");
  return defineTool({
    name: DELEGATE_TOOL_NAME,
    description: `Delegate a task to one team member and get its answer. Members:\n${roster}`,
    parameters: z.object({
      member_id: z.enum(ids).describe("The id of the member to delegate to."),
      task: z.string().describe("What the member should do, with every detail it needs."),
    }),
    async execute({ member_id, task }, toolContext) {
      const member = members.get(member_id)!;
      let output: RunOutput | null = null;
      let failure: string | null = null;
      try {
        const ret = member.agent.run(task, { signal: toolContext.signal, sessionId: context.sessionId, deadline: context.deadline });
        if (isAsyncIterable(ret)) {
          for await (const event of ret as AsyncIterable<RunEvent>) {
            if (event?.type === "run_output") output = (event as { output: RunOutput }).output ?? null;
            else {
              if (event?.type === "run_error") failure = String((event as { content?: unknown }).content || (event as { error?: unknown }).error || "unknown error");
              toolContext.emit({ type: "member_event", memberId: member_id, event });
            }
          }
        } else {
          output = (await ret) ?? null;
        }
      } catch (err) {
        if (toolContext.signal.aborted) throw err;
        failure = describeError(err);
      }
      // The member's id rides on its output: `expected_agent_tools` entries may name it (member/tool).
      if (output) memberResponses.push(output.agentId ? output : { ...output, agentId: member_id });
      const status = output ? (output.status ?? "completed") : null;
      if (failure || !output || status !== "completed") {
        throw new MemberFailed(`member '${member_id}' ${failure ? `failed: ${failure}` : output ? `ended with status ${String(status)}` : "returned no output"}`);
      }
      return contentAsString(output.content);
    },
  }) as Tool;
}

/** A member run that failed; the leader sees the message as the tool's answer. */
class MemberFailed extends Error {
  override readonly name = "MemberFailed";
}

/**
 * A team whose leader (an OpenAI-compatible model) delegates to member agents:
 * `openAITeam({ id: "assistant-team", model: "gpt-5-mini", instructions, members: [calculator, writer] })`.
 * The leader's tool is `delegate_task_to_member`; member outputs are in `memberResponses`.
 */
export function openAITeam(options: OpenAITeamOptions): OpenAITeam {
  return new OpenAITeam(options);
}
