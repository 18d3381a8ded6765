import { InvalidArgumentError, Option, type Command } from "commander";
import { addHistoryReadFlags } from "./flags.ts";
import type { CommandContext } from "./io.ts";

/**
 * `evalfleet serve` (the live viewer and JSON API over the results store) and `evalfleet token
 * create|list|revoke` (its access tokens): their arguments and flags. What they do
 * (coordinator/serve/commands.ts) loads only when one of them runs.
 */

/** Default port of `serve`. */
export const DEFAULT_SERVE_PORT = 4173;
/** Default host of `serve`: this machine only. */
export const DEFAULT_SERVE_HOST = "127.0.0.1";

const commands = (): Promise<typeof import("../serve/commands.ts")> => import("../serve/commands.ts");

function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 65535) throw new InvalidArgumentError(`--port must be a port number 0-65535 (0 picks a free one), got '${value}'`);
  return n;
}

/** Registers `serve` and `token` on the program. */
export function addServeCommands(program: Command, ctx: CommandContext): void {
  const serve = program.command("serve").description("Serve a live web viewer and JSON API over the results store (runs, cases, search, compare, flaky)");
  addHistoryReadFlags(serve, { json: false });
  serve
    .option("--host <host>", "address to listen on; a host that is not loopback implies --auth", DEFAULT_SERVE_HOST)
    .addOption(new Option("--port <port>", "port to listen on (0 picks a free one)").argParser(parsePort).default(DEFAULT_SERVE_PORT))
    .option("--auth", "require an access token on every request (evalfleet token create)");
  serve.action(async (flags: { db?: string; dbTimeout: number; host: string; port: number; auth?: boolean }) => {
    const [{ serveCommand }, { stopOnSignals }] = await Promise.all([commands(), import("./signals.ts")]);
    const stop = new AbortController();
    const unhook = ctx.io.handleSignals ? stopOnSignals(() => stop.abort()) : () => undefined;
    ctx.io.signal?.addEventListener("abort", () => stop.abort(), { once: true });
    if (ctx.io.signal?.aborted) stop.abort();
    try {
      ctx.setCode(await serveCommand(flags, ctx.io, stop.signal));
    } finally {
      unhook();
    }
  });

  const token = program.command("token").description("Manage the viewer's access tokens (stored as hashes in the results store)");
  const create = token.command("create").description("Create a token; it is printed once, on the last line");
  addHistoryReadFlags(create, { json: false });
  create
    .addOption(new Option("--role <role>", "viewer: reads runs; admin: also lists tokens").choices(["viewer", "admin"]).default("viewer"))
    .option("--suite <name>", "only this suite's runs (repeat for several; default every suite)", (v: string, prev: string[] = []) => [...prev, v])
    .option("--label <text>", "a note shown by token list");
  create.action(async (flags: { db?: string; dbTimeout: number; role: "viewer" | "admin"; suite?: string[]; label?: string }) => ctx.setCode(await (await commands()).tokenCreateCommand(flags, ctx.io)));
  const list = token.command("list").description("List the tokens (never their secrets)");
  addHistoryReadFlags(list);
  list.action(async (flags: { db?: string; dbTimeout: number; json?: boolean }) => ctx.setCode(await (await commands()).tokenListCommand(flags, ctx.io)));
  const revoke = token.command("revoke").description("Revoke a token by id").argument("<id>", "the token's id (token list shows it)");
  addHistoryReadFlags(revoke, { json: false });
  revoke.action(async (id: string, flags: { db?: string; dbTimeout: number }) => ctx.setCode(await (await commands()).tokenRevokeCommand(id, flags, ctx.io)));
}
