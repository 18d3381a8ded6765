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
export type { JudgeModel, JudgeRequest, JudgeSchemaName, JudgeCallOptions, JudgeUsage } from "./shared/judge-model.ts";
export { CaseResult, SuiteResult, type CaseResultJSON, type SuiteResultJSON, type ReliabilityDetails } from "./shared/result.ts";
export { defineSuite, loadSuite, suiteFingerprint, type LoadedSuite, type SuiteDefinition } from "./shared/suite.ts";
export { EvalfleetError, CaseValidationError, SuiteLoadError, ConfigError, ModelCallError, ErrorCode } from "./shared/errors.ts";
// Data-driven suites: datasets, eval sets, expected outputs, repeats.
export { DatasetError, type DatasetProblem } from "./shared/errors.ts";
export { dataset, DATASET_FORMATS, ROW_FIELDS, type DatasetDeclaration, type DatasetFormat, type DatasetOptions } from "./shared/dataset.ts";
export { DatasetCase, isDatasetCase, type LoadedDataset } from "./shared/dataset-case.ts";
export { SCORING_METHODS, type ExpectedOutput, type OutputScoring, type ScoringMethod } from "./shared/scoring.ts";
export type { EvalSet, EvalSets, EvalSetsDefinition } from "./shared/eval-sets.ts";
export { passAtK, type ExpectationsData, type ExpectationVerdict, type RepeatResultData } from "./shared/result.ts";
export { scoreExpectedOutput } from "./worker/checks/expected-output.ts";
export { checkAgentTools, checkKnowledgeSources } from "./worker/checks/expectations.ts";
export type { McpClientLike } from "./shared/mcp-client.ts";
export { createLogger } from "./shared/logger.ts";
export { runCase, DEFAULT_TIMEOUT_SECONDS } from "./worker/lifecycle.ts";
export { evaluateReliability } from "./worker/checks/reliability.ts";
export { buildJudgeRequest, parseJudgeAnswer } from "./worker/checks/judge.ts";
export { runCases, type RunCasesOptions } from "./coordinator/run-cases.ts";
export { runSuiteLocal, type LocalRunOptions } from "./coordinator/local.ts";
export { selectCases, type Selector } from "./coordinator/select.ts";
export { exitCodeFor, ExitCode } from "./coordinator/exit-code.ts";
export { toJUnitXml } from "./coordinator/report/junit.ts";
export { cli } from "./coordinator/cli-script.ts";
export type { CliOptions } from "./coordinator/cli.ts";
// Real models: judges, the built-in agent, framework adapters, MCP, AgentAsJudgeEval.
export { openAIJudge, OpenAIJudge, type OpenAIJudgeOptions, type StructuredOutputMode, type JudgeUsageTotals } from "./worker/models/openai-judge.ts";
export type { OpenAIConnectionOptions } from "./worker/models/openai-chat.ts";
export type { RetryPolicy } from "./worker/models/retry.ts";
export { aiSdkJudge, AiSdkJudge, type AiSdkJudgeOptions } from "./worker/models/ai-sdk-judge.ts";
export { defaultJudgeModel, DEFAULT_JUDGE_MODEL } from "./worker/models/default-judge.ts";
export { agentAsJudgeModel } from "./worker/models/agent-judge.ts";
export { openAIAgent, OpenAIAgent, type OpenAIAgentOptions } from "./worker/models/openai-agent.ts";
export { defineTool, type Tool, type Toolkit, type ToolContext, type ToolDefinition } from "./worker/models/tool.ts";
export { openAITeam, OpenAITeam, DELEGATE_TOOL_NAME, type OpenAITeamOptions, type TeamMember } from "./worker/adapters/team.ts";
export { wrapAiSdk, AiSdkAgent, type AiSdkCall, type WrapAiSdkOptions } from "./worker/adapters/ai-sdk.ts";
export { wrapOpenAIAgent, OpenAIAgentsAdapter, type WrapOpenAIAgentOptions } from "./worker/adapters/openai-agents.ts";
export { withPostHooks, PostHookedAgent, type PostHook, type PostHookLike, type PostHookRun } from "./worker/adapters/post-hooks.ts";
export { mcpToolkit, McpToolkit, type McpToolkitOptions } from "./worker/adapters/mcp-toolkit.ts";
export {
  AgentAsJudgeEval,
  AgentAsJudgeResult,
  type AgentAsJudgeEvalOptions,
  type AgentAsJudgeEvaluation,
  type AgentAsJudgeFailure,
  type AgentAsJudgeRunArgs,
} from "./coordinator/agent-as-judge.ts";
// Results store and run history: record runs (the `db` option, `--db`), read them back, compare.
export { ResultsStore, DEFAULT_STORE_TIMEOUT_SECONDS, type OpenStoreOptions, type RunFilter } from "./coordinator/store/store.ts";
export type { DbOption } from "./coordinator/store/record-run.ts";
export type { RunRecord, RunStart, RunEnd, RunRecordStatus, RunKind, CaseRecord, JudgeEvaluationRecord, RecordedReliability } from "./coordinator/store/records.ts";
export { SCHEMA_VERSION } from "./coordinator/store/schema.ts";
export { parseStoreUrl, redactUrl, type StoreTarget } from "./coordinator/store/url.ts";
export { compareRuns, type RunComparison, type ScoreChange } from "./coordinator/history/compare.ts";
export { flakiness, isFlaky, type CaseFlakiness, type HistoryRun } from "./coordinator/history/flaky.ts";
export { findRegressions } from "./coordinator/history/regression.ts";
export type { HistoryCase, Outcome } from "./coordinator/history/outcome.ts";
export { renderHtmlReport, type HtmlReportInput } from "./coordinator/report/html.ts";
export type { CaseUsage } from "./shared/usage.ts";
