import { Command } from "commander";
import type { Case } from "../../shared/case/case.ts";
import type { JudgeModel } from "../../shared/case/judge-model.ts";
import type { McpClientLike } from "../../shared/case/mcp-client.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import { looseCasesSuiteName } from "../library-config.ts";
import { processEnvironment } from "../../shared/environment.ts";
import { normalizeEvalSets, type EvalSetsDefinition } from "../../shared/datasets/eval-sets.ts";
import type { DbOption } from "../history/recording/record-run.ts";
import { ExitCode } from "../run/exit-code.ts";
import { runConfigFrom } from "./config.ts";
import { executeRun } from "./execute-run.ts";
import { addInlineConcurrencyFlag, addProviderFlags, addRunDefinitionFlags, addRunPolicyFlags, addSelectionAndReportFlags, addStoreFlags } from "./flags.ts";
import type { RunFlags } from "./flag-types.ts";
import { evalFunctionRegistry, type EvalFunctionsDefinition } from "../../shared/case/eval-functions.ts";
import { unknownEvalFunction } from "../../shared/datasets/dataset.ts";
import { ErrorCode, EvalfleetError } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { redactShapesProblem, type RedactShapes } from "../../shared/redaction/shapes.ts";
import { useSuiteRedactShapes } from "../../shared/redaction/secrets.ts";
import { resolveIO, type CliIO } from "./io.ts";

import { inlineRunner } from "./local-runners.ts";
import { parseAndRun } from "./parse-and-run.ts";

/**
 * The command line of a suite file that calls `cli(CASES)` (Agno-style scripts): the run flags
 * without a suite argument, the cases run inline in this thread. Loaded by coordinator/cli/script.ts
 * only when the script really runs.
 */

/** Options of `cli(cases, options)`. */
export interface CliOptions extends CliIO {
  /** Arguments; default `process.argv.slice(2)`. */
  argv?: readonly string[];
  /** The default per-case timeout behind `--timeout`, in seconds. Default 120. */
  defaultTimeout?: number;
  judgeModel?: JudgeModel | null;
  /** MCP clients the cases' agents use (Agno's `mcp_tools=`): connected before the first case, closed at the end; none when listing or nothing is selected. */
  mcpClients?: readonly McpClientLike[] | null;
  /**
   * Record each run in a results store: a URL (`sqlite:PATH`, `postgres://...`) or an open
   * `ResultsStore`. `--db` wins, then this, then `$EVALFLEET_DB`. Default: not recorded.
   */
  db?: DbOption | null;
  /** Eval sets for `--set NAME`: names of groups of case names or ids. Default none. */
  evalSets?: EvalSetsDefinition | null;
  /** The run passes when at least this fraction (0-1) of the cases pass (`--pass-threshold` wins). Default: every case must pass. */
  passThreshold?: number | null;
  /** With `--repeat`: a case passes when at least this fraction (0-1) of its trials pass (`--case-pass-rate` and a case's `passRate` win). Default 1: every trial. */
  casePassRate?: number | null;
  /** Named evaluation functions (`{ polite: scorer }`) that cases' `evalFunctions` and `--eval-function` refer to. Default none. */
  evalFunctions?: EvalFunctionsDefinition | null;
  /** Credential shapes redacted from every output: `true` (default), `false`, `{ except: ["jwt"] }` (as `defineSuite({ redactShapes })`). */
  redactShapes?: RedactShapes | null;
}

/**
 * Runs `cases` as the script's command line; returns the exit code.
 *
 * @param unknownOption an unknown key of `options` cli() found, with its message: the run stops with a usage error (exit 2). Default none.
 */
export async function runScript(cases: readonly Case[], options: CliOptions = {}, unknownOption: { field: string; message: string } | null = null): Promise<number> {
  const io = resolveIO(options);
  const program = new Command("evals")
    .description("Run the eval suite, or a subset with --name/--tag.")
    .helpOption("-h, --help", "Show this help");
  addSelectionAndReportFlags(program, { script: { defaultTimeout: options.defaultTimeout } });
  addRunPolicyFlags(program);
  addRunDefinitionFlags(program);
  // $EVALFLEET_DB is read after options.db here: a script that names its store keeps it.
  addStoreFlags(program, { env: false });
  addInlineConcurrencyFlag(program);
  addProviderFlags(program);
  let code: number = ExitCode.Usage;
  program.action(async (flags: RunFlags) => {
    // An unknown option of cli() (found there, coordinator/cli/script.ts): a usage error, one line.
    if (unknownOption !== null) throw new EvalfleetError(ErrorCode.Usage, unknownOption.message, { field: unknownOption.field });
    const shapesProblem = redactShapesProblem(options.redactShapes);
    if (shapesProblem) throw new EvalfleetError(ErrorCode.Usage, shapesProblem, { field: "redactShapes" });
    useSuiteRedactShapes(options.redactShapes);
    const config = runConfigFrom({ command: "script", flags, env: processEnvironment(), scriptDb: options.db });
    const suite: LoadedSuite = {
      // A script's cases belong to no suite file: they go by the name of loose cases, as runCases'.
      name: looseCasesSuiteName(null),
      path: "",
      cases,
      judgeModel: options.judgeModel ?? null,
      defaultTimeout: options.defaultTimeout ?? null,
      mcpClients: options.mcpClients ?? [],
      fingerprint: "",
      evalSets: normalizeEvalSets(options.evalSets),
      evalFunctions: evalFunctionRegistry(options.evalFunctions),
      passThreshold: options.passThreshold ?? null,
      casePassRate: options.casePassRate ?? null,
      redactShapes: options.redactShapes ?? true,
    };
    // Cases name the functions `cli(cases, { evalFunctions })` registers (a suite file's are checked when it loads).
    for (const c of cases) for (const name of c.evalFunctions ?? []) if (!suite.evalFunctions!.has(name)) throw new EvalfleetError(ErrorCode.Usage, `case ${pyRepr(c.name)}: evalFunctions: ${unknownEvalFunction(name, [...suite.evalFunctions!.keys()])}`);
    code = await executeRun(suite, config, io, inlineRunner(suite, config));
  });
  return parseAndRun(program, options.argv ?? process.argv.slice(2), io, () => code);
}
