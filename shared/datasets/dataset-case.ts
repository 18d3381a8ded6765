// runs in: both
import { existsSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Agent, CaseInput, Team } from "../case/agent.ts";
import { Case, type JudgeMode, type SetupHook, type TeardownHook } from "../case/case.ts";
import type { JudgeModel } from "../case/judge-model.ts";
import type { Scorer } from "../case/score.ts";
import type { ToolCallExpectation, ToolCallOrder } from "../case/tool-call-matchers.ts";
import type { ExpectedOutput, ResolvedScoring } from "./expected-output-methods.ts";
import { resolveScoring } from "./expected-output-methods.ts";
import type { DatasetProblem } from "../errors.ts";
import { pyRepr } from "../py-format.ts";
import { csvHeaderProblems } from "./csv-rows.ts";
import {
  DatasetDeclarationSchema,
  DatasetObjectSchema,
  formatFromPath,
  rowToSpec,
  type DatasetDeclaration,
  type DatasetFormat,
  type RegisteredComponent,
  type RowContext,
  type RowSpec,
} from "./dataset.ts";
import { DatasetChangedError, DatasetFileError, readRowAt, scanDataset } from "./files.ts";

/**
 * Dataset rows as cases. A {@link DatasetCase} keeps only what selection, dispatch and reports
 * need (name, id, tags, component, timeout) and where its row is; the rest of the row (inputs,
 * expected output, criteria, ...) is read again from the file when the case runs
 * ({@link DatasetCase.materialize}), so no process holds every row's inputs at once.
 */

/** One dataset file as loaded: what its cases share. */
export interface LoadedDataset {
  /** Absolute path. */
  path: string;
  /** The path as messages show it (relative to the working directory when inside it). */
  display: string;
  /** The path relative to the suite file's folder: what the fingerprint hashes (the same on every machine). */
  ref: string;
  format: DatasetFormat;
  /** Rows that became cases. */
  rows: number;
  /** sha256 of the file's bytes. */
  digest: string;
  size: number;
  mtimeMs: number;
  csvHeader: readonly string[] | null;
  /** What each row is checked against (the suite's components, the dataset's defaults). */
  context: RowContext;
}

/** Marks every DatasetCase, whichever copy of evalfleet built it (see `hasCaseBrand` in case.ts). */
const DATASET_CASE_BRAND = Symbol.for("evalfleet.datasetCase");

/**
 * A case from a dataset row: the same surface as {@link Case} (it can be selected, listed,
 * dispatched and reported like one), with the heavy fields read from the file on demand.
 * The lifecycle calls {@link DatasetCase.materialize} once per run.
 */
export class DatasetCase {
  static {
    Object.defineProperty(DatasetCase.prototype, DATASET_CASE_BRAND, { value: true });
  }
  readonly name: string;
  readonly id: string | null;
  readonly tags: readonly string[];
  readonly timeoutSeconds: number | null;
  readonly judgeModel: JudgeModel | null = null;
  readonly scorer: Scorer | null = null;
  readonly expected: unknown = undefined;
  readonly setup: SetupHook | null = null;
  readonly teardown: TeardownHook | null = null;
  readonly #dataset: LoadedDataset;
  readonly #component: RegisteredComponent;
  /** 1-based line of the row. */
  readonly #line: number;
  readonly #offset: number;
  readonly #length: number;
  /** YAML rows are kept as parsed; other formats are read again by byte range. */
  readonly #held: unknown;

  constructor(spec: RowSpec, dataset: LoadedDataset, location: { line: number; offset: number; length: number; held?: unknown }, tags: readonly string[]) {
    this.name = spec.name;
    this.id = spec.id;
    this.tags = tags;
    this.timeoutSeconds = spec.timeoutSeconds;
    this.#dataset = dataset;
    this.#component = spec.component;
    this.#line = location.line;
    this.#offset = location.offset;
    this.#length = location.length;
    this.#held = location.held;
    Object.freeze(this);
  }

  /** Where the row is: `cases.jsonl:12`. */
  get source(): string {
    return `${this.#dataset.display}:${this.#line}`;
  }

  get agent(): Agent | null {
    return this.#component.kind === "agent" ? this.#component.component : null;
  }

  get team(): Team | null {
    return this.#component.kind === "team" ? this.#component.component : null;
  }

  get label(): "agent" | "team" {
    return this.#component.kind;
  }

  get component(): Agent {
    return this.#component.component;
  }

  get componentId(): string {
    return this.#component.component.id || this.name;
  }

