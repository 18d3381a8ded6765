// runs in: both
import { lazyPackage } from "../runtime/lazy-package.ts";
import type * as Yaml from "yaml";
import type * as CsvParse from "csv-parse";
import type * as CsvParseSync from "csv-parse/sync";

/**
 * The YAML and CSV parsers, loaded on first use. Every worker thread imports the datasets' code
 * with the public API its suite imports, and most suites read no YAML or CSV: loading both up
 * front cost each thread some 30-60 ms of start-up.
 */

/** The `yaml` module. */
export const yaml = lazyPackage<typeof Yaml>("yaml");
/** `csv-parse` (the streaming parser). */
export const csvParse = lazyPackage<typeof CsvParse>("csv-parse");
/** `csv-parse/sync`. */
export const csvParseSync = lazyPackage<typeof CsvParseSync>("csv-parse/sync");
