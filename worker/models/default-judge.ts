import type { JudgeModel } from "../../shared/case/judge-model.ts";
import { ConfigError, ErrorCode } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { judgeModelFromEnvironment, processEnvironment, type Environment } from "../../shared/environment.ts";
import { OpenAIJudge } from "./openai-judge.ts";

/**
 * The judge used when neither a case nor its suite (or runner) names one: the OpenAI-compatible
 * judge configured from the environment. Without `OPENAI_API_KEY` there is no default judge, and a
 * case with criteria records `judge: no judge model configured: ...` instead of crashing.
 */

let cached: { key: string; judge: JudgeModel | null } | undefined;

/**
 * The default judge from the environment: model `EVALFLEET_JUDGE_MODEL` (default `gpt-5-mini`),
 * `OPENAI_BASE_URL` and `OPENAI_API_KEY`. `null` when `OPENAI_API_KEY` is unset or empty.
 * One instance is kept per thread while the environment stays the same (so its HTTP connections
 * and its token counts are shared by the cases of that thread).
 * A malformed setting (e.g. `OPENAI_BASE_URL=localhost`) throws a `ConfigError` naming it.
 */
export function defaultJudgeModel(env: Environment = processEnvironment()): JudgeModel | null {
  const apiKey = env.OPENAI_API_KEY?.trim() ?? "";
  const model = judgeModelFromEnvironment(env);
  const baseURL = env.OPENAI_BASE_URL?.trim() || null;
  // The key is part of the cache identity only through this comparison; it is never logged.
  const key = JSON.stringify([model, baseURL, apiKey]);
  if (cached?.key === key) return cached.judge;
  let judge: JudgeModel | null = null;
  if (apiKey) {
    try {
      judge = new OpenAIJudge({ model, baseURL, apiKey });
    } catch (err) {
      // Name the variable to fix, not the option the default judge passed on.
      if (err instanceof ConfigError && err.details.field === "baseURL") {
        throw new ConfigError(ErrorCode.ConfigInvalid, `default judge: OPENAI_BASE_URL must be an http(s) URL such as http://localhost:11434/v1, got ${pyRepr(baseURL)}`, { field: "OPENAI_BASE_URL" });
      }
      throw err;
    }
  }
  cached = { key, judge };
  return judge;
}

/**
 * The default judge with another model (a regrade's `--judge-model`): `OPENAI_BASE_URL` and
 * `OPENAI_API_KEY` as for {@link defaultJudgeModel}; `null` without a key.
 */
export function judgeWithModel(model: string, env: Environment = processEnvironment()): JudgeModel | null {
  return defaultJudgeModel({ ...env, EVALFLEET_JUDGE_MODEL: model });
}
