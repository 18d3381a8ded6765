// runs in: both
import * as z from "zod";
import type { Agent } from "./agent.ts";
import type { JudgeModel } from "./judge-model.ts";
import type { Scorer } from "./score.ts";
import { SCORING_METHODS } from "../datasets/scoring-methods.ts";
import { OutputScoringSchema } from "../datasets/expected-output-methods.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";
import { plainlyFirst } from "../runtime/start-up.ts";
import { allNames, TOOL_CALL_ORDERS, toolCallListProblems, type MatcherListContext } from "./tool-call-matchers.ts";
import { firstUnknownKey, optionKeys } from "../option-keys.ts";

/**
 * The type checks of `new Case({...})`'s options (JavaScript callers can pass anything): the zod
 * schema that defines them and words their errors, and a plain-code check that spares
 * building and running the schema for the options that are plainly valid (nearly all), as
 * shared/runtime/start-up.ts's `plainlyFirst` does. The plain check is conservative: it answers
 * true only for options the schema accepts (test/shared/case/case-option-checks.test.ts holds it to
 * that over generated options); anything else goes to the schema, which accepts it or names the
 * field. Every worker thread builds every case of its suite, so this runs once per case per thread.
 */

/** An object (not a function) with a method of that name: an agent or team (`run`), a judge (`judge`), a scorer (`score`). */
const withMethod = (v: unknown, method: string): boolean => v !== null && typeof v === "object" && typeof (v as Record<string, unknown>)[method] === "function";

const ChatMessageSchema = lazySchema(() => z.object({ role: z.string().min(1), content: z.string() }));
const InputSchema = lazySchema(() => z.union([z.string(), z.array(ChatMessageSchema)]));
const RunnableSchema = lazySchema(() => z.custom<Agent>(
  (v) => withMethod(v, "run"),
  { message: "must be an object with a run(input, context) method" },
));
const JudgeModelSchema = lazySchema(() => z.custom<JudgeModel>(
  (v) => withMethod(v, "judge"),
  { message: "must be an object with a judge(request, options) method" },
));
const ScorerSchema = lazySchema(() => z.custom<Scorer>(
  (v) => withMethod(v, "score"),
  { message: "must be an object with a score(run, expected) method" },
));
/** A list of tool-call expectations (names or matchers), each problem at its path. */
const toolCallList = (context: MatcherListContext) =>
  z.array(z.unknown()).superRefine((list, ctx) => {
    for (const p of toolCallListProblems(list, context)) ctx.addIssue({ code: "custom", path: [...p.path], message: p.message, input: list });
  });
const EXPECTED: MatcherListContext = { forbidden: false, fromData: false };
const FORBIDDEN: MatcherListContext = { forbidden: true, fromData: false };
const HookSchema = lazySchema(() => z.custom<(...args: never[]) => unknown>((v) => typeof v === "function", { message: "must be a function" }));

/**
 * The known keys of `new Case({...})`, from a table the compiler holds to {@link CaseOptionsSchema}'s
 * fields (and shared/case/case.ts holds `CaseOptions` to the same keys). Not derived from the
 * schema at run time: that would build the schema in every thread the plain check spares it in.
 */
export const CASE_OPTION_KEYS: ReadonlySet<string> = optionKeys<z.input<typeof CaseOptionsSchema>>({
  name: true, input: true, agent: true, team: true, tags: true, timeoutSeconds: true, setupTimeoutSeconds: true,
  teardownTimeoutSeconds: true, criteria: true, judgeModel: true, judgeMode: true, judgeThreshold: true,
  expectedToolCalls: true, allowAdditionalToolCalls: true, toolCallOrder: true, forbiddenToolCalls: true,
  maxToolCalls: true, toolCallsMustSucceed: true, scorer: true, expected: true, setup: true, teardown: true, id: true,
  description: true, metadata: true, expectedOutput: true, outputScoring: true, expectedAgentTools: true,
  expectedKnowledgeSources: true, evalFunctions: true, passRate: true,
});

/** The first key of a case's options that is no option (`scoringMethod`, `tag`), or null. Plain code, no allocation. */
export function unknownCaseOption(options: object): string | null {
  return firstUnknownKey(options, CASE_OPTION_KEYS);
}

