// runs in: both
import type { Agent, CaseInput, ChatMessage, Team } from "./agent.ts";
import { JUDGE_PASS_THRESHOLD, type JudgeModel } from "./judge-model.ts";
import type { Scorer } from "./score.ts";
import type { CaseResult } from "../result/result.ts";
import { CaseValidationError } from "../errors.ts";
import { pyRepr } from "../py-format.ts";
import { expectedOutputProblem, resolveScoring, type ExpectedOutput, type OutputScoring, type ResolvedScoring, type ScoringMethod } from "../datasets/expected-output-methods.ts";
import type * as z from "zod";
import { CASE_OPTION_KEYS, caseOptionsIssue, describeIssue, unknownCaseOption, type CaseOptionsSchema } from "./case-option-checks.ts";
import { unknownOption } from "../option-keys.ts";
import type { ToolCallExpectation, ToolCallOrder } from "./tool-call-matchers.ts";

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
  /**
   * Turns the reliability check on: a non-empty list of tool names, or matchers
   * `{ name, args, times, result }` (docs/writing-suites.md, Trajectory checks).
   */
  expectedToolCalls?: readonly ToolCallExpectation[] | null;
  /** Subset matching (default `true`) or strict matching (`false`: a call to a tool no expectation names fails). */
  allowAdditionalToolCalls?: boolean;
  /** How `expectedToolCalls` are compared with the calls made: `any` (default), `in_order` or `exact`. Needs `expectedToolCalls`. */
  toolCallOrder?: ToolCallOrder | null;
  /** Calls that must not be made (names or matchers, without `times`); turns the reliability check on. Default none. */
  forbiddenToolCalls?: readonly ToolCallExpectation[] | null;
  /** At most this many tool executions (a whole number >= 0); turns the reliability check on. Default no bound. */
  maxToolCalls?: number | null;
  /** No tool execution may end in error; turns the reliability check on. Default `false`. */
  toolCallsMustSucceed?: boolean;
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
  /**
   * With `--repeat`: this case passes when at least this fraction (0-1) of its trials pass, over
   * `--case-pass-rate` and the suite's `casePassRate`. Default `null`: the run's rule (else 1, every trial).
   */
  passRate?: number | null;
}

