import { loadsSuite } from "./cli/loads-suite.ts";

/**
 * Entry of the `evalfleet` binary. A command that loads a suite (`run`, `list`, `worker`, ...) runs
 * in the CLI's runtime, one script loaded through a V8 code cache (coordinator/cli/cli-runtime-loader.ts):
 * Node 20 compiles every ES module afresh, which cost such a command about a fifth of its CPU
 * (bench/README.md). Every other command (`--help`, `status`, `runs`, ...) runs from the ES modules
 * here, which load only what that command needs.
 */
const argv = process.argv.slice(2);
if (loadsSuite(argv)) await (await (await import("./cli/cli-runtime-loader.ts")).loadCliRuntime())(argv);
else await (await import("./cli/process-main.ts")).processMain(argv);
