// runs in: both
import * as z from "zod";
import type { Agent, CaseInput, Team } from "../case/agent.ts";
import type { JudgeMode } from "../case/case.ts";
import { JUDGE_PASS_THRESHOLD } from "../case/judge-model.ts";
import { pyRepr } from "../py-format.ts";
import { EXULU_FIELD_SCHEMAS, withExuluMetadata } from "./exulu-fields.ts";
import { describeValue, formatPath, shortRepr, valueAt, type RowProblem } from "./problem-text.ts";
import { suggestion } from "./row-fields.ts";
import { firstUnknownKey, optionKeys, unknownOption } from "../option-keys.ts";
import { messageProblems, toChatMessages } from "./ui-messages.ts";
import {
  expectedOutputProblem,
  OutputScoringSchema,
  resolveScoring,
  SCORING_METHODS,
  type ExpectedOutput,
  type OutputScoring,
  type ResolvedScoring,
  type ScoringMethod,
} from "./expected-output-methods.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";
import { TOOL_CALL_ORDERS, toolCallListProblems, type MatcherListContext, type ToolCallExpectation, type ToolCallOrder } from "../case/tool-call-matchers.ts";

/**
 * Data-driven cases: the row format of dataset files (Exulu's test case fields, snake_case), the
 * zod schemas that validate a row, and the conversion of a valid row into the options of a case.
 * Pure; no I/O (reading the files is `files.ts`, the cases they become `dataset-case.ts`).
 */

/** File formats of datasets. */
export const DATASET_FORMATS = ["jsonl", "json", "yaml", "csv"] as const;
/** `jsonl` (one JSON object per line), `json` (an array of objects), `yaml` (a sequence of mappings), `csv` (a header row, then one row per case). */
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

/** Options of one dataset of a suite (`defineSuite({ datasets: [dataset("cases.jsonl", {...})] })`). */
export interface DatasetOptions {
  /** Default: from the extension (`.jsonl`/`.ndjson`, `.json`, `.yaml`/`.yml`, `.csv`). */
  format?: DatasetFormat;
  /** The agent or team id for rows that name none. Default: the suite's only agent or team, if it has exactly one. */
  agent?: string;
  /** How `expected_output` is compared when a row sets no `scoring_method`. Default `"exact"`. */
  scoring?: ScoringMethod | OutputScoring;
  /** Tags added to every row's own. Default none. */
  tags?: readonly string[];
  /** Reliability (`expected_tools`) allows calls to other tools, unless a row says otherwise. Default true. */
  allowAdditionalTools?: boolean;
}

/** A dataset as a suite declares it. */
export interface DatasetDeclaration extends DatasetOptions {
  /** The file: relative paths are resolved against the suite file's folder. */
  path: string | URL;
}

/** The known keys of {@link dataset}'s options. */
export const DATASET_OPTION_KEYS: ReadonlySet<string> = optionKeys<DatasetOptions>({ format: true, agent: true, scoring: true, tags: true, allowAdditionalTools: true });

/**
 * Declares a dataset: `dataset("./cases.jsonl", { agent: "support-bot", scoring: "contains" })`.
 * An unknown option throws a ConfigError naming the file and the nearest known option
 * (`dataset 'cases.jsonl': unknown option 'scoringMethod' (did you mean scoring?)`).
 */
export function dataset(path: string | URL, options: DatasetOptions = {}): DatasetDeclaration {
  if (options !== null && typeof options === "object") {
    const unknown = firstUnknownKey(options, DATASET_OPTION_KEYS);
    if (unknown !== null) throw unknownOption(`dataset ${pyRepr(String(path))}`, unknown, DATASET_OPTION_KEYS);
  }
  return Object.freeze({ ...options, path });
}

/** zod schema of a dataset declared as an object (`dataset(path, options)`). */
export const DatasetObjectSchema = lazySchema(() => z.strictObject({
  path: z.union([z.string().min(1), z.instanceof(URL)], { error: "must be a file path or a file URL" }),
  format: z.enum(DATASET_FORMATS, { error: `must be one of ${DATASET_FORMATS.join(", ")}` }).optional(),
  agent: z.string({ error: "must be an agent or team id" }).min(1).optional(),
  scoring: OutputScoringSchema.optional(),
  tags: z.array(z.string(), { error: "must be a list of tags" }).optional(),
  allowAdditionalTools: z.boolean({ error: "must be true or false" }).optional(),
}));

