import { after, before } from "node:test";
import { startNatsServer, type NatsServerOptions, type TestNatsServer } from "./nats-server.ts";
import { killLeftovers } from "./processes.ts";

/** A private nats-server for the enclosing file or `describe`, ready once its `before` has run. */
export interface SharedNatsServer {
  /** `nats://127.0.0.1:<port>` of the running server. */
  readonly url: string;
}

/**
 * Starts a nats-server on free ports before the tests of the enclosing scope (file or
 * `describe`), and after them kills the processes they left and stops the server.
 */
export function useNatsServer(options: NatsServerOptions = {}): SharedNatsServer {
  let server: TestNatsServer | undefined;
  before(async () => {
    server = await startNatsServer(options);
  });
  after(async () => {
    await killLeftovers();
    await server?.stop();
  });
  return {
    get url(): string {
      if (!server) throw new Error("useNatsServer: the server is not started yet (use it inside a test or a later hook)");
      return server.url;
    },
  };
}
