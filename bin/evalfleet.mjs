#!/usr/bin/env node
// The evalfleet command. Registers tsx so that evalfleet's TypeScript sources and the user's
// .ts suite files load on Node 20 without a build step.
import { register } from "tsx/esm/api";

register();
await import("../coordinator/main.ts");
