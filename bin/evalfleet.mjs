#!/usr/bin/env node
// The evalfleet command: runs the compiled JavaScript in dist/ (plain Node, no TypeScript loader;
// tsx is loaded only to import a user's .ts suite file).
import { existsSync } from "node:fs";

// In a checkout (the sources sit next to dist/), a source changed since the last build is compiled
// first, so the command never runs a stale dist/. An installed package ships dist/ only.
if (existsSync(new URL("../index.ts", import.meta.url))) {
  const { isStale, build } = await import("../scripts/build.mjs");
  if (isStale()) {
    process.stderr.write("evalfleet: a source changed since the last build: rebuilding dist/ (npm run build:watch keeps it current)\n");
    if ((await build({ quiet: true })) !== 0) process.exit(2);
  }
}
await import("../dist/coordinator/main.js");
