// fs.promises, read when a call needs it: Node loads node:fs/promises (and the seven modules it
// brings) on first read, and a worker thread that runs without --cache never pays for them.
import * as fs from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { ResponseStore } from "./response-cache.ts";

/**
 * The response cache in a folder (`--cache`, `.evalfleet/cache` in the working directory): one JSON
 * file per answer under a two-character fan-out, written whole (a temporary file renamed into
 * place), so threads and processes sharing the folder never read half an answer.
 */

/** A {@link ResponseStore} in `dir`. */
export class FileResponseStore implements ResponseStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  #path(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  async get(key: string): Promise<unknown> {
    try {
      return JSON.parse(await fs.promises.readFile(this.#path(key), "utf8"));
    } catch {
      return null;
    }
  }

  async put(key: string, value: unknown): Promise<void> {
    const path = this.#path(key);
    await fs.promises.mkdir(join(this.dir, key.slice(0, 2)), { recursive: true });
    const tmp = `${path}.${randomUUID()}.tmp`;
    await fs.promises.writeFile(tmp, JSON.stringify(value));
    await fs.promises.rename(tmp, path);
  }
}

/**
 * Removes every cached answer in `dir` (`evalfleet cache clear`): only the cache's own fan-out
 * folders (two hex digits), so a wrong `--dir` removes nothing else. A missing folder is already
 * clear. Returns how many folders were removed.
 */
export async function clearFileCache(dir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await fs.promises.readdir(dir);
  } catch {
    return 0;
  }
  const fanOut = entries.filter((e) => /^[0-9a-f]{2}$/.test(e));
  for (const e of fanOut) await fs.promises.rm(join(dir, e), { recursive: true, force: true });
  return fanOut.length;
}