/** The compiler's check that `CaseOptions` and the schema of shared/case/case-option-checks.ts have the same keys. */
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : never;
const CASE_OPTIONS_MATCH_SCHEMA: SameKeys<CaseOptions, z.input<typeof CaseOptionsSchema>> = true;
void CASE_OPTIONS_MATCH_SCHEMA;

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
 * case and the field, e.g. `case 'x' has no checks: set criteria, expectedToolCalls, and/or scorer`;
 * an unknown option too, with the nearest known one: `case 'a': unknown option 'scoringMethod' (did you mean outputScoring?)`.
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
  readonly expectedToolCalls: readonly ToolCallExpectation[] | null;
  readonly allowAdditionalToolCalls: boolean;
  /** `any` unless the case says otherwise. */
  readonly toolCallOrder: ToolCallOrder;
  readonly forbiddenToolCalls: readonly ToolCallExpectation[] | null;
  readonly maxToolCalls: number | null;
  readonly toolCallsMustSucceed: boolean;
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
  /** The case's own pass rule of its trials (0-1), or null: the run's. */
  readonly passRate: number | null;

  constructor(options: CaseOptions) {
    if (options === null || typeof options !== "object") {
      throw new CaseValidationError(`case options must be an object, got ${pyRepr(options)}`);
    }
    if (typeof options.name !== "string") {
      throw new CaseValidationError(`case: name must be a string, got ${pyRepr(options.name)}`, { field: "name" });
    }
    // `case 'name'`, worded only when a check fails: a suite of 200,000 valid cases would
    // otherwise format as many labels in every process that loads it.
    const name = options.name;
    const label = (): string => `case ${pyRepr(name)}`;
    // An unknown option first, as Agno's Case raises on an unexpected keyword before anything else:
    // a misspelt `critera` would otherwise read as "has no checks".
    const unknown = unknownCaseOption(options);
    if (unknown !== null) throw unknownOption(label(), unknown, CASE_OPTION_KEYS, "case", options.name);
    // Agno's checks, in Agno's order (spec A1-A5).
    if (!options.agent && !options.team) {
      throw new CaseValidationError(`${label()}: provide one of 'agent' or 'team'`, { case: options.name, field: "agent" });
    }
    if (options.agent && options.team) {
      throw new CaseValidationError(`${label()}: provide only one of 'agent' or 'team'`, { case: options.name, field: "team" });
    }
    // The trajectory check's bounds turn the reliability check on as well as expected calls do.
    const hasToolCalls =
      (Array.isArray(options.expectedToolCalls) ? options.expectedToolCalls.length > 0 : Boolean(options.expectedToolCalls)) ||
      (Array.isArray(options.forbiddenToolCalls) && options.forbiddenToolCalls.length > 0) ||
      (options.maxToolCalls !== undefined && options.maxToolCalls !== null) ||
      options.toolCallsMustSucceed === true;
    // evalfleet's data-driven checks count as checks too; with none of them, Agno's message stands.
    const hasExpectations =
      (options.expectedOutput !== undefined && options.expectedOutput !== null) ||
      (Array.isArray(options.expectedAgentTools) && options.expectedAgentTools.length > 0) ||
      (Array.isArray(options.expectedKnowledgeSources) && options.expectedKnowledgeSources.length > 0) ||
      (Array.isArray(options.evalFunctions) && options.evalFunctions.length > 0);
    if (!options.criteria && !hasToolCalls && (options.scorer === undefined || options.scorer === null) && !hasExpectations) {
      throw new CaseValidationError(`${label()} has no checks: set criteria, expectedToolCalls, and/or scorer`, {
        case: options.name,
        field: "criteria",
      });
    }
    const judgeMode = options.judgeMode ?? JudgeMode.BINARY;
    if (judgeMode !== JudgeMode.BINARY && judgeMode !== JudgeMode.NUMERIC) {
      throw new CaseValidationError(`${label()}: judgeMode must be a JudgeMode, got ${pyRepr(judgeMode)}`, {
        case: options.name,
        field: "judgeMode",
      });
    }
    const judgeThreshold = options.judgeThreshold ?? JUDGE_PASS_THRESHOLD;
    if (judgeMode === JudgeMode.NUMERIC && !(typeof judgeThreshold === "number" && judgeThreshold >= 1 && judgeThreshold <= 10)) {
      throw new CaseValidationError(`${label()}: judgeThreshold must be 1-10, got ${pyRepr(judgeThreshold)}`, {
        case: options.name,
        field: "judgeThreshold",
      });
    }
    const issue = caseOptionsIssue(options);
    if (issue) {
      const field = issue.path.map(String).join(".") || "options";
      const got = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k as PropertyKey], options);
      throw new CaseValidationError(`${label()}: ${field} ${describeIssue(issue)}, got ${pyRepr(got)}`, {
        case: options.name,
        field,
      });
    }
    const order = options.toolCallOrder ?? "any";
    if (order !== "any" && !(Array.isArray(options.expectedToolCalls) && options.expectedToolCalls.length > 0)) {
      throw new CaseValidationError(`${label()}: toolCallOrder ${pyRepr(order)} needs expectedToolCalls (the calls to put in order)`, { case: options.name, field: "toolCallOrder" });
    }
    if (order === "exact" && options.allowAdditionalToolCalls === true) {
      throw new CaseValidationError(`${label()}: allowAdditionalToolCalls true contradicts toolCallOrder 'exact' (exactly these calls and nothing else)`, { case: options.name, field: "allowAdditionalToolCalls" });
    }
    const outputScoring = resolveScoring(options.outputScoring);
    if (options.expectedOutput !== undefined && options.expectedOutput !== null) {
      const problem = expectedOutputProblem(options.expectedOutput, outputScoring);
      if (problem) {
        throw new CaseValidationError(`${label()}: expectedOutput ${problem}, got ${pyRepr(options.expectedOutput)}`, { case: options.name, field: "expectedOutput" });
      }
    }

    this.name = options.name;
    this.input = typeof options.input === "string" ? options.input : freezeMessages(options.input);
    this.agent = options.agent ?? null;
    this.team = options.team ?? null;
    this.tags = options.tags && options.tags.length > 0 ? Object.freeze([...options.tags]) : NO_TAGS;
    this.timeoutSeconds = options.timeoutSeconds ?? null;
    this.setupTimeoutSeconds = options.setupTimeoutSeconds ?? null;
    this.teardownTimeoutSeconds = options.teardownTimeoutSeconds ?? null;
    this.criteria = options.criteria ?? null;
    this.judgeModel = options.judgeModel ?? null;
    this.judgeMode = judgeMode;
    this.judgeThreshold = judgeThreshold;
    this.expectedToolCalls = options.expectedToolCalls ? Object.freeze([...options.expectedToolCalls]) : null;
    this.allowAdditionalToolCalls = options.allowAdditionalToolCalls ?? order !== "exact";
    this.toolCallOrder = order;
    this.forbiddenToolCalls = options.forbiddenToolCalls && options.forbiddenToolCalls.length > 0 ? Object.freeze([...options.forbiddenToolCalls]) : null;
    this.maxToolCalls = options.maxToolCalls ?? null;
    this.toolCallsMustSucceed = options.toolCallsMustSucceed ?? false;
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
    this.passRate = options.passRate ?? null;
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

/** The tags of every case that has none: one frozen list, not one per case. */
const NO_TAGS: readonly string[] = Object.freeze([]);

function freezeMessages(messages: readonly ChatMessage[]): readonly ChatMessage[] {
  return Object.freeze(messages.map((m) => Object.freeze({ ...m })));
}
