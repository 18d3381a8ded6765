// runs in: both
import type { RedactShapes } from "../redaction/shapes.ts";
import type { PriceTable } from "../providers/prices.ts";
import type { LimitTable } from "../providers/limit-spec.ts";
import type { Case } from "../case/case.ts";
import type { Agent, Team } from "../case/agent.ts";
import type { DatasetDeclaration } from "../datasets/dataset.ts";
import type { EvalSetsDefinition } from "../datasets/eval-sets.ts";
import type { JudgeModel } from "../case/judge-model.ts";
import type { EvalFunctionsDefinition } from "../case/eval-functions.ts";
import type { McpClientLike } from "../case/mcp-client.ts";
import { firstUnknownKey, optionKeys, unknownOption } from "../option-keys.ts";
import { pyRepr } from "../py-format.ts";

/**
 * How a suite file declares its suite: `export default defineSuite({ name, cases, ... })`, branded
 * so that a loader tells it from a plain object (with `Symbol.for`, so a suite built by another
 * copy of evalfleet is recognised too).
 */

const SUITE_BRAND = Symbol.for("evalfleet.suite");

/** Options of {@link defineSuite}. */
export interface SuiteDefinitionOptions {
  /** Shown in reports; default: the file name without extension. */
  name?: string;
  /** Cases written in code. Optional when `datasets` provide the cases. */
  cases?: readonly Case[];
  /**
   * Cases as data: dataset files (JSONL, JSON, YAML, CSV) whose rows become cases after the code
   * cases, in file order. Relative paths are resolved against the suite file's folder.
   */
  datasets?: readonly (DatasetDeclaration | string | URL)[] | null;
  /** The agents dataset rows name by id (`agent: "support-bot"`): a list (each with an `id`) or an object by id. */
  agents?: readonly Agent[] | Readonly<Record<string, Agent>> | null;
  /** The teams dataset rows name by id, as `agents`. */
  teams?: readonly Team[] | Readonly<Record<string, Team>> | null;
  /**
   * Named groups of case names or ids for `--set NAME` (by set name or id): an object of sets by
   * name, a list in Exulu's `eval_sets` shape, or the path of a JSON/YAML file holding either.
   */
  evalSets?: EvalSetsDefinition | string | URL | null;
  /**
   * Named evaluation functions (Exulu's `eval_functions`): scorers by name that rows
   * (`eval_functions`), cases (`evalFunctions`) and runs (`--eval-function NAME`) refer to. Each
   * one a case names is a check that must pass. Default none.
   */
  evalFunctions?: EvalFunctionsDefinition | null;
  /** The run passes when at least this fraction (0-1) of the selected cases pass (after `--pass-threshold`). Default: every case must pass. */
  passThreshold?: number | null;
  /**
   * With `--repeat`: a case passes when at least this fraction (0-1) of its trials pass, for the
   * cases that set no `passRate` (after `--case-pass-rate`). Default 1: every trial.
   */
  casePassRate?: number | null;
  /**
   * Provider limits by key, shared by every worker of a run (docs/providers.md):
   * `{ "openai:gpt-5-mini": { rpm: 600, tpm: 200000, concurrency: 64 } }`. `EVALFLEET_LIMITS` and
   * `--limit` override them field by field. Default none (keys learn their limits from the provider).
   */
  limits?: LimitTable | null;
  /**
   * Prices by model (US dollars per million tokens) over the built-in table (shared/providers/prices.ts,
   * dated): `{ "my-model": { inputPerMTok: 0.2, outputPerMTok: 0.8 } }`, or the path of a JSON or
   * YAML file holding such a table (relative to the suite's folder). Default: the built-in table.
   */
  prices?: PriceTable | string | null;
  /** Suite-wide judge model (after the case's own). */
  judgeModel?: JudgeModel | null;
  /** Per-case timeout in seconds for cases that set none (after the command line's `--timeout`). */
  defaultTimeout?: number | null;
  /** Bound on each case's `setup` in seconds for cases that set none (after `--setup-timeout`; default 60). */
  setupTimeoutSeconds?: number | null;
  /** Bound on each case's `teardown` in seconds for cases that set none (after `--teardown-timeout`; default 60). */
  teardownTimeoutSeconds?: number | null;
  /**
   * MCP clients the suite's agents use (objects with `connect()` and `close()`, e.g. `mcpToolkit`):
   * connected once per worker thread before its first case, closed when the thread or run ends.
   * A client already connected stays its owner's. Default none.
   */
  mcpClients?: readonly McpClientLike[] | null;
  /** Credential shapes redacted by every process that loads the suite: `true` (default), `false`, `{ except: ["jwt"] }` (shared/redaction/shapes.ts). */
  redactShapes?: RedactShapes | null;
}

/** A suite as a module exports it. */
export interface SuiteDefinition extends Readonly<SuiteDefinitionOptions> {
  readonly [SUITE_BRAND]: true;
}

/** The known keys of {@link defineSuite}'s options. */
export const SUITE_OPTION_KEYS: ReadonlySet<string> = optionKeys<SuiteDefinitionOptions>({
  name: true, cases: true, datasets: true, agents: true, teams: true, evalSets: true, evalFunctions: true, passThreshold: true,
  limits: true, prices: true, judgeModel: true, defaultTimeout: true, setupTimeoutSeconds: true, teardownTimeoutSeconds: true,
  mcpClients: true, redactShapes: true, casePassRate: true,
});

/**
 * Declares a suite: `export default defineSuite({ name, cases, judgeModel?, defaultTimeout? })`.
 * An unknown option throws a ConfigError naming the suite and the nearest known option
 * (`suite 'math': unknown option 'defaultTimout' (did you mean defaultTimeout?)`): the suite fails to load.
 */
export function defineSuite(options: SuiteDefinitionOptions): SuiteDefinition {
  if (options !== null && typeof options === "object") {
    const unknown = firstUnknownKey(options, SUITE_OPTION_KEYS);
    if (unknown !== null) throw unknownOption(typeof options.name === "string" ? `suite ${pyRepr(options.name)}` : "defineSuite", unknown, SUITE_OPTION_KEYS);
  }
  return Object.freeze({ ...options, cases: Object.freeze([...(options.cases ?? [])]), [SUITE_BRAND]: true as const });
}

/** True for what {@link defineSuite} returned, from this copy of evalfleet or another. */
export function isSuiteDefinition(value: unknown): value is SuiteDefinition {
  return value !== null && typeof value === "object" && Boolean((value as Record<symbol, unknown>)[SUITE_BRAND]);
}
