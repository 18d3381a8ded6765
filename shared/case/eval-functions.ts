// runs in: both
import type { CaseInput, RunOutput } from "./agent.ts";
import { EvalfleetError, ErrorCode } from "../errors.ts";
import { pyRepr } from "../py-format.ts";
import type { Score, Scorer } from "./score.ts";
import type { ScoreData } from "../wire/result-data.ts";

/**
 * Named evaluation functions, Exulu's `eval_functions`: a suite registers scorers by name
 * (`defineSuite({ evalFunctions: { tone: toneScorer } })`), and dataset rows (`eval_functions`),
 * code cases (`evalFunctions`) and runs (`--eval-function NAME`) name them. Each named function
 * is one more check on the case: it must pass, besides the case's own checks. Pure; no I/O
 * (running them is worker/runtime/checks/eval-functions.ts).
 */

/** What an evaluation function receives besides the run and the expected value. */
export interface EvalFunctionContext {
  /** Aborts at the case deadline. */
  signal: AbortSignal;
  /** The case's name. */
  caseName: string;
  /** What the agent was given. */
  input: CaseInput;
}

/** An evaluation function written as a plain function: returns a verdict, as a scorer does. */
export type EvalFunctionFn = (run: RunOutput, expected: unknown, context: EvalFunctionContext) => Promise<ScoreData | Score> | ScoreData | Score;

/** What `evalFunctions` holds: a {@link Scorer}, or a function with the same contract. */
export type EvalFunction = Scorer | EvalFunctionFn;

/** How a suite declares them: `{ tone: toneScorer, cites_sources: (run) => ({ value, passed }) }`. */
export type EvalFunctionsDefinition = Readonly<Record<string, EvalFunction>>;

/** The registry: scorers by name, in declaration order. */
export type EvalFunctions = ReadonlyMap<string, Scorer>;

/**
 * The registry of a suite's declaration; a problem for each entry that is neither a scorer nor a
 * function (`evalFunctions.tone must be a scorer (an object with score()) or a function, got 3`).
 */
export function normalizeEvalFunctions(definition: unknown, problems: string[]): Map<string, Scorer> {
  const registry = new Map<string, Scorer>();
  if (definition === undefined || definition === null) return registry;
  if (typeof definition !== "object" || Array.isArray(definition) || definition instanceof Map) {
    problems.push(`evalFunctions must be an object of evaluation functions by name ({ tone: scorer }), got ${Array.isArray(definition) ? "a list" : pyRepr(definition)}`);
    return registry;
  }
  for (const [name, value] of Object.entries(definition as Record<string, unknown>)) {
    if (!name.trim()) problems.push("evalFunctions: an evaluation function needs a name");
    else if (typeof value === "function") registry.set(name, { score: value as Scorer["score"] });
    else if (value !== null && typeof value === "object" && typeof (value as Scorer).score === "function") registry.set(name, value as Scorer);
    else problems.push(`evalFunctions.${name} must be a scorer (an object with score(run, expected, context)) or a function, got ${pyRepr(value)}`);
  }
  return registry;
}

/**
 * The names, in order and once each, that grade a case: the case's own, then the run's. Throws
 * nothing: unknown names are reported where they are declared (suite load, the command line).
 */
export function evalFunctionsFor(caseNames: readonly string[] | null | undefined, runNames: readonly string[] | null | undefined): string[] {
  return [...new Set([...(caseNames ?? []), ...(runNames ?? [])])];
}

/**
 * Checks the names a run applies to every case (`--eval-function`) against the registry: an
 * unknown name is a usage error (exit 2) listing the registered ones. Returns the names, once each.
 */
export function checkRunEvalFunctions(names: readonly string[] | null | undefined, registry: EvalFunctions): string[] {
  const list = [...new Set(names ?? [])];
  for (const name of list) {
    if (registry.has(name)) continue;
    const known = [...registry.keys()];
    throw new EvalfleetError(
      ErrorCode.Usage,
      `unknown evaluation function ${pyRepr(name)} (${known.length > 0 ? `the suite registers: ${known.join(", ")}` : "the suite registers none: declare them with defineSuite({ evalFunctions: { name: scorer } })"})`,
      { field: "eval-function", value: name },
    );
  }
  return list;
}

/** A registry from a definition (object of functions or scorers) or one already built; throws a usage error for a bad entry. */
export function evalFunctionRegistry(definition: EvalFunctionsDefinition | EvalFunctions | null | undefined): EvalFunctions {
  if (definition instanceof Map) return definition;
  const problems: string[] = [];
  const registry = normalizeEvalFunctions(definition, problems);
  if (problems.length > 0) throw new EvalfleetError(ErrorCode.Usage, problems[0]!, { field: "evalFunctions" });
  return registry;
}