/** zod schema of a dataset declaration (a path alone, or the object). */
export const DatasetDeclarationSchema = lazySchema(() => z.union([z.string().min(1), z.instanceof(URL), DatasetObjectSchema], {
  error: 'must be a file path, or dataset("cases.jsonl", { ... })',
}));

/** The format of a file from its extension, or null. */
export function formatFromPath(path: string): DatasetFormat | null {
  const lower = path.toLowerCase();
  if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) return "jsonl";
  if (lower.endsWith(".json")) return "json";
  if (lower.endsWith(".yaml") || lower.endsWith(".yml")) return "yaml";
  if (lower.endsWith(".csv")) return "csv";
  return null;
}

// ---------------------------------------------------------------------------------------------
// The row format (its field names: row-fields.ts).

const text = (what = "must be text") => z.string({ error: what });
const nonEmptyText = (what = "must be text") => text(what).min(1, { error: "must not be empty" });
const toolList = lazySchema(() => z.array(nonEmptyText("must be a tool name (text)"), { error: "must be a list of names" }));
/** Tool calls: names or `{ name, args, times, result }` matchers (`{ "$regex": ... }` for patterns), each problem at its path. */
const toolCallList = (context: MatcherListContext) =>
  z.array(z.unknown(), { error: "must be a list of names" }).superRefine((list, ctx) => {
    for (const p of toolCallListProblems(list, context)) ctx.addIssue({ code: "custom", path: [...p.path], message: p.message, input: list });
  });
const EXPECTED_IN_DATA: MatcherListContext = { forbidden: false, fromData: true };
const FORBIDDEN_IN_DATA: MatcherListContext = { forbidden: true, fromData: true };

/**
 * A conversation: `{role, content}` messages (content: text or AI SDK model parts) and AI SDK UI
 * messages `{id, role, metadata, parts}` (Exulu stores those), each problem at its path.
 */
const InputsListSchema = lazySchema(() => z
  .array(z.unknown())
  .min(1, { error: "must not be an empty list" })
  .superRefine((list, ctx) => {
    for (const p of messageProblems(list)) ctx.addIssue({ code: "custom", path: p.path, message: p.message, input: valueAt(list as unknown as Record<string, unknown>, p.path) });
  }));

/** zod schema of a row once nulls are dropped and CSV cells are read. Field errors carry the messages shown to people. */
export const DatasetRowSchema = lazySchema(() => z.strictObject({
  id: z.union([nonEmptyText(), z.number()], { error: "must be text or a number" }).optional(),
  name: nonEmptyText().optional(),
  description: text().optional(),
  agent: nonEmptyText("must be an agent id (text)").optional(),
  team: nonEmptyText("must be a team id (text)").optional(),
  inputs: z.union([text(), InputsListSchema], {
    error: "must be a string or a list of {role, content} messages",
  }),
  expected_output: z.union([z.string(), z.number(), z.boolean(), z.array(z.unknown()), z.record(z.string(), z.unknown())], {
    error: "must be text, a number or JSON data",
  }).optional(),
  scoring_method: z.enum(SCORING_METHODS, { error: `must be one of ${SCORING_METHODS.join(", ")}` }).optional(),
  tolerance: z.number({ error: "must be a number" }).finite().min(0, { error: "must be >= 0" }).optional(),
  expected_tools: toolCallList(EXPECTED_IN_DATA).optional(),
  expected_tool_calls: toolCallList(EXPECTED_IN_DATA).optional(),
  allow_additional_tools: z.boolean({ error: "must be true or false" }).optional(),
  tool_call_order: z.enum(TOOL_CALL_ORDERS, { error: `must be one of ${TOOL_CALL_ORDERS.join(", ")}` }).optional(),
  forbidden_tools: toolCallList(FORBIDDEN_IN_DATA).optional(),
  max_tool_calls: z.number({ error: "must be a whole number >= 0" }).int({ error: "must be a whole number >= 0" }).min(0, { error: "must be a whole number >= 0" }).optional(),
  tool_calls_must_succeed: z.boolean({ error: "must be true or false" }).optional(),
  expected_agent_tools: toolList.optional(),
  expected_knowledge_sources: z.array(nonEmptyText("must be a source name (text)"), { error: "must be a list of names" }).optional(),
  criteria: text().optional(),
  judge_mode: z.enum(["binary", "numeric"], { error: "must be 'binary' or 'numeric'" }).optional(),
  judge_threshold: z.number({ error: "must be a number" }).finite().optional(),
  eval_functions: z.array(nonEmptyText("must be an evaluation function's name (text)"), { error: "must be a list of evaluation function names" }).optional(),
  tags: z.array(text("must be a tag (text)"), { error: "must be a list of tags" }).optional(),
  timeout_seconds: z.number({ error: "must be a number of seconds" }).finite().min(0, { error: "must be >= 0" }).optional(),
  metadata: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional(),
  ...EXULU_FIELD_SCHEMAS,
}));
/** A row that passed {@link DatasetRowSchema}. */
export type DatasetRow = z.infer<typeof DatasetRowSchema>;

