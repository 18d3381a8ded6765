// runs in: both
import { ConfigError, ErrorCode } from "../errors.ts";

/**
 * Optional peer dependencies (the Agents SDK, the AI SDK, MCP, pg): evalfleet installs none of
 * them; the adapter that needs one imports it on first use, through {@link importOptional}, so a
 * project without it gets one line saying what to install instead of a resolution stack trace.
 */

/** True when `err` says that `pkg` itself (not one of its own imports) cannot be found. */
export function isMissingPackage(err: unknown, pkg: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return false;
  const message = String((err as { message?: unknown }).message ?? "");
  return message.includes(`'${pkg}'`) || message.includes(`'${pkg}/`) || message.includes(`"${pkg}"`);
}

/**
 * Runs `load` (an `import()` of `pkg`, written where the package is used) and returns its module.
 * When `pkg` is not installed, throws a {@link ConfigError} (`CONFIG_MISSING`, exit 2 on the command
 * line) naming the package and what needs it: `the AI SDK judge needs the package "ai": npm install ai`.
 * Any other failure is rethrown as it is.
 */
export async function importOptional<T>(pkg: string, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!isMissingPackage(err, pkg)) throw err;
    throw new ConfigError(ErrorCode.ConfigMissing, `${feature} needs the package "${pkg}", which is not installed: npm install ${pkg}`, { field: "package", value: pkg });
  }
}
