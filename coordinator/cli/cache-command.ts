import type { Command } from "commander";
import { RESPONSE_CACHE_DIR } from "../../shared/response-cache-dir.ts";
import type { CommandContext } from "./io.ts";

/**
 * `evalfleet cache clear`: empties the local response cache (`--cache`) of the working directory,
 * or the folder `--dir` names. The fleet's shared cache is a NATS KV bucket: it is purged with the
 * NATS tools (`nats kv rm EVALFLEET_CACHE`), see docs/iterating.md.
 */

/** Registers `cache` and `cache clear` on the program. */
export function addCacheCommand(program: Command, ctx: CommandContext): void {
  const cache = program.command("cache").description("Manage the response cache of the built-in model clients (--cache)");
  cache
    .command("clear")
    .description(`Remove every cached model answer of the local cache (${RESPONSE_CACHE_DIR} in this folder)`)
    .option("--dir <path>", `the cache folder (default ${RESPONSE_CACHE_DIR})`)
    .action(async (flags: { dir?: string }) => {
      const { resolve } = await import("node:path");
      const { clearFileCache } = await import("../../worker/models/file-cache.ts");
      const dir = resolve(flags.dir ?? RESPONSE_CACHE_DIR);
      await clearFileCache(dir);
      ctx.io.stdout.write(`cache cleared: ${dir}\n`);
      ctx.setCode(0);
    });
}
