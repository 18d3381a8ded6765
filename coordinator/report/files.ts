import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { redactJson } from "../../shared/redaction/secrets.ts";

/**
 * Writes a report file, creating missing parent folders. Throws an {@link EvalfleetError} with
 * code REPORT_WRITE whose message is the reason only (the CLI prints the path beside it).
 */
export async function writeReport(path: string, text: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text, "utf8");
  } catch (err) {
    throw new EvalfleetError(ErrorCode.ReportWrite, errorMessage(err), { path });
  }
}

/**
 * The JSON report text, without secrets (shared/redaction/secrets.ts): two-space indent and a final
 * newline, like Agno's `json.dumps(indent=2) + "\n"`.
 */
export function jsonReportText(payload: unknown): string {
  return `${JSON.stringify(redactJson(payload), null, 2)}\n`;
}
