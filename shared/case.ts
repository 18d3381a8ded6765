import type { Agent, CaseInput, ChatMessage, Team } from "./agent.ts";
import type { JudgeModel } from "./judge-model.ts";
import type { Scorer } from "./score.ts";
import type { CaseResult } from "./result.ts";
import { CaseValidationError } from "./errors.ts";
import { pyRepr } from "./py-format.ts";
import { expectedOutputProblem, resolveScoring, type ExpectedOutput, type OutputScoring, type ResolvedScoring, type ScoringMethod } from "./datasets/expected-output-methods.ts";
import { CaseOptionsSchema, describeIssue, plainlyValidCaseOptions } from "./case-option-checks.ts";

/** How the judge grades: pass/fail, or a 1-10 score compared with `judgeThreshold`. */
export const JudgeMode = {
  BINARY: "binary",
  NUMERIC: "numeric",
} as const;
/** `"binary"` or `"numeric"`. */
export type JudgeMode = (typeof JudgeMode)[keyof typeof JudgeMode];

/** Runs before the case, outside the timeout (within its own bound); its return value (the context) goes to teardown. */
export type SetupHook = () => unknown;
/** Runs once setup has completed, whatever happened, outside the timeout. */
export type TeardownHook = (context: unknown, result: CaseResult) => unknown;

/** Options of `new Case({...})`. Defaults follow Agno (spec A7). */
export interface CaseOptions {
  /** Identifies the case in selection (`--name`) and reports. Unique within a suite file. */
  name: string;
  /** A prompt, or a list of chat messages for a multi-turn case. */
  input: CaseInput;
  /** The agent under test. Exactly one of `agent` and `team`. */
  agent?: Agent | null;
  /** The team under test. Exactly one of `agent` and `team`. */
  team?: Team | null;
  /** Labels for `--tag`. Default `[]`. */
  tags?: readonly string[];
  /** Per-case timeout in seconds; `null` (default) falls back to the runner's default (120 s). `0` counts. */
  timeoutSeconds?: number | null;
  /**
   * Bound on `setup` in seconds; `null` (default) falls back to the runner's (`--setup-timeout`),
   * then the suite's, then 60 s. Setup stays outside `timeoutSeconds`, but never runs unbounded.
   */
  setupTimeoutSeconds?: number | null;
  /** Bound on `teardown` in seconds; falls back as `setupTimeoutSeconds` does (`--teardown-timeout`, the suite's, 60 s). */
  teardownTimeoutSeconds?: number | null;
  /** Turns the judge check on (a non-empty string). */
  criteria?: string | null;
  /** Per-case judge; falls back to the runner's, then the suite's, then the default judge. */
  judgeModel?: JudgeModel | null;
  /** Default {@link JudgeMode.BINARY}. */
  judgeMode?: JudgeMode | "binary" | "numeric";
  /** Pass bar 1-10, read only in numeric mode. Default 7. */
  judgeThreshold?: number;
  /** Turns the reliability check on (a non-empty list of tool names). */
  expectedToolCalls?: readonly string[] | null;
  /** Subset matching (default `true`) or strict matching (`false`). */
  allowAdditionalToolCalls?: boolean;
  /** Turns the scorer check on. */
  scorer?: Scorer | null;
  /** The expected value handed to the scorer. */
  expected?: unknown;
  setup?: SetupHook | null;
  teardown?: TeardownHook | null;
  /** A stable id besides the name (eval sets may list either). Default `null`. */
  id?: string | null;
  /** Free text for people; not graded. Default `null`. */
  description?: string | null;
  /** Free data carried with the case (owner, ticket, source row); not graded. Default `null`. */
  metadata?: Readonly<Record<string, unknown>> | null;
  /** Turns the expected-output check on: the answer is compared with it by `outputScoring`. */
  expectedOutput?: ExpectedOutput | null;
  /** How `expectedOutput` is compared: a method name or `{ method, ignoreCase, tolerance }`. Default `"exact"`. */
  outputScoring?: ScoringMethod | OutputScoring | null;
  /** Turns the agent-tools check on: team members must have run these tools (`tool`, or `member/tool`). */
  expectedAgentTools?: readonly string[] | null;
  /** Turns the knowledge-sources check on: the run must report having retrieved from these sources. */
  expectedKnowledgeSources?: readonly string[] | null;
  /**
   * Names of the suite's evaluation functions (`defineSuite({ evalFunctions: { name: scorer } })`)
   * that grade this case too, each a check that must pass. Checked against the suite when it loads.
   */
  evalFunctions?: readonly string[] | null;
}

