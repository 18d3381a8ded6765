// runs in: both
import { redactShapesProblem, type RedactShapes } from "../redaction/shapes.ts";
import { readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkPrices, type PriceTable } from "../providers/prices.ts";
import { yaml } from "../datasets/parsers.ts";
import { checkSuiteLimits, type LimitTable } from "../providers/limit-spec.ts";
import { hasCaseBrand, type Case } from "../case/case.ts";
import { componentRegistry, displayPath, loadDatasets, type LoadedDataset } from "../datasets/dataset-case.ts";
import { evalSetProblems, evalSetsFromList, loadEvalSetsFile, normalizeEvalSets, type EvalSets, type EvalSetsDefinition } from "../datasets/eval-sets.ts";
import type { JudgeModel } from "../case/judge-model.ts";
import { normalizeEvalFunctions, type EvalFunctions } from "../case/eval-functions.ts";
import { unknownEvalFunction } from "../datasets/dataset.ts";
import { isMcpClientLike, type McpClientLike } from "../case/mcp-client.ts";
import { DatasetError, ErrorCode, SuiteLoadError, errorMessage, type DatasetProblem } from "../errors.ts";
import { pyRepr } from "../py-format.ts";
import { redactText } from "../redaction/secrets.ts";
import { isSuiteDefinition, type SuiteDefinitionOptions } from "./suite-definition.ts";
import type { LoadCapture } from "./load-capture.ts";
import { suiteFingerprint } from "./suite-fingerprint.ts";

/** What a suite file declares, validated (a loaded suite without the module it came from: shared/suite/suite.ts). */
export interface SuiteContents {
  /** Absolute path of the file. */
  path: string;
  name: string;
  cases: readonly Case[];
  judgeModel: JudgeModel | null;
  defaultTimeout: number | null;
  /** The suite's setup bound in seconds, or null (`defineSuite({ setupTimeoutSeconds })`). */
  setupTimeoutSeconds?: number | null;
  /** The suite's teardown bound in seconds, or null. */
  teardownTimeoutSeconds?: number | null;
  /** The MCP clients the suite declares (empty when none). */
  mcpClients: readonly McpClientLike[];
  /** sha256 over the ordered case names and their serialisable settings, and the datasets' content. */
  fingerprint: string;
  /** Eval sets by name (empty when none). */
  evalSets?: EvalSets;
  /** The suite's evaluation functions by name (empty when none). */
  evalFunctions?: EvalFunctions;
  /** The suite's pass threshold (0-1), or null. */
  passThreshold?: number | null;
  /** The suite's pass rule of a repeated case (0-1), or null: the run's (else 1). */
  casePassRate?: number | null;
  /** The suite's provider limits by key (empty when none). */
  limits?: LimitTable;
  /** The suite's prices by model, over the built-in table (empty when none). */
  prices?: PriceTable;
  /** The dataset files the cases came from (empty when none). */
  datasets?: readonly LoadedDataset[];
  /** Which credential shapes are redacted (`defineSuite({ redactShapes })`); default every one. */
  redactShapes?: RedactShapes;
}

/**
 * What a suite module's exports declare, validated: `defineSuite(...)` as the default export, a
 * list of cases as the default export or as `cases`, or what `cli(...)` registered while the file
 * was imported (`capture`). Every problem is reported at once: in one {@link SuiteLoadError}
 * naming the file, or in a {@link DatasetError} when dataset rows are at fault.
 *
 * @param file the suite file as the user named it (for messages); `path` its absolute path.
 */
