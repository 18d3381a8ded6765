import { createHash } from "node:crypto";
import { checkPrices, type PriceTable } from "./prices.ts";
import { yaml } from "./datasets/parsers.ts";
import { checkSuiteLimits, type LimitTable } from "./limits/limit-spec.ts";
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { hasCaseBrand, type Case } from "./case.ts";
import type { Agent, Team } from "./agent.ts";
import type { DatasetDeclaration } from "./datasets/dataset.ts";
import { componentRegistry, displayPath, isDatasetCase, loadDatasets, type LoadedDataset } from "./datasets/dataset-case.ts";
import { evalSetProblems, evalSetsFromList, loadEvalSetsFile, normalizeEvalSets, type EvalSets, type EvalSetsDefinition } from "./datasets/eval-sets.ts";
import type { JudgeModel } from "./judge-model.ts";
import { normalizeEvalFunctions, type EvalFunctions, type EvalFunctionsDefinition } from "./eval-functions.ts";
import { unknownEvalFunction } from "./datasets/dataset.ts";
import { isMcpClientLike, type McpClientLike } from "./mcp-client.ts";
import { DatasetError, ErrorCode, SuiteLoadError, errorMessage, errorName, type DatasetProblem } from "./errors.ts";
import { pyRepr } from "./py-format.ts";
import { redactText } from "./secrets.ts";
import { ensureTypeScriptLoader, isTypeScriptFile } from "./typescript-loader.ts";
import { ensurePublicApi } from "./public-api.ts";
import { bundleSuite, bundlesSuites } from "./suite-bundle.ts";

/**
 * Suite modules: how a file declares its cases, and how every process (the coordinator, each
 * worker, each thread) loads the same file. Code never travels; cases are found by index and name.
 */

const SUITE_BRAND = Symbol.for("evalfleet.suite");
const LOADING = Symbol.for("evalfleet.loading");

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
   * Provider limits by key, shared by every worker of a run (docs/providers.md):
   * `{ "openai:gpt-5-mini": { rpm: 600, tpm: 200000, concurrency: 64 } }`. `EVALFLEET_LIMITS` and
   * `--limit` override them field by field. Default none (keys learn their limits from the provider).
   */
  limits?: LimitTable | null;
  /**
   * Prices by model (US dollars per million tokens) over the built-in table (shared/prices.ts,
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
}

/** A suite as a module exports it. */
export interface SuiteDefinition extends Readonly<SuiteDefinitionOptions> {
  readonly [SUITE_BRAND]: true;
}

/** Declares a suite: `export default defineSuite({ name, cases, judgeModel?, defaultTimeout? })`. */
export function defineSuite(options: SuiteDefinitionOptions): SuiteDefinition {
  return Object.freeze({ ...options, cases: Object.freeze([...(options.cases ?? [])]), [SUITE_BRAND]: true as const });
}

/** A loaded suite file. */
export interface LoadedSuite {
  /** Absolute path of the file. */
  path: string;
  /** The module imported for it (hand it to worker threads: {@link LoadSuiteOptions.module}). */
  module?: SuiteModule;
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
  /** The suite's provider limits by key (empty when none). */
  limits?: LimitTable;
  /** The suite's prices by model, over the built-in table (empty when none). */
  prices?: PriceTable;
  /** The dataset files the cases came from (empty when none). */
  datasets?: readonly LoadedDataset[];
}

/** What `cli(cases, options)` registers when it is called while a suite file is being loaded. */
interface LoadCapture {
  cases?: readonly Case[];
  judgeModel?: JudgeModel | null;
  defaultTimeout?: number | null;
  mcpClients?: readonly McpClientLike[] | null;
  evalFunctions?: EvalFunctionsDefinition | null;
}

/**
 * Called by `cli()`: when a suite file is being loaded by evalfleet (a thread importing it, or
 * `evalfleet run`), records the cases and returns true, so the script does not run itself again.
 */
