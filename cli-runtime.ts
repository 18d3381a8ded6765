/**
 * The `evalfleet` command's runtime for the commands that load a suite, built as one CommonJS file
 * (dist/cli-runtime.cjs) that coordinator/main.ts loads through a V8 code cache
 * (coordinator/cli/cli-runtime-loader.ts): the command line, and the public API that a suite's
 * `import "evalfleet"` gets in this process (the facade, dist/index.js). Modules are evaluated as
 * the command reaches them: its commands are imported on use (coordinator/cli/program.ts), and the
 * public API on its first call, so a command that fails before it loads a suite never evaluates it.
 */
export { processMain } from "./coordinator/cli/process-main.ts";

/**
 * The public API, evaluated on the first call. esbuild turns this require() into the evaluation
 * of index.ts (and of what only it imports) inside this same file; there is no second copy.
 */
export function publicApi(): typeof import("./index.ts") {
  return require("./index.ts") as typeof import("./index.ts");
}
