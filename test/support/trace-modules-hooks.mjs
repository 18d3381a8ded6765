// Module loader hooks that append the URL of every module loaded to $EVALFLEET_TRACE_MODULES (one
// per line): how the lazy-loading test sees what a command loads. Registered by trace-modules.mjs.
import { appendFileSync } from "node:fs";

export async function load(url, context, next) {
  if (process.env.EVALFLEET_TRACE_MODULES) appendFileSync(process.env.EVALFLEET_TRACE_MODULES, `${url}\n`);
  return next(url, context);
}
