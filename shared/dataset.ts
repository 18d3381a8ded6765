import { z } from "zod";
import type { Agent, CaseInput, ChatMessage, Team } from "./agent.ts";
import type { JudgeMode } from "./case.ts";
import { pyRepr } from "./py-format.ts";
import {
  jsonErrorText,
  expectedOutputProblem,
  OutputScoringSchema,
  resolveScoring,
  SCORING_METHODS,
  type ExpectedOutput,
  type OutputScoring,
  type ResolvedScoring,
  type ScoringMethod,
} from "./scoring.ts";

/**
 * Data-driven cases: the row format of dataset files (Exulu's test case fields, snake_case), the
 * zod schemas that validate a row, and the conversion of a valid row into the options of a case.
 * Pure; no I/O (reading the files is `dataset-files.ts`, the cases they become `dataset-case.ts`).
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

/** Declares a dataset: `dataset("./cases.jsonl", { agent: "support-bot", scoring: "contains" })`. */
export function dataset(path: string | URL, options: DatasetOptions = {}): DatasetDeclaration {
  return Object.freeze({ ...options, path });
}

/** zod schema of a dataset declared as an object (`dataset(path, options)`). */
export const DatasetObjectSchema = z.strictObject({
  path: z.union([z.string().min(1), z.instanceof(URL)], { error: "must be a file path or a file URL" }),
  format: z.enum(DATASET_FORMATS, { error: `must be one of ${DATASET_FORMATS.join(", ")}` }).optional(),
  agent: z.string({ error: "must be an agent or team id" }).min(1).optional(),
  scoring: OutputScoringSchema.optional(),
  tags: z.array(z.string(), { error: "must be a list of tags" }).optional(),
  allowAdditionalTools: z.boolean({ error: "must be true or false" }).optional(),
});

/** zod schema of a dataset declaration (a path alone, or the object). */
export const DatasetDeclarationSchema = z.union([z.string().min(1), z.instanceof(URL), DatasetObjectSchema], {
  error: 'must be a file path, or dataset("cases.jsonl", { ... })',
});

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
// The row format.

/** Every field a row may have, in the order the documentation lists them. */
export const ROW_FIELDS = [
  "id",
  "name",
  "description",
  "agent",
  "team",
  "inputs",
  "expected_output",
  "scoring_method",
  "tolerance",
  "expected_tools",
  "allow_additional_tools",
  "expected_agent_tools",
  "expected_knowledge_sources",
  "criteria",
  "judge_mode",
  "judge_threshold",
  "tags",
  "timeout_seconds",
  "metadata",
] as const;
type RowField = (typeof ROW_FIELDS)[number];
const ROW_FIELD_SET: ReadonlySet<string> = new Set(ROW_FIELDS);

const text = (what = "must be text") => z.string({ error: what });
const nonEmptyText = (what = "must be text") => text(what).min(1, { error: "must not be empty" });
const toolList = z.array(nonEmptyText("must be a tool name (text)"), { error: "must be a list of names" });

/** A chat message: `{role, content}`, or an AI SDK UIMessage `{role, parts: [{type: "text", text}]}` (Exulu stores those). */
const MessageSchema = z.union(
  [
    z.looseObject({ role: nonEmptyText(), content: text() }),
    z.looseObject({
      role: nonEmptyText(),
      parts: z.array(z.looseObject({ type: z.literal("text"), text: text() })).min(1),
    }),
  ],
  { error: "must be a {role, content} message" },
);

const InputsListSchema = z.array(MessageSchema).min(1, { error: "must not be an empty list" });

/** zod schema of a row once nulls are dropped and CSV cells are read. Field errors carry the messages shown to people. */
export const DatasetRowSchema = z.strictObject({
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
  expected_tools: toolList.optional(),
  allow_additional_tools: z.boolean({ error: "must be true or false" }).optional(),
  expected_agent_tools: toolList.optional(),
  expected_knowledge_sources: z.array(nonEmptyText("must be a source name (text)"), { error: "must be a list of names" }).optional(),
  criteria: text().optional(),
  judge_mode: z.enum(["binary", "numeric"], { error: "must be 'binary' or 'numeric'" }).optional(),
  judge_threshold: z.number({ error: "must be a number" }).finite().optional(),
  tags: z.array(text("must be a tag (text)"), { error: "must be a list of tags" }).optional(),
  timeout_seconds: z.number({ error: "must be a number of seconds" }).finite().min(0, { error: "must be >= 0" }).optional(),
  metadata: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional(),
});
/** A row that passed {@link DatasetRowSchema}. */
export type DatasetRow = z.infer<typeof DatasetRowSchema>;