/**
 * Marks every Case, whichever copy of evalfleet built it: a suite loaded through another module
 * loader (tsx in a CommonJS project, a bundler) may hold a `Case` class other than the runner's,
 * and `instanceof` would call its cases foreign. `Symbol.for` names the same symbol in every copy.
 */
const CASE_BRAND = Symbol.for("evalfleet.case");

/** True for a {@link Case}, including one built by another copy of the evalfleet package. */
export function hasCaseBrand(value: unknown): value is Case {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[CASE_BRAND] === true;
}

/**
 * One eval case: an input for one agent or team, and the checks its answer must pass.
 * Frozen after construction; invalid options throw a {@link CaseValidationError} that names the
 * case and the field, e.g. `case 'x' has no checks: set criteria, expectedToolCalls, and/or scorer`.
 */
export class Case {
  static {
    Object.defineProperty(Case.prototype, CASE_BRAND, { value: true });
  }
  readonly name: string;
  readonly input: CaseInput;
  readonly agent: Agent | null;
  readonly team: Team | null;
  readonly tags: readonly string[];
  readonly timeoutSeconds: number | null;
  readonly setupTimeoutSeconds: number | null;
  readonly teardownTimeoutSeconds: number | null;
  readonly criteria: string | null;
  readonly judgeModel: JudgeModel | null;
  readonly judgeMode: JudgeMode;
  readonly judgeThreshold: number;
  readonly expectedToolCalls: readonly string[] | null;
  readonly allowAdditionalToolCalls: boolean;
  readonly scorer: Scorer | null;
  readonly expected: unknown;
  readonly setup: SetupHook | null;
  readonly teardown: TeardownHook | null;
  readonly id: string | null;
  readonly description: string | null;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  /** `null` when the expected-output check is off. */
  readonly expectedOutput: ExpectedOutput | null;
  readonly outputScoring: ResolvedScoring;
  readonly expectedAgentTools: readonly string[] | null;
  readonly expectedKnowledgeSources: readonly string[] | null;
  /** Names of the suite's evaluation functions that grade this case, or null. */
  readonly evalFunctions: readonly string[] | null;