export function captureDuringLoad(
  cases: readonly Case[],
  options: { judgeModel?: JudgeModel | null; defaultTimeout?: number | null; mcpClients?: readonly McpClientLike[] | null; evalFunctions?: EvalFunctionsDefinition | null },
): boolean {
  const capture = (globalThis as Record<symbol, LoadCapture | undefined>)[LOADING];
  if (!capture) return false;
  capture.cases = cases;
  capture.judgeModel = options.judgeModel ?? null;
  capture.defaultTimeout = options.defaultTimeout ?? null;
  capture.mcpClients = options.mcpClients ?? null;
  capture.evalFunctions = options.evalFunctions ?? null;
  return true;
}

/** True for a Case, including one built by another copy of the evalfleet package (a `Symbol.for` brand). */
export function isCase(value: unknown): value is Case {
  return hasCaseBrand(value);
}

/**
 * Imports a suite file (`.ts`, `.mts`, `.js`, `.mjs`; TypeScript through tsx, registered on the
 * first TypeScript suite) and validates its exports. Every problem is reported at once in
 * one {@link SuiteLoadError} naming the file.
 */
export async function loadSuite(file: string, options: LoadSuiteOptions = {}): Promise<LoadedSuite> {
  const path = resolve(file);
  if (!existsSync(path)) throw new SuiteLoadError(ErrorCode.SuiteNotFound, file, ["suite file not found"]);
  if (!statSync(path).isFile()) throw new SuiteLoadError(ErrorCode.SuiteNotFound, file, ["suite path is not a file"]);

  const holder = globalThis as Record<symbol, LoadCapture | undefined>;
  const previous = holder[LOADING];
  const capture: LoadCapture = {};
  holder[LOADING] = capture;
  let mod: Record<string, unknown>;
  let loadedFrom: SuiteModule;
  try {
    loadedFrom = options.module ?? (await suiteModule(path));
    if (loadedFrom.loader === "tsx") await ensureTypeScriptLoader();
    // A bundle's inline source map points stack traces at the suite's own files, as tsx does.
    if (loadedFrom.loader === "bundle") process.setSourceMapsEnabled(true);
    // The bundle imports evalfleet's facade, which hands out this thread's (or process's) API.
    if (loadedFrom.loader === "bundle" && loadedFrom.usesEvalfleet) await ensurePublicApi();
    try {
      mod = commonJsExports((await import(loadedFrom.url)) as Record<string, unknown>);
    } catch (err) {
      // A bundle that still reaches a TypeScript file as it links (one its checks could not see):
      // nothing of it ran yet, so the file is loaded through tsx instead.
      if (loadedFrom.loader !== "bundle" || (err as { code?: unknown })?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
      loadedFrom = { url: pathToFileURL(path).href, loader: "tsx", reason: `the bundle failed to link: ${errorMessage(err)}` };
      await ensureTypeScriptLoader();
      mod = commonJsExports((await import(loadedFrom.url)) as Record<string, unknown>);
    }
  } catch (err) {
    // A suite that throws at import may name a secret (`no access with key sk-...`): the message
    // is printed, logged and sent, so it leaves redacted. The cause stays for a debugger only.
    throw new SuiteLoadError(ErrorCode.SuiteLoadFailed, file, [redactText(describeImportFailure(err))], { cause: err });
  } finally {
    holder[LOADING] = previous;
  }
  return { ...(await validateSuiteModule(file, path, mod, capture)), module: loadedFrom };
}

/** What {@link loadSuite} imports for a suite file, and how. */
export interface SuiteModule {
  /** file: URL of the module imported. */
  url: string;
  /** `node`: a .js/.mjs file as it is; `bundle`: a TypeScript suite bundled once (shared/suite-bundle.ts); `tsx`: the file through tsx. */
  loader: "node" | "bundle" | "tsx";
  /** Why a TypeScript suite is loaded through tsx rather than bundled, when it is. */
  reason?: string;
  /** A bundle that imports evalfleet through its facade (see shared/public-api.ts). */
  usesEvalfleet?: boolean;
}

/** Options of {@link loadSuite}. */
export interface LoadSuiteOptions {
  /**
   * The module to import instead of working it out: a worker thread gets its process's, so a
   * TypeScript suite is bundled once per process and its threads never load tsx for it.
   */
  module?: SuiteModule | null;
}

/** The module to import for the suite file at `path`: a .ts suite bundled when it can be, else through tsx. */
async function suiteModule(path: string): Promise<SuiteModule> {
  const url = pathToFileURL(path).href;
  if (!isTypeScriptFile(path)) return { url, loader: "node" };
  if (!bundlesSuites()) return { url, loader: "tsx", reason: "bundling is off (EVALFLEET_SUITE_LOADER=tsx, or evalfleet runs from its sources)" };
  const bundled = await bundleSuite(path);
  return bundled.kind === "bundle" ? { url: bundled.url, loader: "bundle", usesEvalfleet: bundled.usesEvalfleet } : { url, loader: "tsx", reason: bundled.reason };
}

/**
 * The module's own exports. A .ts suite in a package without `"type": "module"` (what `npm init -y`
 * makes) is compiled to CommonJS: importing it yields `{ default: module.exports }`, where
 * `module.exports` carries the suite's `default` and named exports behind `__esModule`.
 */
function commonJsExports(mod: Record<string, unknown>): Record<string, unknown> {
  const inner = mod.default as Record<string, unknown> | null | undefined;
  if (inner && typeof inner === "object" && !Array.isArray(inner) && inner.__esModule === true) return inner;
  return mod;
}

async function validateSuiteModule(file: string, path: string, mod: Record<string, unknown>, capture: LoadCapture): Promise<LoadedSuite> {
  const problems: string[] = [];
  const fallbackName = basename(path).replace(/\.(m|c)?(t|j)sx?$/, "");
  let def: SuiteDefinitionOptions | undefined;
  let source = "";
  const exported = mod.default;
  if (exported && typeof exported === "object" && (exported as Record<symbol, unknown>)[SUITE_BRAND]) {
    def = exported as SuiteDefinition;
    source = "the default export (defineSuite)";
  } else if (Array.isArray(exported)) {
    def = { cases: exported as Case[] };
    source = "the default export";
  } else if (Array.isArray(mod.cases)) {
    def = { cases: mod.cases as Case[] };
    source = "the `cases` export";
  } else if (capture.cases) {
    def = { cases: capture.cases, judgeModel: capture.judgeModel, defaultTimeout: capture.defaultTimeout, mcpClients: capture.mcpClients, evalFunctions: capture.evalFunctions };
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
        if (isCase(c)) cases.push(c);
        else problems.push(`${source}: item ${i} is ${describeValue(c)}, not a Case (build it with new Case({...}))`);
      });
      if (def.cases.length === 0 && !hasDatasets) problems.push(`${source} holds no cases`);
    }
    const seen = new Map<string, number>();
    cases.forEach((c, i) => {
      const first = seen.get(c.name);
      if (first !== undefined) problems.push(`duplicate case name ${pyRepr(c.name)} (items ${first} and ${i}): names identify cases in selection and reports`);
      else seen.set(c.name, i);
    });
    if (def.defaultTimeout !== undefined && def.defaultTimeout !== null && !(typeof def.defaultTimeout === "number" && def.defaultTimeout >= 0)) {
      problems.push(`defaultTimeout must be a number of seconds >= 0, got ${pyRepr(def.defaultTimeout)}`);
    }
    for (const key of ["setupTimeoutSeconds", "teardownTimeoutSeconds"] as const) {
      const v = def[key];
      if (v !== undefined && v !== null && !(typeof v === "number" && Number.isFinite(v) && v >= 0)) problems.push(`${key} must be a number of seconds >= 0, got ${pyRepr(v)}`);
    }
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
  let limits: LimitTable = {};
  let prices: PriceTable = {};
  if (def) {
    evalFunctions = normalizeEvalFunctions(def.evalFunctions, problems);
    const registered = [...evalFunctions.keys()];
    cases.forEach((c, i) => {
      for (const name of c.evalFunctions ?? []) {
        if (!evalFunctions.has(name)) problems.push(`case ${pyRepr(c.name)} (item ${i}): evalFunctions: ${unknownEvalFunction(name, registered)}`);
      }
    });
    const threshold = def.passThreshold;
    if (threshold !== undefined && threshold !== null) {
      if (typeof threshold === "number" && threshold >= 0 && threshold <= 1) passThreshold = threshold;
      else problems.push(`passThreshold must be a fraction between 0 and 1 (0.95 for 95%), got ${pyRepr(threshold)}`);
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
    const names = new Map<string, string>();
    const ids = new Map<string, string>();
    const idItems = new Map<string, number>();
    cases.forEach((c, i) => {
      if (!names.has(c.name)) names.set(c.name, `case ${i} of ${basename(path)}`);
      if (!c.id) return;
      const first = idItems.get(c.id);
      if (first !== undefined) problems.push(`duplicate case id ${pyRepr(c.id)} (items ${first} and ${i}): ids identify cases in eval sets`);
      else {
        idItems.set(c.id, i);
        ids.set(c.id, `case ${i} of ${basename(path)}`);
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
    const sets = def.evalSets;
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
    limits,
    prices,
    datasets,
  };
}

/**
 * sha256 (hex) of the ordered case names and their serialisable settings, and of the datasets'
 * bytes: a row edited on one machine makes its workers refuse the run.
 */
export function suiteFingerprint(cases: readonly Case[], datasets: readonly { ref: string; digest: string }[] = []): string {
  const hash = createHash("sha256");
  for (const c of cases) {
    if (isDatasetCase(c)) {
      // Only where the row is: the dataset's digest below covers what it holds.
      hash.update(JSON.stringify(["row", ...c.fingerprintKey()]));
      hash.update("\n");
      continue;
    }
    // The data-driven checks are hashed only when set, so older suites keep their fingerprints.
    const expectedOutput = c.expectedOutput ?? null;
    const extra: unknown[] =
      c.id || expectedOutput !== null || c.expectedAgentTools || c.expectedKnowledgeSources || c.evalFunctions
        ? [c.id ?? null, expectedOutput, expectedOutput !== null ? c.outputScoring : null, c.expectedAgentTools ?? null, c.expectedKnowledgeSources ?? null, ...(c.evalFunctions ? [c.evalFunctions] : [])]
        : [];
    // The hooks' bounds likewise, only when a case sets them.
    if (c.setupTimeoutSeconds !== null || c.teardownTimeoutSeconds !== null) extra.push("hooks", c.setupTimeoutSeconds, c.teardownTimeoutSeconds);
    hash.update(
      JSON.stringify([
        c.name,
        c.label,
        c.componentId,
        c.tags,
        c.timeoutSeconds,
        c.criteria,
        c.judgeMode,
        c.judgeThreshold,
        c.expectedToolCalls,
        c.allowAdditionalToolCalls,
        c.scorer !== null,
        c.input,
        ...extra,
      ]),
    );
    hash.update("\n");
  }
  for (const d of datasets) hash.update(`dataset ${d.ref} ${d.digest}\n`);
  return hash.digest("hex");
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return `an object (${(value as object).constructor?.name ?? "Object"})`;
  return `${typeof value} ${pyRepr(value)}`;
}

/** One line saying why an import failed: the first line of a syntax error, a hint for known traps. */
function describeImportFailure(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (code === "ERR_REQUIRE_CYCLE_MODULE") {
    return 'cannot load a .ts suite from a package without "type": "module": rename it to .mts or add "type": "module" to its package.json';
  }
  const message = errorMessage(err);
  // A suite that checks its own configuration (a missing API key) has already said what to do.
  if (code === ErrorCode.ConfigMissing || code === ErrorCode.ConfigInvalid) return message.split("\n")[0]!;
  // esbuild (through tsx) reports "Transform failed with 1 error:\n<file>:<line>:<col>: ERROR: <text>".
  const esbuild = /Transform failed with \d+ errors?:\s*\n?(.*?:\d+:\d+: ERROR: [^\n]*)/.exec(message);
  if (esbuild?.[1]) {
    const where = esbuild[1].replace(/^.*?([^/\\]+:\d+:\d+: )/, "$1");
    // A package without "type": "module" (npm init -y) makes tsx compile .ts to CommonJS.
    if (/not supported with the "cjs" output format/.test(where)) return `${where}: this .ts file is compiled as CommonJS; add "type": "module" to its package.json or rename it to .mts`;
    return `syntax error: ${where}`;
  }
  const firstLine = message.split("\n").find((l) => l.trim()) ?? message;
  const name = errorName(err);
  if (name === "SyntaxError") return `syntax error: ${firstLine}`;
  if (code === "ERR_MODULE_NOT_FOUND") return `cannot import: ${firstLine}`;
  return `failed to load: ${name}: ${firstLine}`;
}