  resolveTimeout(defaultTimeout: number): number {
    return this.timeoutSeconds ?? defaultTimeout;
  }

  /** Rows have no hooks, so no bounds of their own. */
  get setupTimeoutSeconds(): number | null {
    return null;
  }
  get teardownTimeoutSeconds(): number | null {
    return null;
  }

  resolveHookTimeouts(defaults: { setup: number; teardown: number }): { setup: number; teardown: number } {
    return defaults;
  }

  /** What the suite fingerprint hashes for this case (the file's digest covers its content). */
  fingerprintKey(): unknown[] {
    return [this.name, this.id, this.label, this.#component.id, this.tags, this.timeoutSeconds, this.#dataset.ref, this.#line, this.#offset, this.#length];
  }

  /**
   * The full case, read again from the file (a YAML row from memory). Throws a one-line error
   * naming the file and line when the file changed since the suite was loaded.
   */
  materialize(): Case {
    let spec: RowSpec;
    try {
      const { raw, problems } = this.#held !== undefined ? { raw: this.#held, problems: [] } : readRowAt(this.#dataset, this.#offset, this.#length);
      if (problems.length > 0) throw new DatasetChangedError(problems.map((p) => `${p.field ? `${p.field}: ` : ""}${p.message}`).join("; "));
      const converted = rowToSpec(raw, this.#dataset.context);
      if ("problems" in converted) throw new DatasetChangedError(converted.problems.map((p) => `${p.field ? `${p.field}: ` : ""}${p.message}`).join("; "));
      spec = converted.spec;
      if (spec.name !== this.name) throw new DatasetChangedError(`the row is now named ${pyRepr(spec.name)}, not ${pyRepr(this.name)}: the file changed since the suite was loaded`);
    } catch (err) {
      throw new DatasetChangedError(`${this.source}: ${(err as Error).message}`);
    }
    return new Case({
      name: spec.name,
      id: spec.id,
      description: spec.description,
      metadata: spec.metadata,
      input: spec.input,
      ...(spec.component.kind === "team" ? { team: spec.component.component } : { agent: spec.component.component }),
      tags: this.tags,
      timeoutSeconds: spec.timeoutSeconds,
      criteria: spec.criteria,
      judgeMode: spec.judgeMode,
      judgeThreshold: spec.judgeThreshold,
      expectedToolCalls: spec.expectedToolCalls,
      allowAdditionalToolCalls: spec.allowAdditionalToolCalls,
      toolCallOrder: spec.toolCallOrder,
      forbiddenToolCalls: spec.forbiddenToolCalls,
      maxToolCalls: spec.maxToolCalls,
      toolCallsMustSucceed: spec.toolCallsMustSucceed,
      expectedOutput: spec.expectedOutput,
      outputScoring: spec.outputScoring,
      expectedAgentTools: spec.expectedAgentTools,
      expectedKnowledgeSources: spec.expectedKnowledgeSources,
      evalFunctions: spec.evalFunctions,
    });
  }

  // The heavy fields, for code that reads a case directly (reports, hooks): each read goes to the file.
  get input(): CaseInput {
    return this.materialize().input;
  }
  get criteria(): string | null {
    return this.materialize().criteria;
  }
  get judgeMode(): JudgeMode {
    return this.materialize().judgeMode;
  }
  get judgeThreshold(): number {
    return this.materialize().judgeThreshold;
  }
  get expectedToolCalls(): readonly ToolCallExpectation[] | null {
    return this.materialize().expectedToolCalls;
  }
  get allowAdditionalToolCalls(): boolean {
    return this.materialize().allowAdditionalToolCalls;
  }
  get toolCallOrder(): ToolCallOrder {
    return this.materialize().toolCallOrder;
  }
  get forbiddenToolCalls(): readonly ToolCallExpectation[] | null {
    return this.materialize().forbiddenToolCalls;
  }
  get maxToolCalls(): number | null {
    return this.materialize().maxToolCalls;
  }
  get toolCallsMustSucceed(): boolean {
    return this.materialize().toolCallsMustSucceed;
  }
  get description(): string | null {
    return this.materialize().description;
  }
  get metadata(): Readonly<Record<string, unknown>> | null {
    return this.materialize().metadata;
  }
  get expectedOutput(): ExpectedOutput | null {
    return this.materialize().expectedOutput;
  }
  get outputScoring(): ResolvedScoring {
    return this.materialize().outputScoring;
  }
  get expectedAgentTools(): readonly string[] | null {
    return this.materialize().expectedAgentTools;
  }
  get expectedKnowledgeSources(): readonly string[] | null {
    return this.materialize().expectedKnowledgeSources;
  }
  get evalFunctions(): readonly string[] | null {
    return this.materialize().evalFunctions;
  }
}

/** True for a case whose fields are read from a dataset file when it runs. */
export function isDatasetCase(value: unknown): value is DatasetCase {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[DATASET_CASE_BRAND] === true;
}

/**
 * The case to run: a dataset case read from its file, any other case as it is. Throws a
 * one-line error (file and line) when a dataset row can no longer be read.
 */
export function materializeCase(c: Case | DatasetCase): Case {
  return isDatasetCase(c) ? c.materialize() : c;
}

/** The suite's agents and teams by id, as rows name them. */
export function componentRegistry(
  agents: readonly Agent[] | Readonly<Record<string, Agent>> | null | undefined,
  teams: readonly Team[] | Readonly<Record<string, Team>> | null | undefined,
  problems: string[],
): Map<string, RegisteredComponent> {
  const registry = new Map<string, RegisteredComponent>();
  const add = (kind: "agent" | "team", list: readonly Agent[] | Readonly<Record<string, Agent>> | null | undefined): void => {
    if (list === null || list === undefined) return;
    if (typeof list !== "object") {
      problems.push(`${kind}s must be a list of ${kind}s or an object of them by id, got ${pyRepr(list)}`);
      return;
    }
    const entries: [string | null, unknown, string][] = Array.isArray(list)
      ? list.map((a, i) => [typeof (a as Agent)?.id === "string" && (a as Agent).id ? ((a as Agent).id as string) : null, a, `${kind}s[${i}]`])
      : Object.entries(list).map(([id, a]) => [id, a, `${kind}s.${id}`]);
    for (const [id, component, where] of entries) {
      if (!component || typeof (component as Agent).run !== "function") {
        problems.push(`${where} is not an ${kind}: it needs a run(input, context) method`);
        continue;
      }
      if (!id) {
        problems.push(`${where} has no id: give it one, or declare ${kind}s as an object { id: ${kind} }`);
        continue;
      }
      if (registry.has(id)) {
        problems.push(`${where}: the id ${pyRepr(id)} is used twice among the suite's agents and teams`);
        continue;
      }
      registry.set(id, { id, component: component as Agent, kind });
    }
  };
  add("agent", agents);
  add("team", teams);
  return registry;
}

/** What {@link loadDatasets} found: the cases, in file order, and every problem. */
export interface DatasetsLoad {
  cases: DatasetCase[];
  datasets: LoadedDataset[];
  /** Problems of declarations (a missing file, a bad option), one line each. */
  declarationProblems: string[];
  /** Problems of rows, each with its file and line. */
  rowProblems: DatasetProblem[];
}

/**
 * Loads every dataset of a suite: each file is read row by row, every row validated, and every
 * problem collected (all of them). `taken` holds the names and ids already used by the suite's
 * code cases (to report duplicates with both places); `evalFunctions` the names of the suite's
 * evaluation functions (rows may name only these).
 */
export async function loadDatasets(
  declarations: readonly unknown[],
  suiteDir: string,
  registry: ReadonlyMap<string, RegisteredComponent>,
  taken: { names: Map<string, string>; ids: Map<string, string> },
  evalFunctions: readonly string[] = [],
): Promise<DatasetsLoad> {
  const out: DatasetsLoad = { cases: [], datasets: [], declarationProblems: [], rowProblems: [] };
  // Rows with the same tags share one frozen list: a data team's 100,000 rows carry a handful of tag sets.
  const tagLists = new Map<string, readonly string[]>();
  const internTags = (tags: readonly string[]): readonly string[] => {
    const key = JSON.stringify(tags);
    let list = tagLists.get(key);
    if (!list) tagLists.set(key, (list = Object.freeze([...tags])));
    return list;
  };

  for (const [i, declaration] of declarations.entries()) {
    const where = `datasets[${i}]`;
    // An object is checked on its own, so that the message names the option, not the union.
    const isObject = typeof declaration === "object" && declaration !== null && !(declaration instanceof URL);
    const parsed = (isObject ? DatasetObjectSchema : DatasetDeclarationSchema).safeParse(declaration);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.code === "unrecognized_keys") {
          for (const key of issue.keys) out.declarationProblems.push(`${where}: unknown option '${key}' (options: format, agent, scoring, tags, allowAdditionalTools)`);
          continue;
        }
        const field = issue.path.map(String).join(".");
        const value = field ? (declaration as Record<string, unknown>)[field] : declaration;
        out.declarationProblems.push(`${where}${field ? `.${field}` : ""}: ${issue.message}, got ${pyRepr(value)}`);
      }
      continue;
    }
    const decl: DatasetDeclaration = typeof parsed.data === "string" || parsed.data instanceof URL ? { path: parsed.data } : parsed.data;
    const path = decl.path instanceof URL ? fileURLToPath(decl.path) : isAbsolute(decl.path) ? decl.path : resolve(suiteDir, decl.path);
    const display = displayPath(path);
    const format = decl.format ?? formatFromPath(path);
    if (!format) {
      out.declarationProblems.push(`${where}: cannot tell the format of ${display} from its extension: name it .jsonl, .json, .yaml, .yml or .csv, or set format`);
      continue;
    }
    if (!existsSync(path) || !statSync(path).isFile()) {
      out.declarationProblems.push(`${where}: dataset file not found: ${display}`);
      continue;
    }
    let defaultComponent: RegisteredComponent | null = null;
    if (decl.agent !== undefined) {
      defaultComponent = registry.get(decl.agent) ?? null;
      if (!defaultComponent) {
        out.declarationProblems.push(`${where}: agent ${pyRepr(decl.agent)} is not one of the suite's agents or teams (${[...registry.keys()].map((k) => pyRepr(k)).join(", ") || "none declared"})`);
        continue;
      }
    } else if (registry.size === 1) {
      defaultComponent = [...registry.values()][0]!;
    }
    const context: RowContext = {
      components: registry,
      defaultComponent,
      scoring: resolveScoring(decl.scoring ?? null),
      tags: Object.freeze([...(decl.tags ?? [])]),
      allowAdditionalTools: decl.allowAdditionalTools ?? true,
      evalFunctions,
    };
    const loaded: LoadedDataset = { path, display, ref: relative(suiteDir, path).split("\\").join("/"), format, rows: 0, digest: "", size: 0, mtimeMs: 0, csvHeader: null, context };
    const fileProblems: DatasetProblem[] = [];
    const problem = (line: number, field: string | null, message: string): void => void fileProblems.push({ file: display, line, field, message });
    const fileCases: DatasetCase[] = [];
    let headerSeen = false;
    try {
      const summary = await scanDataset(path, format, (row) => {
        if (format === "csv" && !headerSeen) {
          // Reported now: a broken record later stops the reading.
          headerSeen = true;
          for (const p of csvHeaderProblems(row.raw as string[])) problem(row.line, p.field, p.message);
          return;
        }
        if (row.problems.length > 0) {
          for (const p of row.problems) problem(row.line, p.field, p.message);
          return;
        }
        const converted = rowToSpec(row.raw, context);
        if ("problems" in converted) {
          for (const p of converted.problems) problem(row.line, p.field, p.message);
          return;
        }
        const spec = converted.spec;
        const here = `${display}:${row.line}`;
        const firstName = taken.names.get(spec.name);
        if (firstName !== undefined) {
          problem(row.line, "name", `duplicate case name ${pyRepr(spec.name)} (first at ${firstName}): names identify cases in selection and reports`);
          return;
        }
        taken.names.set(spec.name, here);
        if (spec.id !== null) {
          const firstId = taken.ids.get(spec.id);
          if (firstId !== undefined) {
            problem(row.line, "id", `duplicate case id ${pyRepr(spec.id)} (first at ${firstId})`);
            return;
          }
          taken.ids.set(spec.id, here);
        }
        // Only valid rows are kept, and without their heavy fields (see DatasetCase).
        fileCases.push(new DatasetCase(spec, loaded, { line: row.line, offset: row.offset, length: row.length, held: format === "yaml" ? row.raw : undefined }, internTags(spec.tags)));
      });
      Object.assign(loaded, { digest: summary.digest, size: summary.size, mtimeMs: summary.mtimeMs, csvHeader: summary.csvHeader ? Object.freeze(summary.csvHeader) : null, rows: fileCases.length });
    } catch (err) {
      if (err instanceof DatasetFileError) problem(err.line, null, err.message);
      else out.declarationProblems.push(`${where}: cannot read ${display}: ${(err as Error).message}`);
      continue;
    } finally {
      // In line order (a CSV header's problems are found last); a stable sort keeps a row's fields in order.
      out.rowProblems.push(...fileProblems.sort((a, b) => a.line - b.line));
    }
    Object.freeze(loaded);
    out.datasets.push(loaded);
    for (const c of fileCases) out.cases.push(c);
  }
  return out;
}

/** A path as messages show it: relative to the working directory when inside it. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}
