// runs in: both
import type * as z from "zod";
import { config, type ZodMiniType } from "zod/mini";
import en from "zod/v4/locales/en.js";
import { lazySchema } from "./lazy-schema.ts";

/**
 * The micro-steps of a thread's start that measured as paying, kept in this one room so that the
 * protocol and domain files that use them read like ordinary TypeScript: they declare a schema, or
 * a check, and ask here how it is built or run. Each one was measured side by side against the
 * same build without it (bench/README.md, the notes of the 2026-12-03 round): a thread of a 5-case
 * run executes about 236 million instructions (callgrind).
 *
 * - {@link startUpSchema}: the few messages a thread parses as it starts (its `workerData`, its
 *   batches: shared/wire/thread.ts) are built with zod mini, which builds a schema for about half
 *   the cost of zod classic in a new thread: 27 million instructions fewer per thread, its
 *   `workerData` and first 5-case batch parsed in 6.3 instead of 12.2 ms.
 * - {@link plainlyFirst}: a check in plain code before a schema, for values checked once per case
 *   in every thread (a case's options, shared/case/case-option-checks.ts): 25 million instructions
 *   fewer per thread, 15 million in the CLI; the first 5 cases built in 0.5 instead of 15 ms.
 *
 * Elsewhere in shared/runtime/: schemas built on first use (lazy-schema.ts: 66 million instructions
 * fewer per thread, 40 million in the CLI), the runtimes through a V8 code cache and read as
 * Latin-1 (cached-commonjs.ts). Tried and dropped: parsing a thread's first messages without zod's
 * compiled fast path (`jitless`): zod mini's objects have no such path, so it changed nothing.
 */

// zod classic sets its English messages when it builds its first schema, zod mini never does; a
// thread's first schemas are these, so they set them (unless the process chose a locale).
if (!config().localeError) config(en());

/**
 * A schema a thread parses as it starts, built with zod mini (`import * as zm from "zod/mini"`:
 * the type says so) on first use (shared/runtime/lazy-schema.ts), with zod classic's English
 * messages. The same checks and messages as zod classic, at about half the cost of building in a
 * new thread, where a schema is built only to parse a handful of values. Mini has no compiled fast
 * path, so a schema parsed all the time (a message of every case) is better built with zod
 * classic. Its type is zod's (`z.infer` works).
 *
 * Import zod mini as a namespace and call its members (`zm.object(...)`): the bundle then keeps only
 * what is used, where the namespace handed around as a value keeps all of zod mini, every locale
 * included (a thread's first batch then parsed 60% slower).
 *
 * @param build makes the schema; called at most once, on first use.
 */
export function startUpSchema<T extends ZodMiniType>(build: () => T): T {
  return lazySchema(build);
}

/**
 * A check that runs `plainlyValid` first, in plain code, and builds and runs `schema` only when it
 * is not sure: for values checked once per case in every thread, where building the schema and
 * compiling its fast path cost a thread more than all its cases' checks. `plainlyValid` must be
 * conservative (true only for values the schema accepts; a test holds it to the schema over
 * generated values); the schema defines the rules and words the error.
 *
 * @returns a function giving the schema's first issue, or null when the value passes.
 */
export function plainlyFirst(plainlyValid: (value: object) => boolean, schema: z.ZodType): (value: object) => z.core.$ZodIssue | null {
  return (value) => {
    if (plainlyValid(value)) return null;
    const parsed = schema.safeParse(value);
    return parsed.success ? null : (parsed.error.issues[0] ?? null);
  };
}
