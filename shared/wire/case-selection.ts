// runs in: main
import * as z from "zod";
import { ErrorCode, EvalfleetError } from "../errors.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The cases a run selected, as they are stored in its manifest: one bit per case of the suite
 * (base64), whatever the selection. A list of indexes and names grew with the suite and went past
 * NATS's 1 MiB payload limit near 30,000 cases; the bitmap of a 100,000-case suite is 17 KB, of a
 * million 167 KB. Names are not stored: every reader checks the suite's fingerprint first, so the
 * index names the case.
 */

/** A selection on the wire. */
export const CaseSelectionSchema = lazySchema(() => z.object({
  /** Cases in the suite: the bitmap has exactly this many bits (rounded up to whole bytes). */
  caseCount: z.number().int().nonnegative(),
  /** Cases selected: the bits set. */
  count: z.number().int().nonnegative(),
  /** Bit i (byte i >> 3, bit i & 7) is set when case i is selected. */
  bitmap: z.string(),
}));
export type CaseSelection = z.infer<typeof CaseSelectionSchema>;

/** Encodes the selected case indexes of a suite of `caseCount` cases. */
export function encodeSelection(indexes: Iterable<number>, caseCount: number): CaseSelection {
  const bits = new Uint8Array(Math.ceil(caseCount / 8));
  let count = 0;
  for (const i of indexes) {
    if (!Number.isInteger(i) || i < 0 || i >= caseCount) throw new RangeError(`selection: case index ${i} is outside the suite's ${caseCount} cases`);
    const mask = 1 << (i & 7);
    if ((bits[i >> 3]! & mask) === 0) count++;
    bits[i >> 3]! |= mask;
  }
  return { caseCount, count, bitmap: Buffer.from(bits).toString("base64") };
}

/**
 * The selected indexes, ascending. Throws an {@link EvalfleetError}: `WIRE_INVALID` when the
 * bitmap does not match its own counts (a manifest that was cut or tampered with runs nothing),
 * `SUITE_MISMATCH` when `suiteCaseCount` is given and the selection was made over another number
 * of cases (its indexes would name cases this suite does not have).
 */
export function decodeSelection(selection: CaseSelection, suiteCaseCount?: number): number[] {
  if (suiteCaseCount !== undefined && selection.caseCount !== suiteCaseCount) {
    throw new EvalfleetError(ErrorCode.SuiteMismatch, `selection: made over a suite of ${selection.caseCount} cases, this suite has ${suiteCaseCount}`);
  }
  const bits = Buffer.from(selection.bitmap, "base64");
  const bytes = Math.ceil(selection.caseCount / 8);
  if (bits.length !== bytes) {
    throw new EvalfleetError(ErrorCode.WireInvalid, `selection: bitmap of ${bits.length} bytes for ${selection.caseCount} cases (expected ${bytes})`);
  }
  const out: number[] = [];
  for (let byte = 0; byte < bits.length; byte++) {
    const b = bits[byte]!;
    if (b === 0) continue;
    for (let bit = 0; bit < 8; bit++) if (b & (1 << bit)) out.push(byte * 8 + bit);
  }
  if (out.length > 0 && out[out.length - 1]! >= selection.caseCount) {
    throw new EvalfleetError(ErrorCode.WireInvalid, `selection: case ${out[out.length - 1]} is selected but the suite has ${selection.caseCount} cases`);
  }
  if (out.length !== selection.count) {
    throw new EvalfleetError(ErrorCode.WireInvalid, `selection: ${out.length} cases are marked but the manifest says ${selection.count}`);
  }
  return out;
}
