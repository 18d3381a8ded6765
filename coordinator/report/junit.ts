import { xmlDocument } from "./lazy-deps.ts";
import type { SuiteResult } from "../../shared/result/result.ts";
import { redactSuite, redactText } from "../../shared/redaction/secrets.ts";
import { casePassRateInterval } from "../../shared/result/run-statistics.ts";

/**
 * JUnit XML, a projection of the JSON report that CI dashboards read: one testcase per case,
 * `<skipped>` for skipped cases, `<error>` for cases that did not complete (agent errors,
 * timeouts, crashes), `<failure>` for cases whose checks failed. Secrets are removed first
 * (shared/redaction/secrets.ts), before any text is cut. The `timestamp` is when the run started (the
 * suite's `startedAt`; a resumed run's is its first coordinator's), else now.
 */
export function toJUnitXml(result: SuiteResult, suiteNameGiven: string, timestamp: Date = result.startedAt ? new Date(result.startedAt) : new Date()): string {
  const suite = redactSuite(result);
  const suiteName = redactText(suiteNameGiven);
  // Walked, not held: a spooled run's results are read back one at a time (twice: counts, then cases).
  let errors = 0;
  let notPassed = 0;
  for (const r of suite.cases()) {
    if (r.skipped || r.passed) continue;
    notPassed++;
    if (isError(r.error, r.timedOut)) errors++;
  }
  const skipped = suite.skipped;
  const failures = notPassed - errors;
  const counts = { tests: String(suite.total), failures: String(failures), errors: String(errors), skipped: String(skipped), time: seconds(suite.durationSeconds) };
  // Names and ids are user-supplied too: attributes get the same cleaning as text.
  const name = clean(suiteName);
  const root = xmlDocument()({ version: "1.0", encoding: "UTF-8" }).ele("testsuites", { name, ...counts });
  const ts = root.ele("testsuite", { name, ...counts, timestamp: timestamp.toISOString().replace(/\.\d+Z$/, "") });
  const props = ts.ele("properties");
  if (suite.runId) props.ele("property", { name: "run_id", value: clean(suite.runId) });
  // The run's tokens and cost, and its infrastructure errors (docs/providers.md).
  const usage = suite.usage;
  props.ele("property", { name: "tokens", value: String(usage.tokens.total) });
  props.ele("property", { name: "tokens_agent", value: String(usage.tokens.agent) });
  props.ele("property", { name: "tokens_judge", value: String(usage.tokens.judge) });
  props.ele("property", { name: "cost_usd", value: String(usage.costUsd) });
  props.ele("property", { name: "cost_unknown_cases", value: String(usage.unknownCostCases) });
  props.ele("property", { name: "infra_errors", value: String(suite.infraErrors) });
  // The pass rate with its interval (shared/result/run-statistics.ts), as the JSON summary has them.
  const stats = suite.statistics;
  const statProps: [string, number | string | null][] = [
    ["confidence", stats.confidence],
    ["pass_rate", stats.trialPassRate],
    ["pass_rate_ci_low", stats.passRateInterval[0]],
    ["pass_rate_ci_high", stats.passRateInterval[1]],
    ["pass_rate_method", stats.method],
    ...Object.entries(stats.passHatK ?? {}).map(([k, v]): [string, number] => [`pass_hat_${k}`, v]),
    ["judge_score_mean", stats.judgeScore?.mean ?? null],
    ["judge_score_ci_low", stats.judgeScore?.interval[0] ?? null],
    ["judge_score_ci_high", stats.judgeScore?.interval[1] ?? null],
    ["score_value_mean", stats.scoreValue?.mean ?? null],
    ["score_value_ci_low", stats.scoreValue?.interval[0] ?? null],
    ["score_value_ci_high", stats.scoreValue?.interval[1] ?? null],
    // Adaptive repeats (--repeat MIN..MAX): what the run spent and saved.
    ["trials_spent", suite.adaptiveRepeats?.trialsSpent ?? null],
    ["trials_saved", suite.adaptiveRepeats?.trialsSaved ?? null],
    ["undecided_cases", suite.adaptiveRepeats?.undecidedCases ?? null],
  ];
  for (const [key, value] of statProps) if (value !== null) props.ele("property", { name: key, value: String(value) });
  for (const r of suite.cases()) {
    const tc = ts.ele("testcase", { name: clean(r.name), classname: clean(`${suiteName}.${r.teamId ?? r.agentId ?? "case"}`), time: seconds(r.durationSeconds) });
    // A repeated case: its pass rate, its interval and its rule, as testcase properties (JUnit 5's, which Jenkins and GitLab read).
    const ci = casePassRateInterval(r, stats.confidence);
    if (ci && r.passRate !== null) {
      const caseProps = tc.ele("properties");
      caseProps.ele("property", { name: "pass_rate", value: String(r.passRate) });
      caseProps.ele("property", { name: "pass_rate_ci_low", value: String(ci[0]) });
      caseProps.ele("property", { name: "pass_rate_ci_high", value: String(ci[1]) });
      caseProps.ele("property", { name: "case_pass_rate", value: String(r.casePassRate ?? 1) });
      if (r.adaptive) {
        caseProps.ele("property", { name: "decided", value: String(r.adaptive.decided) });
        caseProps.ele("property", { name: "adaptive_stop", value: r.adaptive.stop });
      }
    }
    if (r.skipped) {
      tc.ele("skipped", { message: clean(r.error ?? "skipped") });
    } else if (!r.passed) {
      const verdicts = [
        r.judgePassed === false ? `judge failed${r.judgeScore !== null ? ` (score ${r.judgeScore})` : ""}${r.judgeReason ? `: ${r.judgeReason}` : ""}` : null,
        r.reliabilityPassed === false
          ? r.reliability?.reason
            ? `reliability failed: ${r.reliability.reason}`
            : `reliability failed: missing ${r.reliability?.missingToolCalls.join(", ") || "-"}; unexpected ${r.reliability?.failedToolCalls.join(", ") || "-"}`
          : null,
        r.score && !r.score.passed ? `scorer failed (${r.score.value})${r.score.reason ? `: ${r.score.reason}` : ""}` : null,
        r.expectations?.expectedOutput && !r.expectations.expectedOutput.passed ? `expected_output (${r.expectations.expectedOutput.method}) failed: ${r.expectations.expectedOutput.reason}` : null,
        r.expectations?.expectedAgentTools && !r.expectations.expectedAgentTools.passed ? `expected_agent_tools failed: ${r.expectations.expectedAgentTools.reason}` : null,
        r.expectations?.expectedKnowledgeSources && !r.expectations.expectedKnowledgeSources.passed ? `expected_knowledge_sources failed: ${r.expectations.expectedKnowledgeSources.reason}` : null,
        ...(r.expectations?.evalFunctions ?? []).map((f) => (f.passed ? null : `eval_function ${f.name} failed (${f.value}): ${f.reason}`)),
        r.repeats && r.repeats.length > 0 ? `${r.repeats.filter((x) => x.passed).length}/${r.repeats.length} runs passed` : null,
      ].filter((v): v is string => v !== null);
      const message = r.error || verdicts.join("; ") || "failed";
      const kind = isError(r.error, r.timedOut) ? "error" : "failure";
      tc.ele(kind, { message: clean(message.slice(0, 1000)), type: r.timedOut ? "timeout" : kind === "error" ? errorType(r.error) : "check" }).txt(
        clean([r.error, ...verdicts].filter(Boolean).join("\n")),
      );
    }
    if (r.output) tc.ele("system-out").txt(clean(r.output));
  }
  return root.end({ prettyPrint: true }) + "\n";
}

function isError(error: string | null, timedOut: boolean): boolean {
  if (timedOut) return true;
  if (!error) return false;
  // Check verdict failures are failures; anything that kept the case from completing is an error.
  return !/^(judge|reliability|scorer): /.test(error);
}

function errorType(error: string | null): string {
  return /^([a-z]+):/.exec(error ?? "")?.[1] ?? "error";
}

function seconds(s: number): string {
  return s.toFixed(3);
}

/**
 * Prepares a string for xmlbuilder2. XML 1.0 cannot carry most control characters or unpaired
 * surrogates, even escaped: drop them. xmlbuilder2 leaves an `&` that looks like an entity
 * (`&amp;`, `&foo;`, `&#0;`) unescaped, which would garble model output or break the document,
 * so every `&` is escaped here; xmlbuilder2 then leaves the resulting `&amp;` alone.
 */
function clean(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "")
    .replace(/&/g, "&amp;");
}
