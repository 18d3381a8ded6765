/**
 * What the OpenAI examples read from the environment. They need a model server: OpenAI itself
 * (OPENAI_API_KEY), or any OpenAI-compatible one (OPENAI_BASE_URL, e.g. Ollama or vLLM, with any
 * OPENAI_API_KEY). Without a key the suite refuses to load, with one line saying what to set.
 */
import { ConfigError, ErrorCode, type OpenAIConnectionOptions } from "evalfleet";

/** Connection settings for the examples' agents; the judge is evalfleet's default judge (same variables). */
export function agentConnection(): OpenAIConnectionOptions {
  if (!process.env.OPENAI_API_KEY?.trim()) {
    throw new ConfigError(
      ErrorCode.ConfigMissing,
      "OPENAI_API_KEY is not set: this example calls a real model. Set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama or vLLM; any key works there), optionally EVALFLEET_AGENT_MODEL and EVALFLEET_JUDGE_MODEL (default gpt-5-mini)",
    );
  }
  return {
    model: process.env.EVALFLEET_AGENT_MODEL?.trim() || "gpt-5-mini",
    // baseURL and apiKey come from OPENAI_BASE_URL and OPENAI_API_KEY.
  };
}
