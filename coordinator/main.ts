import { main } from "./cli.ts";

/** Entry of the `evalfleet` binary. */
const code = await main(process.argv.slice(2));
process.exitCode = code;
// A case that ignored its abort may still hold a timer or a socket; the run is over, so do not wait for it.
setTimeout(() => process.exit(code), 200).unref();
