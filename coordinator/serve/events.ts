import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { ResultsStore } from "../history/store/store.ts";
import { casesRecordedAfter, runSummary } from "../history/store/viewer-store.ts";
import { tokenIsActive } from "../history/store/access-tokens.ts";
import { jsonError, type ViewerEnv } from "./access.ts";
import { progressOf } from "./api.ts";
import { eventsParams } from "./params.ts";

/**
 * `GET /api/events?run=ID`: Server-Sent Events while a run is going. The viewer reads the store,
 * not the run (it may be another machine's, over PostgreSQL), so it polls: every
 * {@link EVENTS_POLL_MS} it sends each case recorded since the last look (`result`, oldest
 * first), then the run with its progress (`progress`) when it changed, and `end` once the run has
 * ended. A result is on the page within the poll interval of its write. A stream opened with a
 * token that is then revoked ends at its next look, with a `revoked` event saying so: revoking a
 * token must not leave a nightly run's results flowing to it for hours.
 */

/** How often a stream looks for new results, in milliseconds. */
export const EVENTS_POLL_MS = 400;
/** Most results sent per look (a page that falls further behind catches up over several). */
const RESULTS_PER_LOOK = 500;
/** A progress event at least this often, in milliseconds, even with nothing new (it keeps proxies from closing the stream). */
const KEEPALIVE_MS = 15_000;

/** Registers the event stream on the app; streams end when `closing` aborts (the server's shutdown). */
export function addEventRoutes(app: Hono<ViewerEnv>, store: ResultsStore, closing: AbortSignal): void {
  app.get("/api/events", async (c) => {
    const { run: runId, since } = eventsParams(c.req.query());
    const { scope, tokenId } = c.get("access");
    const first = await runSummary(store, runId, scope);
    if (!first) return jsonError(c, 404, `no run ${JSON.stringify(runId)} in this store (or not one this token may see)`);
    return streamSSE(c, async (stream) => {
      let open = true;
      stream.onAbort(() => void (open = false));
      const stop = () => void (open = false);
      closing.addEventListener("abort", stop, { once: true });
      // Rows recorded in the same millisecond as the last one seen may land later: look again at
      // that millisecond (>=) and skip the indexes already sent for it.
      let cursor = since ?? "";
      let sentAtCursor = new Set<number>();
      let lastProgress = "";
      let lastSentAt = 0;
      try {
        while (open && !closing.aborted) {
          if (tokenId !== null && !(await tokenIsActive(store, tokenId))) {
            await stream.writeSSE({ event: "revoked", data: JSON.stringify({ error: "the token of this stream was revoked" }) });
            break;
          }
          for (;;) {
            const rows = (await casesRecordedAfter(store, runId, cursor, RESULTS_PER_LOOK)).filter((r) => !(r.recorded_at === cursor && sentAtCursor.has(r.index)));
            for (const r of rows) {
              await stream.writeSSE({ event: "result", data: JSON.stringify(r) });
              if (r.recorded_at !== cursor) {
                cursor = r.recorded_at;
                sentAtCursor = new Set();
              }
              sentAtCursor.add(r.index);
            }
            if (rows.length < RESULTS_PER_LOOK || !open) break;
          }
          const run = await runSummary(store, runId, scope);
          if (!run) break;
          const body = JSON.stringify({ ...run, progress: run.status === "running" ? await progressOf(store, run) : null });
          const key = JSON.stringify({ ...run, at: null });
          if (key !== lastProgress || Date.now() - lastSentAt > KEEPALIVE_MS) {
            await stream.writeSSE({ event: "progress", data: body });
            lastProgress = key;
            lastSentAt = Date.now();
          }
          if (run.status !== "running") {
            await stream.writeSSE({ event: "end", data: JSON.stringify({ status: run.status }) });
            break;
          }
          await stream.sleep(EVENTS_POLL_MS);
        }
      } finally {
        closing.removeEventListener("abort", stop);
      }
    });
  });
}
