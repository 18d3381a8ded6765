import type { RunOutput } from "../../shared/case/agent.ts";
import { resultShell } from "../../shared/result/result-shell.ts";
import { inputDigest, transcriptToRunOutput } from "../../shared/result/transcript.ts";
import { materializeCase } from "../../shared/datasets/dataset-case.ts";
import { errorMessage } from "../../shared/errors.ts";
import type { SelectedCase } from "../run/select.ts";
import { regradeSkipReason } from "./regrade-plan.ts";
import type { RunRecord } from "./store/run-record.ts";
import type { CaseRecord } from "./store/case-record.ts";
import type { ResultsStore } from "./store/store.ts";

/**
 * A regrade's source: the recorded run whose stored outputs are graded again. It narrows the
 * selection to the cases that can be regraded (listing the others with why), and hands each
 * case's stored output to the runner as the case starts, so no process holds every output at once.
 */

/** A case left out of a regrade, and why. */
export interface RegradeSkip {
  name: string;
  reason: string;
}

/** Cases whose transcripts are read per query while the selection is narrowed. */
const PAGE = 200;

/** See the module comment. */
export class RegradeSource {
  readonly store: ResultsStore;
  readonly run: RunRecord;
  /** The source run's case index of each regradable case, by its index in the suite now. */
  readonly #sourceIndex = new Map<number, number>();

  constructor(store: ResultsStore, run: RunRecord) {
    this.store = store;
    this.run = run;
  }

  /** The selected cases that can be regraded (declaration order), and the others with their reasons. */
  async narrow(selected: readonly SelectedCase[]): Promise<{ selected: SelectedCase[]; skipped: RegradeSkip[] }> {
    const records = await this.store.caseRecords(this.run.id);
    const byName = new Map<string, CaseRecord[]>();
    for (const r of records) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
    const keep: SelectedCase[] = [];
    const skipped: RegradeSkip[] = [];
    for (let i = 0; i < selected.length; i += PAGE) {
      const page = selected.slice(i, i + PAGE);
      const matched = page.map((s) => (byName.get(s.case.name) ?? []).find((r) => !r.caseId || r.caseId === (s.case.id ?? null)) ?? null);
      const stored = await this.store.transcriptsOf(this.run.id, matched.filter((r) => r !== null).map((r) => r!.index));
      page.forEach((s, k) => {
        const record = matched[k] ?? null;
        let reason: string | null;
        try {
          const shell = resultShell(s.case, s.index);
          reason = regradeSkipReason(
            this.run.id,
            { agentId: shell.agentId, teamId: shell.teamId, inputSha256: inputDigest(materializeCase(s.case).input) },
            record ? { agentId: record.agentId, teamId: record.teamId, repeated: Array.isArray(record.report.repeats) && record.report.repeats.length > 0 } : null,
            record ? (stored.get(record.index) ?? null) : null,
          );
        } catch (err) {
          reason = `it cannot be read: ${errorMessage(err)}`;
        }
        if (reason === null) {
          this.#sourceIndex.set(s.index, record!.index);
          keep.push(s);
        } else skipped.push({ name: s.case.name, reason });
      });
    }
    return { selected: keep, skipped };
  }

  /** The stored output of a case {@link narrow} kept, read now. */
  async replayOf(selected: SelectedCase): Promise<RunOutput> {
    const index = this.#sourceIndex.get(selected.index);
    const stored = index === undefined ? null : await this.store.transcript(this.run.id, index);
    const output = stored && !("unreadable" in stored) ? transcriptToRunOutput(stored) : null;
    // narrow() checked it; a run rewritten since then is the only way here.
    if (!output) throw new Error(`the stored output of ${selected.case.name} in run ${this.run.id} is gone`);
    return output;
  }
}
