import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";

/** An `assert.throws` predicate: a usage error whose message matches `pattern`. */
export const isUsageError = (pattern: RegExp) => (err: unknown) => err instanceof EvalfleetError && err.code === ErrorCode.Usage && pattern.test(err.message);