/** A problem of one row, before it is given its file and line. */
export interface RowProblem {
  field: string | null;
  message: string;
}

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
  expectedToolCalls: readonly string[] | null;
  allowAdditionalToolCalls: boolean;
  expectedAgentTools: readonly string[] | null;
  expectedKnowledgeSources: readonly string[] | null;
  criteria: string | null;
  judgeMode: JudgeMode;
  judgeThreshold: number;
  tags: readonly string[];
  timeoutSeconds: number | null;
  metadata: Readonly<Record<string, unknown>> | null;
}

/**
 * Validates one raw row (a parsed JSON/YAML value, or a CSV record already read by
 * {@link csvRecordToRow}) and converts it. Every problem is reported, not the first only.
 */
export function rowToSpec(raw: unknown, ctx: RowContext): { spec: RowSpec } | { problems: RowProblem[] } {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { problems: [{ field: null, message: `a row must be an object of test case fields, got ${describe(raw)}` }] };
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

  const input: CaseInput | undefined = r.inputs === undefined ? undefined : typeof r.inputs === "string" ? r.inputs : r.inputs.map(toChatMessage);

  const judgeMode: JudgeMode = r.judge_mode ?? "binary";
  const judgeThreshold = r.judge_threshold ?? 7;
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

  const list = (v: readonly string[] | undefined): readonly string[] | null => (v && v.length > 0 ? Object.freeze([...v]) : null);
  const expectedToolCalls = list(r.expected_tools);
  const expectedAgentTools = list(r.expected_agent_tools);
  const expectedKnowledgeSources = list(r.expected_knowledge_sources);
  const criteria = r.criteria ? r.criteria : null;
  // An unknown field is often a misspelt check (expected_tool): "no checks" would only add noise.
  const checksInvalid = bad("expected_output", "expected_tools", "expected_agent_tools", "expected_knowledge_sources", "criteria") || [...invalid].some((k) => !shape[k]);
  if (!checksInvalid && expectedOutput === null && !expectedToolCalls && !expectedAgentTools && !expectedKnowledgeSources && !criteria) {
    problems.push({ field: null, message: "has no checks: set expected_output, expected_tools, expected_agent_tools, expected_knowledge_sources and/or criteria" });
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
      allowAdditionalToolCalls: r.allow_additional_tools ?? ctx.allowAdditionalTools,
      expectedAgentTools,
      expectedKnowledgeSources,
      criteria,
      judgeMode,
      judgeThreshold,
      tags: Object.freeze(tags),
      timeoutSeconds: r.timeout_seconds ?? null,
      metadata: r.metadata ? Object.freeze({ ...r.metadata }) : null,
    },
  };
}

function toChatMessage(m: { role: string; content?: unknown; parts?: unknown }): ChatMessage {
  if (typeof m.content === "string") return Object.freeze({ role: m.role, content: m.content });
  const parts = m.parts as { text: string }[];
  return Object.freeze({ role: m.role, content: parts.map((p) => p.text).join("\n") });
}

function availableIds(ctx: RowContext): string {
  const ids = [...ctx.components.keys()];
  return ids.length > 0 ? ids.map((id) => pyRepr(id)).join(", ") : "none: declare them with defineSuite({ agents, teams })";
}

// ---------------------------------------------------------------------------------------------
// CSV: every cell is text; the header says which field a column is.

const CSV_NUMBER_FIELDS: ReadonlySet<RowField> = new Set(["tolerance", "judge_threshold", "timeout_seconds"]);
const CSV_LIST_FIELDS: ReadonlySet<RowField> = new Set(["tags", "expected_tools", "expected_agent_tools", "expected_knowledge_sources"]);

/** Problems of a CSV header (unknown or repeated columns), reported once at line 1. */
export function csvHeaderProblems(header: readonly string[]): RowProblem[] {
  const problems: RowProblem[] = [];
  const seen = new Set<string>();
  header.forEach((column, i) => {
    if (column === "") problems.push({ field: null, message: `column ${i + 1} has no name in the header row` });
    else if (seen.has(column)) problems.push({ field: column, message: "appears twice in the header row" });
    else if (!ROW_FIELD_SET.has(column) && !column.startsWith("metadata.")) {
      problems.push({ field: column, message: `unknown column${suggestion(column)}; name extra columns metadata.<key> to keep them` });
    }
    seen.add(column);
  });
  return problems;
}

