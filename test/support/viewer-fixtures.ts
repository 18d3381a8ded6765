/**
 * What the viewer's tests share (test/serve/api.test.ts, integration/security-viewer.test.ts): a
 * run's start record for a seeded store, a GET that sends its path and headers as written, and a
 * fetch whose answer is read as JSON where it is JSON.
 */
import { request as httpRequest } from "node:http";
import type { RunStart } from "../../coordinator/history/store/run-record.ts";

/** The start record of a suite run of `cases` cases, inline, on branch main. */
export function viewerRunStart(id: string, suiteName: string, startedAt: string, cases: number): RunStart {
  return {
    id,
    kind: "suite",
    suiteName,
    suiteFingerprint: null,
    suitePath: null,
    selection: { cases: Array.from({ length: cases }, (_, i) => `case-${i}`) },
    config: { mode: "inline" },
    judgeModel: null,
    timeoutSeconds: 30,
    startedAt,
    gitCommit: null,
    gitBranch: "main",
    host: null,
  };
}

/**
 * A GET of `path` on `base` with exactly `headers` (node:http: fetch sets Host itself and would
 * normalise a backslash in the path), and no cookies of its own.
 */
export function rawGet(base: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The answer of a request to the viewer: its status, its body as text and (when it is JSON) parsed, its headers. Redirects are not followed. */
export async function viewerFetch(url: string, init: RequestInit = {}): Promise<{ status: number; json: any; text: string; headers: Headers }> {
  const res = await fetch(url, { redirect: "manual", ...init });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // A page, not JSON.
  }
  return { status: res.status, json, text, headers: res.headers };
}
