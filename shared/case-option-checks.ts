import * as z from "zod";
import type { Agent } from "./agent.ts";
import type { JudgeModel } from "./judge-model.ts";
import type { Scorer } from "./score.ts";
import { SCORING_METHODS } from "./defaults.ts";
import { OutputScoringSchema } from "./datasets/expected-output-methods.ts";
import { lazySchema } from "./lazy-schema.ts";

/**
 * The type checks of `new Case({...})`'s options (JavaScript callers can pass anything): the zod
 * schema that defines them and words their errors, and a plain-code check that the options are
 * plainly valid, which spares building and running the schema for the suites that are (nearly
 * all). The plain check is conservative: it answers true only for options the schema accepts
 * (test/shared/case-option-checks.test.ts holds it to that over generated options); anything
 * else goes to the schema, which accepts it or names the field. Every worker thread builds every
 * case of its suite, so this runs once per case per thread, and the first case's schema used to
 * be built as a thread starts (bench/README.md: a thread's start).
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
const HookSchema = lazySchema(() => z.custom<(...args: never[]) => unknown>((v) => typeof v === "function", { message: "must be a function" }));

/** Type checks of every option of a case. Agno's rules (A1-A5) run before, in shared/case.ts. */
export const CaseOptionsSchema = lazySchema(() => z.object({
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
  expectedToolCalls: z.array(z.string()).nullish(),
  allowAdditionalToolCalls: z.boolean().optional(),
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
 * type, in the shapes suites write. False means "not sure", never "invalid": the caller then
 * runs the schema. Pure, no allocation beyond a record's symbol list.
 */
export function plainlyValidCaseOptions(options: object): boolean {
  if (Array.isArray(options)) return false;
  const o = options as Record<string, unknown>;
  return (
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
    (absent(o.expectedToolCalls) || strings(o.expectedToolCalls, false)) &&
    (o.allowAdditionalToolCalls === undefined || typeof o.allowAdditionalToolCalls === "boolean") &&
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
