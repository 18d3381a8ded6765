// The import rules of evalfleet's layout by role (issue 14), checked by `npm run depcheck`
// (scripts/depcheck.mjs), which `npm test` runs after the type-check. test/scripts/depcheck.test.ts
// feeds these same rules a fixture tree with a bad import for each rule, and a clean one.
//
// Paths are matched relative to the folder the check runs from (the repo root), so every rule
// is written against a role folder (shared/, worker/, coordinator/run/ ...), never a file list —
// except ENTRY_POINTS below, which names the worker modules the coordinator may import, and
// CONFIG_MODULES, which names the modules that may read shared/defaults.ts.
//
// The rules see the imports that exist at run time: Babel strips the TypeScript before the imports
// are read (scripts/depcheck-babel.json), the way verbatimModuleSyntax does, so `import type` is
// invisible while `import { type X } from "m"` still loads "m" and counts. Cycles alone are looked
// for a second time with the type-only imports kept (`no-type-cycle`, scripts/depcheck.mjs), so a
// cycle that only types close fails too. (dependency-cruiser's
// own TypeScript parser needs the TypeScript 5/6 compiler API; this repo type-checks with
// TypeScript 7, which has none.)

import { fileURLToPath } from "node:url";

/** The worker modules the coordinator may import: the worker process entry, the pool, `runCase`,
 *  and the agents, judges and adapters users import (whole folders: a helper that is not for
 *  users belongs in shared/ or worker/runtime/, not in these two folders). Every other worker
 *  module is the worker's own business; what both sides need lives in shared/. */
const ENTRY_POINTS = [
  "worker/main\\.ts$", // the worker process: flags, signals, exit code
  "worker/pool/case-pool\\.ts$", // CasePool, the thread pool that runs cases
  "worker/runtime/lifecycle\\.ts$", // runCase, one case's lifecycle
  "worker/models/", // public agents and judges (openAIAgent, openAIJudge, aiSdkJudge ...)
  "worker/adapters/", // public adapters (wrapAiSdk, wrapOpenAIAgent, mcpToolkit, team ...)
];

/**
 * The modules that may import shared/defaults.ts: the settings compiler and the config modules.
 * Each turns what a front door was given (flags, environment variables, the options of a public
 * API) into complete values, once; every other module is handed compiled values and applies no
 * default of its own (docs/development.md, "Adding a run setting"). A new setting's default is
 * read by one of these, never by its consumer.
 */
const CONFIG_MODULES = [
  "shared/run-settings\\.ts$", // the settings compiler: every run-wide setting (compileRunSettings)
  "shared/environment\\.ts$", // the environment variables, each read, checked and defaulted once
  "shared/broker/nats-settings\\.ts$", // NATS connection settings from flags, then the environment
  "shared/logger-config\\.ts$", // createLogger's level
  "shared/suite/mcp-config\\.ts$", // the bound on connecting an MCP client (a suite's, an mcpToolkit)
  "worker/config\\.ts$", // the worker process: its flags and environment
  "worker/models/criteria-grader-config\\.ts$", // an AgentAsJudgeEval's options
  "coordinator/cli/config\\.ts$", // the command line: its flags and environment
  "coordinator/cli/flags\\.ts$", // the flag declarations: commander's defaults, shown by --help
  "coordinator/library-config\\.ts$", // runCases, runSuiteLocal, cli(cases): what runs at once, where
  "coordinator/history/store/store-config\\.ts$", // the results store's options (timeout, runs listed)
];

/** Matches an npm package, resolved (node_modules/NAME/...) or not installed (bare NAME). */
const npm = (names) => `(^|(^|/)node_modules/)(${names.join("|")})(/|$)`;

/** SDKs that a run without them must not load: imported only with `import()`, and only from the
 *  modules that adapt them (type-only imports are fine: they are erased before the check). */
