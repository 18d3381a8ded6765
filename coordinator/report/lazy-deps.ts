import { createRequire } from "node:module";
import type CliProgress from "cli-progress";
import type Table from "cli-table3";
import type { create } from "xmlbuilder2";

/**
 * Presentation libraries (CommonJS), loaded on first use. Every worker thread imports evalfleet's
 * public API along with the suite file, and importing these up front cost each thread about
 * 140 ms of start-up (xmlbuilder2 alone ~90 ms) for tables, bars and JUnit files it never writes.
 */

const require = createRequire(import.meta.url);

function once<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

/** `cli-table3`'s Table class. */
export const tableClass = once(() => require("cli-table3") as typeof Table);
/** The `cli-progress` module. */
export const progressBars = once(() => require("cli-progress") as typeof CliProgress);
/** `xmlbuilder2`'s `create`. */
export const xmlDocument = once(() => (require("xmlbuilder2") as { create: typeof create }).create);
