import { isAsyncIterable, type Agent, type CaseInput, type RunContext, type RunEvent, type RunOutput } from "../../shared/case/agent.ts";
import { ConfigError, ErrorCode, describeError } from "../../shared/errors.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { OpenAITeam } from "./team.ts";

/**
 * Post-hooks on an agent: after each completed run, each hook grades (or otherwise inspects) the
 * run. Inline hooks finish before the run counts as finished (inside the case timeout when the
 * agent runs in a case); background hooks start and the run returns at once. A hook never changes
 * the run's output, and its failure never fails the run: it is logged, and an inline hook's
 * failure is also streamed as a `post_hook_error` event.
 */

/** What a hook receives. */
export interface PostHookRun {
  input: CaseInput;
  output: RunOutput;
  /** The wrapped agent's id; `null` when it is a team (see `teamId`). */
  agentId: string | null;
  /** The wrapped team's id (`withPostHooks(team, hooks, { kind: "team" })`, or an `openAITeam`); else `null`. */
  teamId: string | null;
  sessionId: string;
  /** Inline hooks: the run's signal (the case deadline). Background hooks: never aborted (bound them yourself). */
  signal: AbortSignal;
  deadline?: number;
}

/** A hook object (such as an AgentAsJudgeEval). */
export interface PostHook {
  postCheck(run: PostHookRun): unknown;
  /** Run without holding the agent's run open. Default false. */
  readonly runInBackground?: boolean;
}

/** A hook object, or a plain function of the run (inline). */
export type PostHookLike = PostHook | ((run: PostHookRun) => unknown);

/** Options of {@link withPostHooks}. */
export interface WithPostHooksOptions {
  /** Where hook failures are logged (warn). Default: silent. */
  logger?: Logger | null;
  /**
   * Whether the wrapped component is an agent or a team: hooks are told its id as `agentId` or
   * `teamId` (an AgentAsJudgeEval records it so). Default: `"team"` for an `openAITeam`, else `"agent"`.
   */
  kind?: "agent" | "team";
}

/** An agent with post-hooks; see {@link withPostHooks}. */
export class PostHookedAgent implements Agent {
  readonly id: string | null;
  /** Whether hooks see the id as an agent's or a team's. */
  readonly kind: "agent" | "team";
  readonly #agent: Agent;
  readonly #hooks: readonly PostHookLike[];
  readonly #logger: Logger;
  readonly #background = new Set<Promise<void>>();

  constructor(agent: Agent, hooks: readonly PostHookLike[], options: WithPostHooksOptions = {}) {
    if (!agent || typeof agent.run !== "function") {
      throw new ConfigError(ErrorCode.ConfigInvalid, `withPostHooks: agent must be an object with run(), got ${pyRepr(agent)}`, { field: "agent" });
    }
    if (!Array.isArray(hooks)) throw new ConfigError(ErrorCode.ConfigInvalid, `withPostHooks: hooks must be a list, got ${pyRepr(hooks)}`, { field: "hooks" });
    hooks.forEach((h, i) => {
      if (typeof h !== "function" && !(h && typeof (h as PostHook).postCheck === "function")) {
        throw new ConfigError(ErrorCode.ConfigInvalid, `withPostHooks: hooks[${i}] must be a function or an object with postCheck(run), got ${pyRepr(h)}`, { field: `hooks[${i}]` });
      }
    });
    if (options.kind !== undefined && options.kind !== "agent" && options.kind !== "team") {
      throw new ConfigError(ErrorCode.ConfigInvalid, `withPostHooks: kind must be "agent" or "team", got ${pyRepr(options.kind)}`, { field: "kind" });
    }
    this.#agent = agent;
    this.#hooks = [...hooks];
    this.#logger = options.logger ?? silentLogger();
    this.id = agent.id ?? null;
    this.kind = options.kind ?? (agent instanceof OpenAITeam ? "team" : "agent");
  }

  /** Resolves once every background hook started so far has finished. */
  async waitForBackgroundHooks(): Promise<void> {
    while (this.#background.size > 0) await Promise.all([...this.#background]);
  }

  run(input: CaseInput, context: RunContext): AsyncIterable<RunEvent> {
    const self = this;
    return (async function* (): AsyncGenerator<RunEvent> {
      let output: RunOutput | null = null;
      let errored = false;
      const ret = self.#agent.run(input, context);
      if (isAsyncIterable(ret)) {
        for await (const event of ret as AsyncIterable<RunEvent>) {
          if (event?.type === "run_output") output = (event as { output: RunOutput }).output ?? null;
          if (event?.type === "run_error") errored = true;
          yield event;
        }
      } else {
        output = (await ret) ?? null;
        if (output) yield { type: "run_output", output };
      }
      // Hooks grade completed runs only, as Agno's post-hooks run after a successful run.
      if (!output || errored || (output.status ?? "completed") !== "completed") return;
      const ids = self.kind === "team" ? { agentId: null, teamId: self.id } : { agentId: self.id, teamId: null };
      const run = (signal: AbortSignal): PostHookRun => ({ input, output: output!, ...ids, sessionId: context.sessionId, signal, deadline: context.deadline });
      for (const hook of self.#hooks) {
        if (typeof hook !== "function" && hook.runInBackground) {
          const task = Promise.resolve()
            .then(() => hook.postCheck(run(new AbortController().signal)))
            .then(
              () => undefined,
              (err: unknown) => self.#logger.warn({ agent: self.id, error: describeError(err) }, "background post-hook failed"),
            );
          const tracked = task.finally(() => self.#background.delete(tracked));
          self.#background.add(tracked);
          continue;
        }
        try {
          await (typeof hook === "function" ? hook(run(context.signal)) : hook.postCheck(run(context.signal)));
        } catch (err) {
          if (context.signal.aborted) throw err;
          self.#logger.warn({ agent: self.id, error: describeError(err) }, "post-hook failed");
          yield { type: "post_hook_error", error: describeError(err) };
        }
      }
    })();
  }
}

/**
 * Wraps an agent so that `hooks` run after each of its completed runs:
 * `withPostHooks(tutor, [new AgentAsJudgeEval({ criteria, runInBackground: true })])`.
 * The wrapped agent keeps the id, input and output of the original.
 */
export function withPostHooks(agent: Agent, hooks: readonly PostHookLike[], options: WithPostHooksOptions = {}): PostHookedAgent {
  return new PostHookedAgent(agent, hooks, options);
}
