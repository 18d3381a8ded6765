// runs in: both
import { FROM_SOURCES } from "../runtime/package-files.ts";

/**
 * tsx, registered on demand: compiled evalfleet runs on plain Node, and a thread (or the CLI) loads
 * tsx only when it imports a user's TypeScript suite file. Registered globally (no namespace), so a
 * suite's `import ... from "evalfleet"` resolves through Node's own resolution to the very modules
 * this process already runs: one evalfleet instance, one `Case` class.
 */

/** Set on globalThis once this thread has registered tsx (a second registration would compile twice). */
const REGISTERED = Symbol.for("evalfleet.tsxRegistered");

/** File names that need tsx to import. */
const TYPESCRIPT_FILE = /\.(c|m)?tsx?$/i;

/** True when `path` is a TypeScript file (`.ts`, `.mts`, `.cts`, `.tsx`). */
export function isTypeScriptFile(path: string): boolean {
  return TYPESCRIPT_FILE.test(path);
}

/**
 * Makes `import()` of a TypeScript file work in this thread: registers tsx's ESM and CommonJS hooks
 * once. A no-op when evalfleet itself runs from its TypeScript sources (a loader is active already).
 */
export async function ensureTypeScriptLoader(): Promise<void> {
  if (FROM_SOURCES) return;
  const holder = globalThis as Record<symbol, boolean | undefined>;
  if (holder[REGISTERED]) return;
  holder[REGISTERED] = true;
  const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
  esm.register();
  cjs.register();
}