/** The OpenTelemetry SDK and exporters; `@opentelemetry/api` is a regular dependency (agents use it). */
const OTEL_SDK = "@opentelemetry/(?!api(/|$))[^/]+";
const OPTIONAL_SDKS = ["openai", "@openai/agents", "ai", "@ai-sdk/[^/]+", "@modelcontextprotocol/sdk", OTEL_SDK];
const NATS = npm(["@nats-io/[^/]+"]);
/** The reports: console, JSON and JUnit output, and the HTML history report. */
const REPORTS = "^coordinator/(report|history/html)/";
const STORE = "^coordinator/history/store/";

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    {
      name: "no-cycle",
      severity: "error",
      comment: "Import cycles make load order matter and hide which module owns what: break the cycle (move the shared piece down, or pass a callback in).",
      from: {},
      to: { circular: true },
    },
    {
      name: "defaults-only-in-config-modules",
      severity: "error",
      comment: "Defaults are applied once, where settings are compiled: only the settings compiler and the config modules (CONFIG_MODULES in .dependency-cruiser.mjs) read shared/defaults.ts, and the public entry re-exports it. Take the compiled value from your caller (make the field required), or move a constant that nobody sets next to its topic.",
      from: { pathNot: ["^shared/defaults\\.ts$", "^index\\.ts$", ...CONFIG_MODULES.map((p) => `^${p}`)] },
      to: { path: "^shared/defaults\\.ts$" },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment: "An import that does not resolve is either a bug or an edge the rules cannot see.",
      from: {},
      // A missing optional SDK loaded with import() is how an optional dependency is meant to fail.
      to: { couldNotResolve: true, dependencyTypesNot: ["dynamic-import"] },
    },
    {
      name: "shared-imports-neither-side",
      severity: "error",
      comment: "shared/ holds contracts and process-neutral helpers: it imports neither worker/ nor coordinator/.",
      from: { path: "^shared/" },
      to: { path: "^(worker|coordinator)/" },
    },
    {
      name: "shared-nats-only-in-broker",
      severity: "error",
      comment: "In shared/, only shared/broker/ talks to NATS: contracts and helpers stay transport-free.",
      from: { path: "^shared/", pathNot: "^shared/broker/" },
      to: { path: NATS },
    },
    {
      name: "shared-no-piscina",
      severity: "error",
      comment: "Thread pools are the worker's (worker/pool/): shared/ does not load piscina.",
      from: { path: "^shared/" },
      to: { path: npm(["piscina"]) },
    },
    {
      name: "worker-not-coordinator",
      severity: "error",
      comment: "Imports point one way, coordinator -> worker -> shared: a worker pod never loads the coordinator.",
      from: { path: "^worker/" },
      to: { path: "^coordinator/" },
    },
    {
      name: "coordinator-only-worker-entry-points",
      severity: "error",
      comment: "The coordinator imports only the worker's entry points (ENTRY_POINTS in .dependency-cruiser.mjs); constants and helpers both sides need belong in shared/.",
      from: { path: "^coordinator/" },
      to: { path: "^worker/", pathNot: ENTRY_POINTS.map((p) => `^${p}`) },
    },
    {
      name: "run-core-no-nats",
      severity: "error",
      comment: "The run core (coordinator/run/) is transport-free: NATS lives in shared/broker/ and coordinator/distributed/.",
      from: { path: "^coordinator/run/" },
      to: { path: [NATS, "^shared/broker/"] },
    },
    {
      name: "run-core-no-store",
      severity: "error",
      comment: "The run core (coordinator/run/) does not know the results store or history: recording wraps the runners from outside.",
      from: { path: "^coordinator/run/" },
      to: { path: "^coordinator/history/" },
    },
    {
      name: "store-renders-nothing",
      severity: "error",
      comment: "The store (coordinator/history/store/) reads and writes records; rendering them is the reports' job.",
      from: { path: STORE },
      to: { path: REPORTS },
    },
    {
      name: "reports-need-no-database",
      severity: "error",
      comment: "The reports render records handed to them; they never open the store (type-only imports are allowed, prefer none).",
      from: { path: REPORTS },
      to: { path: [STORE, npm(["pg", "better-sqlite3"])] },
    },
    {
      name: "optional-sdk-only-dynamic",
      severity: "error",
      comment: "Optional SDKs load only when used: import them with import() (type-only imports are fine).",
      from: {},
      to: { path: npm([...OPTIONAL_SDKS, "pg"]), dependencyTypesNot: ["dynamic-import"] },
    },
    {
      name: "optional-sdk-only-in-adapters",
      severity: "error",
      comment: "Only the modules that adapt an optional SDK load it: worker/models/ and worker/adapters/.",
      from: { pathNot: "^worker/(models|adapters)/" },
      to: { path: npm(OPTIONAL_SDKS.filter((sdk) => sdk !== OTEL_SDK)) },
    },
    {
      name: "tracing-sdk-only-in-its-loader",
      severity: "error",
      comment: "The OpenTelemetry SDK (not its API) loads in shared/tracing/sdk.ts only, when tracing is configured.",
      from: { pathNot: "^shared/tracing/sdk\\.ts$" },
      to: { path: npm([OTEL_SDK]) },
    },
    {
      name: "pg-only-in-store",
      severity: "error",
      comment: "Only the results store's drivers (coordinator/history/store/) load the PostgreSQL client.",
      from: { pathNot: STORE },
      to: { path: npm(["pg"]) },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // The compiled package (bin/evalfleet.mjs imports it) and the build script a checkout's binary
    // consults: the rules are about the sources.
    exclude: { path: "^(dist|scripts)/" },
    moduleSystems: ["es6", "cjs"],
    // Read the imports Node sees: Babel strips TypeScript first (see the header).
    tsPreCompilationDeps: false,
    babelConfig: { fileName: fileURLToPath(new URL("scripts/depcheck-babel.json", import.meta.url)) },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
      extensions: [".ts", ".mjs", ".js", ".json"],
    },
  },
};
