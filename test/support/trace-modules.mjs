// `node --import ./test/support/trace-modules.mjs ...`: records every module the process loads
// (see trace-modules-hooks.mjs).
import { register } from "node:module";

register("./trace-modules-hooks.mjs", import.meta.url);