export type { RowProblem } from "./problem-text.ts";

/** A component a row can name: an agent or a team, by id. */
export interface RegisteredComponent {
  id: string;
  component: Agent | Team;
  kind: "agent" | "team";
}

/** What a row is checked against: the suite's agents and teams, and its dataset's options. */
export interface RowContext {
  components: ReadonlyMap<string, RegisteredComponent>;
  /** Resolved from the dataset's `agent`, else the suite's only component; null when neither. */
  defaultComponent: RegisteredComponent | null;
  scoring: ResolvedScoring;
  tags: readonly string[];
  allowAdditionalTools: boolean;
  /** The names of the suite's evaluation functions (`defineSuite({ evalFunctions })`), in declaration order. */
  evalFunctions: readonly string[];
}

/** A valid row as the options of a case. */
export interface RowSpec {
  id: string | null;
  name: string;
  description: string | null;
  component: RegisteredComponent;
  input: CaseInput;
  expectedOutput: ExpectedOutput | null;
  outputScoring: ResolvedScoring;
  expectedToolCalls: readonly ToolCallExpectation[] | null;
  allowAdditionalToolCalls: boolean;
  toolCallOrder: ToolCallOrder;
  forbiddenToolCalls: readonly ToolCallExpectation[] | null;
  maxToolCalls: number | null;
  toolCallsMustSucceed: boolean;
  expectedAgentTools: readonly string[] | null;
  expectedKnowledgeSources: readonly string[] | null;
  criteria: string | null;
  judgeMode: JudgeMode;
  judgeThreshold: number;
  tags: readonly string[];
  timeoutSeconds: number | null;
  /** The row's `metadata`, with Exulu's `createdAt`/`updatedAt`/`RBAC` under `exulu`. */
  metadata: Readonly<Record<string, unknown>> | null;
  /** Names of the suite's evaluation functions the row asks for, or null. */
  evalFunctions: readonly string[] | null;
}

/**
 * Validates one raw row (a parsed JSON/YAML value, or a CSV record already read by
 * {@link csvRecordToRow}) and converts it. Every problem is reported, not the first only.
 */