/** Type checks of every option of a case; strict, an unknown key is an issue. Agno's rules (A1-A5) run before, in shared/case/case.ts. */
export const CaseOptionsSchema = lazySchema(() => z.strictObject({
  name: z.string(),
  input: InputSchema,
  agent: RunnableSchema.nullish(),
  team: RunnableSchema.nullish(),
  tags: z.array(z.string()).optional(),
  timeoutSeconds: z.number().finite().nullish(),
  setupTimeoutSeconds: z.number().finite().nonnegative().nullish(),
  teardownTimeoutSeconds: z.number().finite().nonnegative().nullish(),
  criteria: z.string().nullish(),
  judgeModel: JudgeModelSchema.nullish(),
  judgeMode: z.string().optional(),
  judgeThreshold: z.number().finite().optional(),
  expectedToolCalls: toolCallList(EXPECTED).nullish(),
  allowAdditionalToolCalls: z.boolean().optional(),
  toolCallOrder: z.enum(TOOL_CALL_ORDERS, { error: `must be one of ${TOOL_CALL_ORDERS.map((o) => `'${o}'`).join(", ")}` }).nullish(),
  forbiddenToolCalls: toolCallList(FORBIDDEN).nullish(),
  maxToolCalls: z.number().refine((n) => Number.isInteger(n) && n >= 0, { message: "must be a whole number >= 0" }).nullish(),
  passRate: z.number({ error: "must be a fraction between 0 and 1 (0.8 for 80%)" }).min(0, { error: "must be a fraction between 0 and 1 (0.8 for 80%)" }).max(1, { error: "must be a fraction between 0 and 1 (0.8 for 80%)" }).nullish(),
  toolCallsMustSucceed: z.boolean().optional(),
  scorer: ScorerSchema.nullish(),
  expected: z.unknown().optional(),
  setup: HookSchema.nullish(),
  teardown: HookSchema.nullish(),
  id: z.string().min(1).nullish(),
  description: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  expectedOutput: z.unknown().optional(),
  outputScoring: OutputScoringSchema.nullish(),
  expectedAgentTools: z.array(z.string().min(1)).nullish(),
  expectedKnowledgeSources: z.array(z.string().min(1)).nullish(),
  evalFunctions: z.array(z.string().min(1)).nullish(),
}));

/** The end of a case's error message for a schema issue: `must be a list`, `must be a function`, ... */
export function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "custom") return issue.message;
  if (issue.code === "invalid_type") return `must be ${issue.expected === "array" ? "a list" : `a ${issue.expected}`}`;
  if (issue.code === "invalid_union") return "must be a string or a list of {role, content} messages";
  return issue.message.toLowerCase();
}

const absent = (v: unknown): boolean => v === undefined || v === null;
const finite = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v);
const SCORING = new Set<unknown>(SCORING_METHODS);
const SCORING_KEYS = new Set<string | symbol>(["method", "ignoreCase", "tolerance"]);

function strings(v: unknown, nonEmpty: boolean): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const s: unknown = v[i];
    if (typeof s !== "string" || (nonEmpty && s.length === 0)) return false;
  }
  return true;
}

const ORDERS = new Set<unknown>(TOOL_CALL_ORDERS);

/** Names (the usual list) or matchers without a problem. */
function toolCalls(v: unknown, context: MatcherListContext): boolean {
  if (!Array.isArray(v)) return false;
  return allNames(v) || toolCallListProblems(v, context).length === 0;
}

function messages(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const m: unknown = v[i];
    if (m === null || typeof m !== "object" || Array.isArray(m)) return false;
    const { role, content } = m as Record<string, unknown>;
    if (typeof role !== "string" || role.length === 0 || typeof content !== "string") return false;
  }
  return true;
}

/** An object literal (or one made with `Object.create(null)`) without symbol keys: what a zod record takes. */
function plainRecord(v: unknown): boolean {
  if (v === null || typeof v !== "object") return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(v).length === 0;
}

