// runs in: both
import { CaseValidationError, ConfigError, ErrorCode } from "./errors.ts";
import { didYouMean } from "./near-miss.ts";

/**
 * Unknown options are errors (issue 32): a JavaScript suite has no type checker, and a misspelt
 * option (`scoringMethod` for `outputScoring`, `defaultTimout`) used to be ignored in silence. Each
 * option object of the public API keeps its known keys as a set built once from a table the
 * compiler holds to its interface ({@link optionKeys}); {@link firstUnknownKey} is the plain-code
 * check its constructor runs first, and {@link unknownOption} words the error with the nearest
 * known key. The key tables of the option objects of shared/ are here; those of worker/ and
 * coordinator/ sit next to their interfaces, built with the same helpers (imports point inwards).
 */

/** Every key of `T` (optional ones included), each `true`: the compiler rejects a missing or extra key. */
export type KeyTable<T> = { readonly [K in keyof Required<T>]: true };

/** The keys of an options interface as a set, from a table the compiler checks against the interface. */
export function optionKeys<T>(table: KeyTable<T>): ReadonlySet<string> {
  return new Set(Object.keys(table));
}

/**
 * Whether the key checks run. Only the case-construction bench (bench/case-construction.ts)
 * switches them off, to measure their cost side by side; nothing else may.
 */
export const optionKeyChecks = { enabled: true };

/**
 * The first own enumerable string key of `options` that `known` lacks, or null. Symbol keys are
 * not options and are ignored. Plain code, no allocation: it runs once per case per thread.
 */
export function firstUnknownKey(options: object, known: ReadonlySet<string>): string | null {
  if (!optionKeyChecks.enabled) return null;
  for (const key in options) {
    if (!known.has(key) && Object.prototype.hasOwnProperty.call(options, key)) return key;
  }
  return null;
}

/** `WHO: unknown option 'KEY' (did you mean NEAR?)`, the one wording of every option object. */
export function unknownOptionMessage(who: string, key: string, known: ReadonlySet<string>): string {
  return `${who}: unknown option '${key}'${didYouMean(key, known)}`;
}

/**
 * The error for an unknown option: a {@link CaseValidationError} for a case's options (`kind`
 * `"case"`, `details.case` set to `caseName`), else a {@link ConfigError} (CONFIG_INVALID).
 * `details.field` is the key, `details.known` the known keys.
 *
 * @param who names the object: `case 'a'`, `suite 'math'`, `openAIJudge`.
 */
export function unknownOption(who: string, key: string, known: ReadonlySet<string>, kind: "case" | "config" = "config", caseName?: string): CaseValidationError | ConfigError {
  const message = unknownOptionMessage(who, key, known);
  return kind === "case"
    ? new CaseValidationError(message, { case: caseName, field: key })
    : new ConfigError(ErrorCode.ConfigInvalid, message, { field: key });
}

/** Throws {@link unknownOption}'s ConfigError when `options` (an object) has a key `known` lacks. */
export function rejectUnknownOptions(who: string, options: unknown, known: ReadonlySet<string>): void {
  if (options === null || typeof options !== "object") return;
  const key = firstUnknownKey(options, known);
  if (key !== null) throw unknownOption(who, key, known);
}