export function rowToSpec(raw: unknown, ctx: RowContext): { spec: RowSpec } | { problems: RowProblem[] } {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { problems: [{ field: null, message: `a row must be an object of test case fields, got ${describeValue(raw)}` }] };
  }
  // A null field is an absent one: exports from databases write every column.
  const row: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (v !== null && v !== undefined) row[k] = v;

  const problems: RowProblem[] = [];
  // Field by field, so that one bad field does not hide the problems of the others.
  const shape = DatasetRowSchema.shape as Record<string, z.ZodType>;
  const r: Partial<DatasetRow> = {};
  const invalid = new Set<string>();
  for (const [key, value] of Object.entries(row)) {
    const schema = shape[key];
    if (!schema) {
      invalid.add(key);
      problems.push({ field: key, message: `unknown field${suggestion(key)}; put extra data under metadata` });
      continue;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) {
      (r as Record<string, unknown>)[key] = parsed.data;
      continue;
    }
    invalid.add(key);
    // A conversation with one bad message: name the message, not the whole field.
    const issues = key === "inputs" && Array.isArray(value) ? (InputsListSchema.safeParse(value).error?.issues ?? parsed.error.issues) : parsed.error.issues;
    for (const issue of issues) {
      const path = [key, ...issue.path];
      problems.push({ field: formatPath(path), message: `${issue.message}, got ${shortRepr(valueAt(row, path))}` });
    }
  }
  if (row.inputs === undefined) problems.push({ field: "inputs", message: "is required (a prompt, or a list of {role, content} messages)" });
  const bad = (...keys: string[]): boolean => keys.some((k) => invalid.has(k));

  const name = r.name ?? (r.id !== undefined ? String(r.id) : undefined);
  if (name === undefined && !bad("name", "id")) problems.push({ field: "name", message: "is required (a row needs a name, or an id to serve as one)" });

  let component: RegisteredComponent | null = null;
  if (bad("agent", "team")) {
    // already reported
  } else if (r.agent !== undefined && r.team !== undefined) {
    problems.push({ field: "team", message: `set only one of agent and team, got agent ${pyRepr(r.agent)} and team ${pyRepr(r.team)}` });
  } else if (r.agent !== undefined || r.team !== undefined) {
    const id = (r.agent ?? r.team)!;
    const field = r.agent !== undefined ? "agent" : "team";
    const found = ctx.components.get(id);
    if (!found) problems.push({ field, message: `no agent or team with id ${pyRepr(id)} in the suite (it has: ${availableIds(ctx)})` });
    else if (field === "team" && found.kind !== "team") problems.push({ field, message: `${pyRepr(id)} is an agent, not a team: use the agent field` });
    else component = found;
  } else if (ctx.defaultComponent) {
    component = ctx.defaultComponent;
  } else {
    problems.push({ field: "agent", message: `is required: name one of the suite's agents or teams (${availableIds(ctx)}), or set agent on the dataset` });
  }

  let input: CaseInput | undefined = r.inputs === undefined ? undefined : typeof r.inputs === "string" ? r.inputs : toChatMessages(r.inputs);
  if (Array.isArray(input) && input.length === 0) {
    // Only sources, data or step-start parts: the AI SDK's conversion leaves nothing to send.
    problems.push({ field: "inputs", message: "converts to no messages: a UI message needs text, file, reasoning or tool parts" });
    input = undefined;
  }

  const judgeMode: JudgeMode = r.judge_mode ?? "binary";
  const judgeThreshold = r.judge_threshold ?? JUDGE_PASS_THRESHOLD;
  if (judgeMode === "numeric" && !bad("judge_threshold") && !(judgeThreshold >= 1 && judgeThreshold <= 10)) {
    problems.push({ field: "judge_threshold", message: `must be 1-10, got ${pyRepr(judgeThreshold)}` });
  }

  const scoring = resolveScoring(r.scoring_method ? { method: r.scoring_method, tolerance: r.tolerance } : r.tolerance !== undefined ? { method: ctx.scoring.method, tolerance: r.tolerance } : null, ctx.scoring);
  const expectedOutput = r.expected_output ?? null;
  if (bad("expected_output", "scoring_method", "tolerance")) {
    // already reported
  } else if (expectedOutput !== null) {
    const problem = expectedOutputProblem(expectedOutput, scoring);
    if (problem) problems.push({ field: "expected_output", message: `${problem}, got ${shortRepr(expectedOutput)}` });
  } else {
    if (r.scoring_method !== undefined) problems.push({ field: "scoring_method", message: "is set but expected_output is not" });
    if (r.tolerance !== undefined) problems.push({ field: "tolerance", message: "is set but expected_output is not" });
  }

  const list = <T>(v: readonly T[] | undefined): readonly T[] | null => (v && v.length > 0 ? Object.freeze([...v]) : null);
  // expected_tool_calls is Agno's name for expected_tools: one of the two.
  if (r.expected_tools !== undefined && r.expected_tool_calls !== undefined) problems.push({ field: "expected_tool_calls", message: "is set beside expected_tools: they are the same field, set one" });
  const expectedToolCalls = list((r.expected_tools ?? r.expected_tool_calls) as readonly ToolCallExpectation[] | undefined);
  const forbiddenToolCalls = list(r.forbidden_tools as readonly ToolCallExpectation[] | undefined);
  const toolCallOrder: ToolCallOrder = r.tool_call_order ?? "any";
  if (toolCallOrder !== "any" && !expectedToolCalls && !bad("expected_tools", "expected_tool_calls")) problems.push({ field: "tool_call_order", message: `is ${toolCallOrder} but expected_tools is not set (the calls to put in order)` });
  if (toolCallOrder === "exact" && r.allow_additional_tools === true) problems.push({ field: "allow_additional_tools", message: "is true but tool_call_order is exact (exactly these calls and nothing else)" });
  const trajectoryBounds = forbiddenToolCalls !== null || r.max_tool_calls !== undefined || r.tool_calls_must_succeed === true;
  const expectedAgentTools = list(r.expected_agent_tools);
  const expectedKnowledgeSources = list(r.expected_knowledge_sources);
  const criteria = r.criteria ? r.criteria : null;
  const evalFunctions = list(r.eval_functions);
  for (const name of evalFunctions ?? []) {
    if (!ctx.evalFunctions.includes(name)) problems.push({ field: "eval_functions", message: unknownEvalFunction(name, ctx.evalFunctions) });
  }
  const exulu = withExuluMetadata(r.metadata, { createdAt: r.createdAt, updatedAt: r.updatedAt, RBAC: r.RBAC });
  if (!bad("metadata")) problems.push(...exulu.problems);
  // An unknown field is often a misspelt check (expected_tool): "no checks" would only add noise.
  const checksInvalid =
    bad("expected_output", "expected_tools", "expected_tool_calls", "forbidden_tools", "max_tool_calls", "tool_calls_must_succeed", "expected_agent_tools", "expected_knowledge_sources", "criteria", "eval_functions") ||
    [...invalid].some((k) => !shape[k]);
  if (!checksInvalid && expectedOutput === null && !expectedToolCalls && !trajectoryBounds && !expectedAgentTools && !expectedKnowledgeSources && !criteria && !evalFunctions) {
    problems.push({ field: null, message: "has no checks: set expected_output, expected_tools, expected_agent_tools, expected_knowledge_sources, criteria and/or eval_functions" });
  }

  if (problems.length > 0) return { problems };
  const tags = [...(r.tags ?? [])];
  for (const t of ctx.tags) if (!tags.includes(t)) tags.push(t);
  return {
    spec: {
      id: r.id !== undefined ? String(r.id) : null,
      name: name!,
      description: r.description ?? null,
      component: component!,
      input: input!,
      expectedOutput,
      outputScoring: scoring,
      expectedToolCalls,
      // A dataset's allowAdditionalTools default gives way to a row's exact order.
      allowAdditionalToolCalls: r.allow_additional_tools ?? (toolCallOrder === "exact" ? false : ctx.allowAdditionalTools),
      toolCallOrder,
      forbiddenToolCalls,
      maxToolCalls: r.max_tool_calls ?? null,
      toolCallsMustSucceed: r.tool_calls_must_succeed ?? false,
      expectedAgentTools,
      expectedKnowledgeSources,
      criteria,
      judgeMode,
      judgeThreshold,
      tags: Object.freeze(tags),
      timeoutSeconds: r.timeout_seconds ?? null,
      metadata: exulu.metadata ? Object.freeze({ ...exulu.metadata }) : null,
      evalFunctions,
    },
  };
}

/** `unknown evaluation function 'tone' (the suite registers: clarity, safety)`. */
export function unknownEvalFunction(name: string, registered: readonly string[]): string {
  return `unknown evaluation function ${pyRepr(name)} (${registered.length > 0 ? `the suite registers: ${registered.join(", ")}` : "the suite registers none: declare them with defineSuite({ evalFunctions: { name: scorer } })"})`;
}

function availableIds(ctx: RowContext): string {
  const ids = [...ctx.components.keys()];
  return ids.length > 0 ? ids.map((id) => pyRepr(id)).join(", ") : "none: declare them with defineSuite({ agents, teams })";
}
