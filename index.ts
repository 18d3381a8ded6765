/**
 * evalfleet's public API: `import { Case, runCases, cli } from "evalfleet"`.
 */
export { Case, JudgeMode, type CaseOptions, type SetupHook, type TeardownHook } from "./shared/case.ts";
export {
  RunStatus,
  type Agent,
  type Team,
  type CaseInput,
  type ChatMessage,
  type RunContext,
  type RunEvent,
  type RunMessage,
  type RunMetrics,
  type RunOutput,
  type ToolExecution,
  type RequestedToolCall,
} from "./shared/agent.ts";
export { Score, ScoreRangeError, type Scorer, type ScoreData } from "./shared/score.ts";
export type { JudgeModel, JudgeRequest, JudgeSchemaName } from "./shared/judge-model.ts";
export { CaseResult, SuiteResult, type CaseResultJSON, type SuiteResultJSON, type ReliabilityDetails } from "./shared/result.ts";
export { defineSuite, loadSuite, suiteFingerprint, type LoadedSuite, type SuiteDefinition } from "./shared/suite.ts";
export { EvalfleetError, CaseValidationError, SuiteLoadError, ErrorCode } from "./shared/errors.ts";
export { createLogger } from "./shared/logger.ts";
export { runCase, DEFAULT_TIMEOUT_SECONDS } from "./worker/lifecycle.ts";
export { evaluateReliability } from "./worker/checks/reliability.ts";
export { buildJudgeRequest, parseJudgeAnswer } from "./worker/checks/judge.ts";
export { runCases, type RunCasesOptions } from "./coordinator/run-cases.ts";
export { runSuiteLocal, type LocalRunOptions } from "./coordinator/local.ts";
export { selectCases, type Selector } from "./coordinator/select.ts";
export { exitCodeFor, ExitCode } from "./coordinator/exit-code.ts";
export { toJUnitXml } from "./coordinator/report/junit.ts";
export { cli, type CliOptions } from "./coordinator/cli.ts";
