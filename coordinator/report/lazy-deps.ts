import { lazyPackage } from "../../shared/runtime/lazy-package.ts";
import type CliProgress from "cli-progress";
import type Table from "cli-table3";
import type { create } from "xmlbuilder2";

/**
 * Presentation libraries (CommonJS), loaded on first use. Every worker thread imports evalfleet's
 * public API along with the suite file, and importing these up front cost each thread about
 * 140 ms of start-up (xmlbuilder2 alone ~90 ms) for tables, bars and JUnit files it never writes.
 */

/** `cli-table3`'s Table class. */
export const tableClass = lazyPackage<typeof Table>("cli-table3");
/** The `cli-progress` module. */
export const progressBars = lazyPackage<typeof CliProgress>("cli-progress");
/** `xmlbuilder2`'s `create`. */
export const xmlDocument = lazyPackage("xmlbuilder2", (m) => (m as { create: typeof create }).create);
