import type { Writable } from "node:stream";
import type { JudgeUsage } from "../../shared/case/judge-model.ts";
import type { AgentAsJudgeEvaluation, AgentAsJudgeFailure } from "../../worker/models/criteria-grader.ts";
import { safeText } from "../../shared/text.ts";
import { tableClass } from "../report/lazy-deps.ts";

/**
 * The result of one AgentAsJudgeEval run (coordinator/judge/agent-as-judge.ts): its evaluations,
 * the score statistics, Agno's `asdict` JSON form, and the tables `printSummary`/`printResults`
 * print. Pure apart from printing to the stream it is given.
 */

/** The aggregate of one {@link AgentAsJudgeEval.run}. */
export class AgentAsJudgeResult {
  readonly runId: string;
  readonly results: readonly AgentAsJudgeEvaluation[];
  /** Mean score; `null` in binary mode or with no results. */
  readonly avgScore: number | null;
  readonly minScore: number | null;
  readonly maxScore: number | null;
  /** Sample standard deviation; 0 for one score; `null` in binary mode or with no results. */
  readonly stdDevScore: number | null;
  /** Percentage of results that passed, 0-100 (0 with no results). */
  readonly passRate: number;
  /** Evaluations without a verdict (evalfleet's addition: Agno only logs them). */
  readonly failures: readonly AgentAsJudgeFailure[];
  /** The judge's token usage over the run. */
  readonly usage: Readonly<Required<JudgeUsage>>;

  constructor(runId: string, results: readonly AgentAsJudgeEvaluation[], failures: readonly AgentAsJudgeFailure[] = [], usage: Required<JudgeUsage> = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }) {
    this.runId = runId;
    this.results = Object.freeze([...results]);
    this.failures = Object.freeze([...failures]);
    this.usage = Object.freeze({ ...usage });
    this.passRate = results.length > 0 ? (results.filter((r) => r.passed).length / results.length) * 100 : 0;
    const scores = results.map((r) => r.score).filter((s): s is number => s !== null);
    if (scores.length > 0) {
      const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
      this.avgScore = mean;
      this.minScore = Math.min(...scores);
      this.maxScore = Math.max(...scores);
      this.stdDevScore = scores.length > 1 ? Math.sqrt(scores.reduce((a, s) => a + (s - mean) ** 2, 0) / (scores.length - 1)) : 0;
    } else {
      this.avgScore = this.minScore = this.maxScore = this.stdDevScore = null;
    }
  }

  /** Agno's `asdict` form, snake_case keys (what `filePathToSaveResults` writes). */
  toJSON(): Record<string, unknown> {
    return {
      run_id: this.runId,
      results: this.results.map((r) => ({ input: r.input, output: r.output, criteria: r.criteria, score: r.score, reason: r.reason, passed: r.passed })),
      avg_score: this.avgScore,
      min_score: this.minScore,
      max_score: this.maxScore,
      std_dev_score: this.stdDevScore,
      pass_rate: this.passRate,
    };
  }

  /** Prints the summary table (evaluations, pass rate, score statistics in numeric mode). */
  printSummary(out: Writable = process.stdout): void {
    const Table = tableClass();
    const table = new Table({ style: { head: [], border: [] }, colWidths: [26, 22] });
    const n = this.results.length;
    table.push(["Number of Evaluations", String(n)], ["Pass Rate", `${this.passRate.toFixed(1)}%`]);
    if (this.avgScore !== null) {
      if (n === 1) table.push(["Score", `${this.avgScore.toFixed(2)}/10`]);
      else {
        table.push(["Average Score", `${this.avgScore.toFixed(2)}/10`], ["Min Score", `${this.minScore!.toFixed(2)}/10`], ["Max Score", `${this.maxScore!.toFixed(2)}/10`]);
        if (this.stdDevScore) table.push(["Std Deviation", this.stdDevScore.toFixed(2)]);
      }
    }
    if (this.failures.length > 0) table.push(["No Verdict", String(this.failures.length)]);
    out.write(`Agent As Judge Evaluation Summary\n${table.toString()}\n`);
  }

  /** Prints one table per evaluation (input and output cut at 200 characters). */
  printResults(out: Writable = process.stdout): void {
    // Cleaned before it is cut: a cut through a secret would leave a piece no redactor knows.
    const cut = (text: string): string => {
      const s = safeText(text);
      return s.length > 200 ? `${s.slice(0, 200)}...` : s;
    };
    const Table = tableClass();
    for (const r of this.results) {
      const table = new Table({ style: { head: [], border: [] }, colWidths: [10, 70], wordWrap: true });
      table.push(["Input", cut(r.input)], ["Output", cut(r.output)]);
      if (r.score !== null) table.push(["Score", `${r.score}/10`]);
      table.push(["Status", r.passed ? "PASSED" : "FAILED"], ["Reason", safeText(r.reason)]);
      out.write(`Agent As Judge Evaluation\n${table.toString()}\n`);
    }
  }
}