function scoring(v: unknown): boolean {
  if (absent(v) || SCORING.has(v)) return true;
  if (!plainRecord(v)) return false;
  for (const key of Reflect.ownKeys(v as object)) if (!SCORING_KEYS.has(key)) return false;
  const { method, ignoreCase, tolerance } = v as Record<string, unknown>;
  return SCORING.has(method) && (ignoreCase === undefined || typeof ignoreCase === "boolean") && (tolerance === undefined || (finite(tolerance) && (tolerance as number) >= 0));
}

/**
 * True when `options` plainly pass {@link CaseOptionsSchema}: each field is absent or of its
 * type, in the shapes suites write. False means "not sure", never "invalid": the schema then
 * decides, and words the error. Pure, no allocation beyond a record's symbol list. One expression
 * with a term per option, not a table of checks: a table of functions measured 15-20% slower per
 * case. Its first term is the key check ({@link unknownCaseOption}), as the schema is strict:
 * shared/case/case.ts runs that check first on its own too (an unknown option is the first error a
 * case reports), and its cost, measured in bench/case-construction.ts, is paid twice.
 */
export function plainlyValidCaseOptions(options: object): boolean {
  if (Array.isArray(options)) return false;
  const o = options as Record<string, unknown>;
  return (
    unknownCaseOption(o) === null &&
    typeof o.name === "string" &&
    (typeof o.input === "string" || messages(o.input)) &&
    (absent(o.agent) || withMethod(o.agent, "run")) &&
    (absent(o.team) || withMethod(o.team, "run")) &&
    (o.tags === undefined || strings(o.tags, false)) &&
    (absent(o.timeoutSeconds) || finite(o.timeoutSeconds)) &&
    (absent(o.setupTimeoutSeconds) || (finite(o.setupTimeoutSeconds) && (o.setupTimeoutSeconds as number) >= 0)) &&
    (absent(o.teardownTimeoutSeconds) || (finite(o.teardownTimeoutSeconds) && (o.teardownTimeoutSeconds as number) >= 0)) &&
    (absent(o.criteria) || typeof o.criteria === "string") &&
    (absent(o.judgeModel) || withMethod(o.judgeModel, "judge")) &&
    (o.judgeMode === undefined || typeof o.judgeMode === "string") &&
    (o.judgeThreshold === undefined || finite(o.judgeThreshold)) &&
    (absent(o.expectedToolCalls) || toolCalls(o.expectedToolCalls, EXPECTED)) &&
    (o.allowAdditionalToolCalls === undefined || typeof o.allowAdditionalToolCalls === "boolean") &&
    (absent(o.toolCallOrder) || ORDERS.has(o.toolCallOrder)) &&
    (absent(o.forbiddenToolCalls) || toolCalls(o.forbiddenToolCalls, FORBIDDEN)) &&
    (absent(o.maxToolCalls) || (Number.isInteger(o.maxToolCalls) && (o.maxToolCalls as number) >= 0)) &&
    (absent(o.passRate) || (finite(o.passRate) && (o.passRate as number) >= 0 && (o.passRate as number) <= 1)) &&
    (o.toolCallsMustSucceed === undefined || typeof o.toolCallsMustSucceed === "boolean") &&
    (absent(o.scorer) || withMethod(o.scorer, "score")) &&
    (absent(o.setup) || typeof o.setup === "function") &&
    (absent(o.teardown) || typeof o.teardown === "function") &&
    (absent(o.id) || (typeof o.id === "string" && o.id.length > 0)) &&
    (absent(o.description) || typeof o.description === "string") &&
    (absent(o.metadata) || plainRecord(o.metadata)) &&
    scoring(o.outputScoring) &&
    (absent(o.expectedAgentTools) || strings(o.expectedAgentTools, true)) &&
    (absent(o.expectedKnowledgeSources) || strings(o.expectedKnowledgeSources, true)) &&
    (absent(o.evalFunctions) || strings(o.evalFunctions, true))
  );
}

/**
 * The first problem of a case's options, or null when they pass: the plain check first, the
 * schema only when it is not sure (`plainlyFirst`, shared/runtime/start-up.ts). Agno's rules run
 * before, in shared/case/case.ts.
 */
export const caseOptionsIssue = plainlyFirst(plainlyValidCaseOptions, CaseOptionsSchema);
