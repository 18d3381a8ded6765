// `node --import ./test/support/trace-modules.mjs ...`: records every module the process loads, one
// line each in $EVALFLEET_TRACE_MODULES:
// - the URL of every ES module (trace-modules-hooks.mjs) and of every file require() loads: the
//   runtimes in dist/ are CommonJS, whose packages come through require(), which Node 20's loader
//   hooks do not see;
// - `evaluated <runtime file URL> <module>` for each module a runtime (dist/*-runtime.cjs, one
//   script holding many modules) evaluated on demand: esbuild wraps such a module in an init
//   function named by its path, and V8's coverage says whether it ran. The modules it does not wrap
//   are evaluated with the file (the test reads them off the file).
import { appendFileSync } from "node:fs";
import { Session } from "node:inspector";
import Module, { register } from "node:module";
import { pathToFileURL } from "node:url";

register("./trace-modules-hooks.mjs", import.meta.url);

const out = process.env.EVALFLEET_TRACE_MODULES;
if (out) {
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    try {
      const file = Module._resolveFilename(request, parent, isMain);
      if (file.startsWith("/")) appendFileSync(out, `${pathToFileURL(file).href}\n`);
    } catch {
      // Not resolvable: require() will say so itself.
    }
    return load.apply(this, arguments);
  };

  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  // Same-thread inspector calls answer at once, so this runs to its end within the exit event.
  process.on("exit", () => {
    session.post("Profiler.takePreciseCoverage", (err, coverage) => {
      if (err) return;
      for (const script of coverage.result) {
        if (!/-runtime\.cjs$/.test(script.url)) continue;
        const url = script.url.startsWith("file:") ? script.url : pathToFileURL(script.url).href;
        appendFileSync(out, `${url}\n`);
        for (const fn of script.functions) if (fn.ranges[0]?.count > 0 && /\.(ts|mts|js|mjs|cjs)$/.test(fn.functionName)) appendFileSync(out, `evaluated ${url} ${fn.functionName}\n`);
      }
    });
  });
}
