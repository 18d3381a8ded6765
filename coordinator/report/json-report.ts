import { open, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { SuiteResult } from "../../shared/result/result.ts";
import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { redactJson } from "../../shared/redaction/secrets.ts";

/**
 * The JSON report written a case at a time (issue 29): the same text as
 * `jsonReportText(suite.toJSON())` (coordinator/report/files.ts), byte for byte, without the
 * document in memory: the summary, then each case's entry as the run's results are walked (a
 * spooled run reads each back from its file), indented as `JSON.stringify(…, null, 2)` indents it
 * inside the document. Secrets are removed from each piece (the redactor works string by string,
 * so piece by piece is the whole document's redaction).
 */

/** Characters gathered before a write to the file. */
const WRITE_CHUNK_CHARS = 256 * 1024;

/** The report's text in pieces, in order; joined, exactly `jsonReportText(suite.toJSON())`. */
export function* jsonReportChunks(suite: SuiteResult): Generator<string> {
  yield `{\n  "summary": ${indented(JSON.stringify(redactJson(suite.summaryJSON()), null, 2), "  ")},\n  "cases": [`;
  let first = true;
  for (const entry of suite.casesJSON()) {
    yield `${first ? "" : ","}\n    ${indented(JSON.stringify(redactJson(entry), null, 2), "    ")}`;
    first = false;
  }
  yield first ? "]\n}\n" : "\n  ]\n}\n";
}

/**
 * Writes the JSON report to `path` a case at a time, creating missing parent folders. Throws an
 * {@link EvalfleetError} with code REPORT_WRITE whose message is the reason only (as writeReport).
 */
export async function writeJsonReport(path: string, suite: SuiteResult): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    const file = await open(path, "w");
    try {
      let pending = "";
      for (const chunk of jsonReportChunks(suite)) {
        pending += chunk;
        if (pending.length < WRITE_CHUNK_CHARS) continue;
        await file.write(pending, null, "utf8");
        pending = "";
      }
      if (pending) await file.write(pending, null, "utf8");
    } finally {
      await file.close();
    }
  } catch (err) {
    throw new EvalfleetError(ErrorCode.ReportWrite, errorMessage(err), { path });
  }
}

/** `json` with every line after the first prefixed with `prefix`: a value nested that deep in the document. */
function indented(json: string, prefix: string): string {
  return json.replace(/\n/g, `\n${prefix}`);
}
