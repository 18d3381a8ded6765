/**
 * A JSON report without what legitimately differs between two runs of the same cases: timings
 * (the run's duration, each case's duration and per-phase seconds), session ids, attempts, the
 * worker and the run id. Per-phase timings keep their keys and types, so a missing phase still
 * fails a comparison; repeats are compared the same way.
 */
export function comparableReport(report: Record<string, any>): Record<string, any> {
  const phases = (p: unknown): unknown =>
    p && typeof p === "object" ? Object.fromEntries(Object.entries(p as Record<string, unknown>).map(([k, v]) => [k, typeof v])) : p;
  const strip = (x: Record<string, any>): Record<string, any> => ({
    ...x,
    duration_seconds: null,
    session_id: null,
    attempts: null,
    worker: null,
    ...("phase_seconds" in x ? { phase_seconds: phases(x.phase_seconds) } : {}),
  });
  return {
    summary: { ...report.summary, duration_seconds: null, run_id: null },
    cases: report.cases.map((c: Record<string, any>) => ({ ...strip(c), ...("repeats" in c ? { repeats: c.repeats ? c.repeats.map(strip) : null } : {}) })),
  };
}
