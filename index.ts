/**
 * evalfleet's public API: `import { Case, runCases, cli } from "evalfleet"`.
 */
export { Case, JudgeMode, type CaseOptions, type SetupHook, type TeardownHook } from "./shared/case/case.ts";
export {
  RunStatus,
  type Agent,
  type Team,
  type CaseInput,
  type ChatMessage,
  type MessagePart,
  type ProviderOptions,
  type ToolResultOutput,
  type RunContext,
  type RunEvent,
  type RunMessage,
  type RunMetrics,
  type RunOutput,
  type ToolExecution,
  type RequestedToolCall,
} from "./shared/case/agent.ts";
export { Score, ScoreRangeError, type Scorer } from "./shared/case/score.ts";
export { TOOL_CALL_ORDERS, type ToolCallExpectation, type ToolCallMatcher, type ToolCallOrder, type RegexPattern, type ValueMatcher, type ValuePredicate } from "./shared/case/tool-call-matchers.ts";
export type { ScoreData, ReliabilityDetails, ExpectationsData, ExpectationVerdict, EvalFunctionVerdict, RepeatResultData, CaseUsage } from "./shared/wire/result-data.ts";
export type { TrajectoryData, TrajectoryStep, TrajectoryFailure } from "./shared/wire/result-data.ts";
export type { JudgeModel, JudgeRequest, JudgeSchemaName, JudgeCallOptions, JudgeUsage } from "./shared/case/judge-model.ts";
export { CaseResult, SuiteResult } from "./shared/result/result.ts";
export type { CaseResultJSON, SuiteResultJSON, TrajectoryJSON } from "./shared/result/result-json.ts";
export { loadSuite, type LoadedSuite } from "./shared/suite/suite.ts";
export { defineSuite, type SuiteDefinition } from "./shared/suite/suite-definition.ts";
export { suiteFingerprint } from "./shared/suite/suite-fingerprint.ts";
export { EvalfleetError, CaseValidationError, SuiteLoadError, ConfigError, ModelCallError, ErrorCode } from "./shared/errors.ts";
export { SECRET_SHAPES, type SecretShape, type RedactShapes } from "./shared/redaction/shapes.ts";
// Data-driven suites: datasets, eval sets, expected outputs, repeats.
export { DatasetError, type DatasetProblem } from "./shared/errors.ts";
export { dataset, DATASET_FORMATS, type DatasetDeclaration, type DatasetFormat, type DatasetOptions } from "./shared/datasets/dataset.ts";
export { ROW_FIELDS } from "./shared/datasets/row-fields.ts";
export { DatasetCase, isDatasetCase, type LoadedDataset } from "./shared/datasets/dataset-case.ts";
export { SCORING_METHODS, type ExpectedOutput, type OutputScoring, type ScoringMethod } from "./shared/datasets/expected-output-methods.ts";
export type { EvalSet, EvalSets, EvalSetsDefinition, EvalSetRecord } from "./shared/datasets/eval-sets.ts";
export type { EvalFunction, EvalFunctionFn, EvalFunctionContext, EvalFunctions, EvalFunctionsDefinition } from "./shared/case/eval-functions.ts";
export type { ExuluMetadata } from "./shared/datasets/exulu-fields.ts";
export { passAtK } from "./shared/trials/pass-at-k.ts";
export { scoreExpectedOutput } from "./worker/runtime/checks/expected-output.ts";
export { checkAgentTools, checkKnowledgeSources } from "./worker/runtime/checks/expectations.ts";
export type { McpClientLike } from "./shared/case/mcp-client.ts";
export { createLogger } from "./shared/logger.ts";
export { runCase } from "./worker/runtime/lifecycle.ts";
export { DEFAULT_TIMEOUT_SECONDS, DEFAULT_JUDGE_MODEL, DEFAULT_STORE_TIMEOUT_SECONDS } from "./shared/defaults.ts";
export { evaluateReliability, type ReliabilityOptions } from "./worker/runtime/checks/reliability.ts";
export { buildJudgeRequest, parseJudgeAnswer } from "./worker/runtime/checks/judge.ts";
export { runCases, runSuiteLocal, type RunCasesOptions, type LocalRunOptions } from "./coordinator/api.ts";
export { selectCases, type Selector } from "./coordinator/run/select.ts";
export { exitCodeFor, ExitCode } from "./coordinator/run/exit-code.ts";
export { toJUnitXml } from "./coordinator/report/junit.ts";
export { cli } from "./coordinator/cli/script.ts";
export type { CliOptions } from "./coordinator/cli/script-command.ts";
// Real models: judges, the built-in agent, framework adapters, MCP, AgentAsJudgeEval.
export { openAIJudge, OpenAIJudge, type OpenAIJudgeOptions, type StructuredOutputMode, type JudgeUsageTotals } from "./worker/models/openai-judge.ts";
export type { OpenAIConnectionOptions } from "./worker/models/openai-chat.ts";
export type { RetryPolicy } from "./worker/models/retry.ts";
export { aiSdkJudge, AiSdkJudge, type AiSdkJudgeOptions } from "./worker/models/ai-sdk-judge.ts";
export { withProviderLimits } from "./worker/models/ai-sdk-limits.ts";
export { providerKey, aiSdkModelKey, limitedFetch, type ProviderLimiter, type LimitPermit, type AcquireOptions, type LimitedFetch } from "./shared/providers/limiter.ts";
export type { LimitFeedback } from "./shared/providers/limiter-core.ts";
export type { LimitSpec, LimitTable } from "./shared/providers/limit-spec.ts";
export { defaultJudgeModel } from "./worker/models/default-judge.ts";
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
} from "./coordinator/judge/agent-as-judge.ts";
// Results store and run history: record runs (the `db` option, `--db`), read them back, compare.
export { ResultsStore, type OpenStoreOptions, type RunFilter } from "./coordinator/history/store/store.ts";
export type { DbOption } from "./coordinator/history/recording/record-run.ts";
export type { RunRecord, RunStart, RunEnd, RunRecordStatus, RunKind } from "./coordinator/history/store/run-record.ts";
export type { CaseRecord, JudgeEvaluationRecord, RecordedReliability } from "./coordinator/history/store/case-record.ts";
export { SCHEMA_VERSION } from "./coordinator/history/store/schema.ts";
export { parseStoreUrl, redactUrl, type StoreTarget } from "./coordinator/history/store/url.ts";
export { compareRuns, type RunComparison, type ScoreChange } from "./coordinator/history/compare.ts";
export { flakiness, isFlaky, type CaseFlakiness, type HistoryRun } from "./coordinator/history/flaky.ts";
export { findRegressions } from "./coordinator/history/regression.ts";
export type { HistoryCase, Outcome } from "./coordinator/history/outcome.ts";
export { renderHtmlReport, type HtmlReportInput } from "./coordinator/history/html/report.ts";
export { toExuluExport, toReportExport, type ExuluExport, type ExuluEvalRun, type ExuluEvalResult } from "./coordinator/history/export.ts";