  constructor(options: CaseOptions) {
    if (options === null || typeof options !== "object") {
      throw new CaseValidationError(`case options must be an object, got ${pyRepr(options)}`);
    }
    const label = typeof options.name === "string" ? `case ${pyRepr(options.name)}` : "case";
    if (typeof options.name !== "string") {
      throw new CaseValidationError(`${label}: name must be a string, got ${pyRepr(options.name)}`, { field: "name" });
    }
    // Agno's checks, in Agno's order (spec A1-A5).
    if (!options.agent && !options.team) {
      throw new CaseValidationError(`${label}: provide one of 'agent' or 'team'`, { case: options.name, field: "agent" });
    }
    if (options.agent && options.team) {
      throw new CaseValidationError(`${label}: provide only one of 'agent' or 'team'`, { case: options.name, field: "team" });
    }
    const hasToolCalls = Array.isArray(options.expectedToolCalls) ? options.expectedToolCalls.length > 0 : Boolean(options.expectedToolCalls);
    // evalfleet's data-driven checks count as checks too; with none of them, Agno's message stands.
    const hasExpectations =
      (options.expectedOutput !== undefined && options.expectedOutput !== null) ||
      (Array.isArray(options.expectedAgentTools) && options.expectedAgentTools.length > 0) ||
      (Array.isArray(options.expectedKnowledgeSources) && options.expectedKnowledgeSources.length > 0) ||
      (Array.isArray(options.evalFunctions) && options.evalFunctions.length > 0);
    if (!options.criteria && !hasToolCalls && (options.scorer === undefined || options.scorer === null) && !hasExpectations) {
      throw new CaseValidationError(`${label} has no checks: set criteria, expectedToolCalls, and/or scorer`, {
        case: options.name,
        field: "criteria",
      });
    }
    const judgeMode = options.judgeMode ?? JudgeMode.BINARY;
    if (judgeMode !== JudgeMode.BINARY && judgeMode !== JudgeMode.NUMERIC) {
      throw new CaseValidationError(`${label}: judgeMode must be a JudgeMode, got ${pyRepr(judgeMode)}`, {
        case: options.name,
        field: "judgeMode",
      });
    }
    const judgeThreshold = options.judgeThreshold ?? 7;
    if (judgeMode === JudgeMode.NUMERIC && !(typeof judgeThreshold === "number" && judgeThreshold >= 1 && judgeThreshold <= 10)) {
      throw new CaseValidationError(`${label}: judgeThreshold must be 1-10, got ${pyRepr(judgeThreshold)}`, {
        case: options.name,
        field: "judgeThreshold",
      });
    }
    // The schema words the error; options that are plainly valid (nearly all) skip it.
    const parsed = plainlyValidCaseOptions(options) ? null : CaseOptionsSchema.safeParse(options);
    if (parsed && !parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.map(String).join(".") || "options";
      const got = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k as PropertyKey], options);
      throw new CaseValidationError(`${label}: ${field} ${describeIssue(issue)}, got ${pyRepr(got)}`, {
        case: options.name,
        field,
      });
    }
    const outputScoring = resolveScoring(options.outputScoring);
    if (options.expectedOutput !== undefined && options.expectedOutput !== null) {
      const problem = expectedOutputProblem(options.expectedOutput, outputScoring);
      if (problem) {
        throw new CaseValidationError(`${label}: expectedOutput ${problem}, got ${pyRepr(options.expectedOutput)}`, { case: options.name, field: "expectedOutput" });
      }
    }

    this.name = options.name;
    this.input = typeof options.input === "string" ? options.input : freezeMessages(options.input);
    this.agent = options.agent ?? null;
    this.team = options.team ?? null;
    this.tags = Object.freeze([...(options.tags ?? [])]);
    this.timeoutSeconds = options.timeoutSeconds ?? null;
    this.setupTimeoutSeconds = options.setupTimeoutSeconds ?? null;
    this.teardownTimeoutSeconds = options.teardownTimeoutSeconds ?? null;
    this.criteria = options.criteria ?? null;
    this.judgeModel = options.judgeModel ?? null;
    this.judgeMode = judgeMode;
    this.judgeThreshold = judgeThreshold;
    this.expectedToolCalls = options.expectedToolCalls ? Object.freeze([...options.expectedToolCalls]) : null;
    this.allowAdditionalToolCalls = options.allowAdditionalToolCalls ?? true;
    this.scorer = options.scorer ?? null;
    this.expected = options.expected;
    this.setup = options.setup ?? null;
    this.teardown = options.teardown ?? null;
    this.id = options.id ?? null;
    this.description = options.description ?? null;
    this.metadata = options.metadata ? Object.freeze({ ...options.metadata }) : null;
    this.expectedOutput = options.expectedOutput ?? null;
    this.outputScoring = outputScoring;
    this.expectedAgentTools = options.expectedAgentTools && options.expectedAgentTools.length > 0 ? Object.freeze([...options.expectedAgentTools]) : null;
    this.expectedKnowledgeSources =
      options.expectedKnowledgeSources && options.expectedKnowledgeSources.length > 0 ? Object.freeze([...options.expectedKnowledgeSources]) : null;
    this.evalFunctions = options.evalFunctions && options.evalFunctions.length > 0 ? Object.freeze([...new Set(options.evalFunctions)]) : null;
    Object.freeze(this);
  }

  /** `"agent"` or `"team"`: which field was set (the error prefix and the id field). */
  get label(): "agent" | "team" {
    return this.team ? "team" : "agent";
  }

  /** The agent or team under test. */
  get component(): Agent {
    return (this.agent ?? this.team)!;
  }

  /** The component's id, or the case name when the id is falsy. */
  get componentId(): string {
    return this.component.id || this.name;
  }

  /** The timeout in seconds against a runner default (`timeoutSeconds` wins, even 0). */
  resolveTimeout(defaultTimeout: number): number {
    return this.timeoutSeconds ?? defaultTimeout;
  }

  /** The setup and teardown bounds in seconds against the runner's defaults (the case's own win, even 0). */
  resolveHookTimeouts(defaults: { setup: number; teardown: number }): { setup: number; teardown: number } {
    return { setup: this.setupTimeoutSeconds ?? defaults.setup, teardown: this.teardownTimeoutSeconds ?? defaults.teardown };
  }
}

function freezeMessages(messages: readonly ChatMessage[]): readonly ChatMessage[] {
  return Object.freeze(messages.map((m) => Object.freeze({ ...m })));
}
