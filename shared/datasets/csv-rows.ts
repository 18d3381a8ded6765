// runs in: both
import { shortRepr, type RowProblem } from "./problem-text.ts";
import { ROW_FIELD_SET, suggestion, type RowField } from "./row-fields.ts";
import { jsonErrorText } from "./expected-output-methods.ts";

/**
 * Dataset rows from CSV: every cell is text; the header says which field a column is. Pure; no
 * I/O (files.ts reads the records).
 */

const CSV_NUMBER_FIELDS: ReadonlySet<RowField> = new Set(["tolerance", "judge_threshold", "timeout_seconds", "max_tool_calls"]);
/** Lists: comma-separated names, or a JSON list (tool-call matchers need the JSON form). */
const CSV_LIST_FIELDS: ReadonlySet<RowField> = new Set(["tags", "expected_tools", "expected_tool_calls", "forbidden_tools", "expected_agent_tools", "expected_knowledge_sources", "eval_functions"]);
const CSV_BOOLEAN_FIELDS: ReadonlySet<RowField> = new Set(["allow_additional_tools", "tool_calls_must_succeed"]);
/** Columns whose cell is a JSON object. */
const CSV_OBJECT_FIELDS: ReadonlySet<RowField> = new Set(["metadata", "RBAC"]);

/** Problems of a CSV header (unknown or repeated columns), reported once at line 1. */
export function csvHeaderProblems(header: readonly string[]): RowProblem[] {
  const problems: RowProblem[] = [];
  const seen = new Set<string>();
  header.forEach((column, i) => {
    if (column === "") problems.push({ field: null, message: `column ${i + 1} has no name in the header row` });
    else if (seen.has(column)) problems.push({ field: column, message: "appears twice in the header row" });
    else if (!ROW_FIELD_SET.has(column) && !column.startsWith("metadata.")) {
      problems.push({ field: column, message: `unknown column${suggestion(column)}; name extra columns metadata.<key> to keep them` });
    }
    seen.add(column);
  });
  return problems;
}

/**
 * Reads a CSV record into a row: an empty cell is an absent field; numbers, `true`/`false`,
 * lists (comma-separated, or a JSON list) and JSON objects (`metadata`, `RBAC`) are read from their text; `inputs`
 * that is a JSON list is a conversation; `metadata.<key>` columns go into `metadata`.
 * Returns the row, and the problems of cells that cannot be read.
 */
export function csvRecordToRow(header: readonly string[], record: readonly string[]): { row: Record<string, unknown>; problems: RowProblem[] } {
  const row: Record<string, unknown> = {};
  const problems: RowProblem[] = [];
  if (record.length !== header.length) {
    problems.push({ field: null, message: `has ${record.length} cells, the header has ${header.length} columns` });
  }
  const metadata: Record<string, unknown> = {};
  let hasMetadataColumns = false;
  header.forEach((column, i) => {
    const cell = record[i];
    if (cell === undefined || cell === "" || !column) return;
    if (column.startsWith("metadata.")) {
      metadata[column.slice("metadata.".length)] = cell;
      hasMetadataColumns = true;
      return;
    }
    // Unknown columns are reported once, at the header (csvHeaderProblems), not on every row.
    if (!ROW_FIELD_SET.has(column)) return;
    const field = column as RowField;
    if (CSV_NUMBER_FIELDS.has(field)) {
      const trimmed = cell.trim();
      row[field] = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed) ? Number(trimmed) : cell;
    } else if (CSV_BOOLEAN_FIELDS.has(field)) {
      const v = cell.trim().toLowerCase();
      row[field] = v === "true" || v === "yes" || v === "1" ? true : v === "false" || v === "no" || v === "0" ? false : cell;
    } else if (CSV_LIST_FIELDS.has(field)) {
      if (cell.trimStart().startsWith("[")) {
        const json = parseJson(cell);
        if ("error" in json) problems.push({ field, message: `is not a valid JSON list: ${json.error}, got ${shortRepr(cell)}` });
        else row[field] = json.value;
      } else {
        row[field] = cell
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
      }
    } else if (CSV_OBJECT_FIELDS.has(field)) {
      const json = parseJson(cell);
      if ("error" in json) problems.push({ field, message: `is not a valid JSON object: ${json.error}, got ${shortRepr(cell)}` });
      else row[field] = json.value;
    } else if (field === "inputs" && cell.trimStart().startsWith("[")) {
      // A cell that is a JSON list is a conversation; any other text (even one starting with "[") is a prompt.
      const json = parseJson(cell);
      row[field] = "value" in json && Array.isArray(json.value) ? json.value : cell;
    } else {
      row[field] = cell;
    }
  });
  if (hasMetadataColumns) {
    const base = row.metadata && typeof row.metadata === "object" && !Array.isArray(row.metadata) ? (row.metadata as Record<string, unknown>) : {};
    row.metadata = { ...base, ...metadata };
  }
  return { row, problems };
}

function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { error: jsonErrorText(err) };
  }
}