export async function suiteFromExports(file: string, path: string, mod: Record<string, unknown>, capture: LoadCapture, options: SuiteExportsOptions = {}): Promise<SuiteContents> {
  const checked = options.checked === true;
  const problems: string[] = [];
  const fallbackName = basename(path).replace(/\.(m|c)?(t|j)sx?$/, "");
  let def: SuiteDefinitionOptions | undefined;
  let source = "";
  const exported = mod.default;
  if (isSuiteDefinition(exported)) {
    def = exported;
    source = "the default export (defineSuite)";
  } else if (Array.isArray(exported)) {
    def = { cases: exported as Case[] };
    source = "the default export";
  } else if (Array.isArray(mod.cases)) {
    def = { cases: mod.cases as Case[] };
    source = "the `cases` export";
  } else if (capture.cases) {
    def = { cases: capture.cases, judgeModel: capture.judgeModel, defaultTimeout: capture.defaultTimeout, mcpClients: capture.mcpClients, evalFunctions: capture.evalFunctions, redactShapes: capture.redactShapes };
    source = "the cli(...) call";
  } else if (exported !== undefined) {
    problems.push(
      `the default export is ${describeValue(exported)}; export default defineSuite({ cases }), export default [cases], or export const cases`,
    );
  } else {
    problems.push("exports no cases: export default defineSuite({ cases }), export default [cases], or export const cases");
  }

  const cases: Case[] = [];
  const datasetDecls = def?.datasets;
  const hasDatasets = Array.isArray(datasetDecls) && datasetDecls.length > 0;
  if (def && def.cases === undefined && hasDatasets) def = { ...def, cases: [] };
  if (def) {
    if (!Array.isArray(def.cases)) {
      problems.push(`${source}: cases must be a list of Case, got ${describeValue(def.cases)}`);
    } else {
      def.cases.forEach((c, i) => {
        if (hasCaseBrand(c)) cases.push(c);
        else problems.push(`${source}: item ${i} is ${describeValue(c)}, not a Case (build it with new Case({...}))`);
      });
      if (def.cases.length === 0 && !hasDatasets) problems.push(`${source} holds no cases`);
    }
    if (!checked) {
      const seen = new Map<string, number>();
      cases.forEach((c, i) => {
        const first = seen.get(c.name);
        if (first !== undefined) problems.push(`duplicate case name ${pyRepr(c.name)} (items ${first} and ${i}): names identify cases in selection and reports`);
        else seen.set(c.name, i);
      });
    }
    if (def.defaultTimeout !== undefined && def.defaultTimeout !== null && !(typeof def.defaultTimeout === "number" && def.defaultTimeout >= 0)) {
      problems.push(`defaultTimeout must be a number of seconds >= 0, got ${pyRepr(def.defaultTimeout)}`);
    }
    for (const key of ["setupTimeoutSeconds", "teardownTimeoutSeconds"] as const) {
      const v = def[key];
      if (v !== undefined && v !== null && !(typeof v === "number" && Number.isFinite(v) && v >= 0)) problems.push(`${key} must be a number of seconds >= 0, got ${pyRepr(v)}`);
    }
    const shapesProblem = redactShapesProblem(def.redactShapes);
    if (shapesProblem) problems.push(shapesProblem);
    const mcp = def.mcpClients;
    if (mcp !== undefined && mcp !== null) {
      if (!Array.isArray(mcp)) problems.push(`mcpClients must be a list of MCP clients, got ${describeValue(mcp)}`);
      else mcp.forEach((m, i) => {
        if (!isMcpClientLike(m)) problems.push(`mcpClients[${i}] is ${describeValue(m)}, not an MCP client (an object with connect() and close(), e.g. mcpToolkit({...}))`);
      });
    }
  }
  // Data-driven parts: datasets (rows become cases after the code cases), eval sets, the pass threshold.
  const rowProblems: DatasetProblem[] = [];
  let datasets: LoadedDataset[] = [];
  let evalSets: EvalSets = new Map();
  let evalFunctions: EvalFunctions = new Map();
  let passThreshold: number | null = null;
  let casePassRate: number | null = null;
  let limits: LimitTable = {};
  let prices: PriceTable = {};
  if (def) {
    evalFunctions = normalizeEvalFunctions(def.evalFunctions, problems);
    const registered = [...evalFunctions.keys()];
    if (!checked) {
      cases.forEach((c, i) => {
        for (const name of c.evalFunctions ?? []) {
          if (!evalFunctions.has(name)) problems.push(`case ${pyRepr(c.name)} (item ${i}): evalFunctions: ${unknownEvalFunction(name, registered)}`);
        }
      });
    }
    const threshold = def.passThreshold;
    if (threshold !== undefined && threshold !== null) {
      if (typeof threshold === "number" && threshold >= 0 && threshold <= 1) passThreshold = threshold;
      else problems.push(`passThreshold must be a fraction between 0 and 1 (0.95 for 95%), got ${pyRepr(threshold)}`);
    }
    const rule = def.casePassRate;
    if (rule !== undefined && rule !== null) {
      if (typeof rule === "number" && rule >= 0 && rule <= 1) casePassRate = rule;
      else problems.push(`casePassRate must be a fraction between 0 and 1 (0.8 for 80%), got ${pyRepr(rule)}`);
    }
    try {
      limits = checkSuiteLimits((def as { limits?: unknown }).limits, "limits");
    } catch (err) {
      problems.push(errorMessage(err));
    }
    const priced = checkPrices(
      (def as { prices?: unknown }).prices,
      (p) => readFileSync(isAbsolute(p) ? p : resolve(dirname(path), p), "utf8"),
      (text) => yaml().parse(text),
    );
    prices = priced.prices;
    if (priced.problem) problems.push(priced.problem);
    const sets = checked ? undefined : def.evalSets;
    // Where each name and id was first used, for the datasets' and eval sets' messages: built only
    // when the suite has either (a place string per case was a tenth of a large suite's load).
    const placed = hasDatasets || (sets !== undefined && sets !== null);
    const names = new Map<string, string>();
    const ids = new Map<string, string>();
    const idItems = new Map<string, number>();
    const fileName = basename(path);
    cases.forEach((c, i) => {
      if (placed && !names.has(c.name)) names.set(c.name, `case ${i} of ${fileName}`);
      if (!c.id || (checked && !placed)) return;
      const first = idItems.get(c.id);
      if (first !== undefined) problems.push(`duplicate case id ${pyRepr(c.id)} (items ${first} and ${i}): ids identify cases in eval sets`);
      else {
        idItems.set(c.id, i);
        ids.set(c.id, `case ${i} of ${fileName}`);
      }
    });
    if (datasetDecls !== undefined && datasetDecls !== null && !Array.isArray(datasetDecls)) {
      problems.push(`datasets must be a list of datasets (dataset("cases.jsonl", {...}) or a path), got ${describeValue(datasetDecls)}`);
    } else if (hasDatasets) {
      const registry = componentRegistry(def.agents ?? (mod.agents as SuiteDefinitionOptions["agents"]), def.teams ?? (mod.teams as SuiteDefinitionOptions["teams"]), problems);
      const load = await loadDatasets(datasetDecls, dirname(path), registry, { names, ids }, registered);
      problems.push(...load.declarationProblems);
      rowProblems.push(...load.rowProblems);
      datasets = load.datasets;
      for (const c of load.cases) cases.push(c as unknown as Case);
      if (cases.length === 0 && load.declarationProblems.length === 0 && load.rowProblems.length === 0) {
        problems.push(`${source} holds no cases: its datasets have no rows`);
      }
    }
    if (sets !== undefined && sets !== null) {
      const known = (m: string): boolean => names.has(m) || ids.has(m);
      if (typeof sets === "string" || sets instanceof URL) {
        const setsPath = sets instanceof URL ? fileURLToPath(sets) : isAbsolute(sets) ? sets : resolve(dirname(path), sets);
        const display = displayPath(setsPath);
        const loaded = loadEvalSetsFile(setsPath, display);
        rowProblems.push(...loaded.problems);
        evalSets = loaded.sets;
        for (const p of evalSetProblems(evalSets, known)) {
          rowProblems.push({ file: display, line: loaded.lineOf(p.set, p.index), field: `${p.set}[${p.index}]`, message: `${pyRepr(p.member)} is not a case name or id in the suite` });
        }
      } else {
        try {
          if (Array.isArray(sets)) {
            // Exulu's list shape: every entry's problems, not the first only.
            const fromList = evalSetsFromList(sets);
            for (const p of fromList.problems) problems.push(`evalSets[${p.index}]${p.field ? `.${p.field}` : ""}: ${p.message}`);
            evalSets = fromList.sets;
          } else evalSets = normalizeEvalSets(sets as EvalSetsDefinition);
          for (const p of evalSetProblems(evalSets, known)) problems.push(`evalSets.${p.set}[${p.index}]: ${pyRepr(p.member)} is not a case name or id in the suite`);
        } catch (err) {
          problems.push(errorMessage(err));
        }
      }
    }
  }

  if (rowProblems.length > 0) throw new DatasetError(file, problems.map((p) => redactText(p)), rowProblems.map((p) => ({ ...p, message: redactText(p.message) })));
  if (problems.length > 0) throw new SuiteLoadError(ErrorCode.SuiteInvalid, file, problems.map((p) => redactText(p)));
  return {
    path,
    name: def!.name || fallbackName,
    cases,
    judgeModel: def!.judgeModel ?? null,
    defaultTimeout: def!.defaultTimeout ?? null,
    setupTimeoutSeconds: def!.setupTimeoutSeconds ?? null,
    teardownTimeoutSeconds: def!.teardownTimeoutSeconds ?? null,
    mcpClients: [...(def!.mcpClients ?? [])],
    fingerprint: suiteFingerprint(cases, datasets),
    evalSets,
    evalFunctions,
    passThreshold,
    casePassRate,
    limits,
    prices,
    datasets,
    redactShapes: def!.redactShapes ?? true,
  };
}

/** Options of {@link suiteFromExports}. */
export interface SuiteExportsOptions {
  /**
   * The file was checked already by the process that dispatches its cases (a worker thread's
   * load): the checks across cases (duplicate names and ids, the cases' evaluation functions) and
   * the eval sets, which only selection reads, are skipped. Default false: every check runs.
   */
  checked?: boolean;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return `an object (${(value as object).constructor?.name ?? "Object"})`;
  return `${typeof value} ${pyRepr(value)}`;
}