/**
 * Reads a CSV record into a row: an empty cell is an absent field; numbers, `true`/`false`,
 * lists (comma-separated, or a JSON list) and JSON objects are read from their text; `inputs`
 * that is a JSON list is a conversation; `metadata.<key>` columns go into `metadata`.
 * Returns the row, and the problems of cells that cannot be read.
 */
export function csvRecordToRow(header: readonly string[], record: readonly string[]): { row: Record<string, unknown>; problems: RowProblem[] } {
  const row: Record<string, unknown> = {};
  const problems: RowProblem[] = [];
  if (record.length !== header.length) {
    problems.push({ field: null, message: `has ${record.length} cells, the header has ${header.length} columns` });
  }
  const metadata: Record<string, unknown> = {};
  let hasMetadataColumns = false;
  header.forEach((column, i) => {
    const cell = record[i];
    if (cell === undefined || cell === "" || !column) return;
    if (column.startsWith("metadata.")) {
      metadata[column.slice("metadata.".length)] = cell;
      hasMetadataColumns = true;
      return;
    }
    // Unknown columns are reported once, at the header (csvHeaderProblems), not on every row.
    if (!ROW_FIELD_SET.has(column)) return;
    const field = column as RowField;
    if (CSV_NUMBER_FIELDS.has(field)) {
      const trimmed = cell.trim();
      row[field] = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed) ? Number(trimmed) : cell;
    } else if (field === "allow_additional_tools") {
      const v = cell.trim().toLowerCase();
      row[field] = v === "true" || v === "yes" || v === "1" ? true : v === "false" || v === "no" || v === "0" ? false : cell;
    } else if (CSV_LIST_FIELDS.has(field)) {
      if (cell.trimStart().startsWith("[")) {
        const json = parseJson(cell);
        if ("error" in json) problems.push({ field, message: `is not a valid JSON list: ${json.error}, got ${shortRepr(cell)}` });
        else row[field] = json.value;
      } else {
        row[field] = cell
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
      }
    } else if (field === "metadata") {
      const json = parseJson(cell);
      if ("error" in json) problems.push({ field, message: `is not a valid JSON object: ${json.error}, got ${shortRepr(cell)}` });
      else row[field] = json.value;
    } else if (field === "inputs" && cell.trimStart().startsWith("[")) {
      // A cell that is a JSON list is a conversation; any other text (even one starting with "[") is a prompt.
      const json = parseJson(cell);
      row[field] = "value" in json && Array.isArray(json.value) ? json.value : cell;
    } else {
      row[field] = cell;
    }
  });
  if (hasMetadataColumns) {
    const base = row.metadata && typeof row.metadata === "object" && !Array.isArray(row.metadata) ? (row.metadata as Record<string, unknown>) : {};
    row.metadata = { ...base, ...metadata };
  }
  return { row, problems };
}

function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: jsonErrorText(err) };
  }
}



// ---------------------------------------------------------------------------------------------
// Message helpers.

/** A value for an error message: Python's repr, cut to 80 characters. */
export function shortRepr(value: unknown): string {
  const r = typeof value === "object" && value !== null && !Array.isArray(value) ? safeJson(value) : pyRepr(value);
  return r.length > 80 ? `${r.slice(0, 77)}...` : r;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `a list ${shortRepr(value)}`;
  if (value === null) return "null";
  return `${typeof value} ${shortRepr(value)}`;
}

/** `inputs[1].content` from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || "row";
}

function valueAt(row: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let v: unknown = row;
  for (const p of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  return v;
}

/** ` (did you mean expected_tools?)` for a near miss of a known field, else "". */
export function suggestion(key: string): string {
  let best: string | null = null;
  let bestDistance = Infinity;
  const k = key.toLowerCase().replace(/[-\s]/g, "_");
  for (const f of ROW_FIELDS) {
    const d = f === k ? 0 : editDistance(k, f);
    if (d < bestDistance) {
      best = f;
      bestDistance = d;
    }
  }
  // camelCase spellings (expectedTools) and plural slips (expected_tool) are the usual near misses.
  const snake = key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  if (ROW_FIELD_SET.has(snake) && snake !== key) return ` (did you mean ${snake}?)`;
  return best && bestDistance <= Math.max(2, Math.floor(best.length / 4)) ? ` (did you mean ${best}?)` : "";
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}
