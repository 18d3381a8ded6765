// runs in: main
import { Objm, type ObjectStore } from "@nats-io/obj";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { EvalfleetError, ErrorCode, errorMessage } from "../errors.ts";
import { CASSETTE_BUCKET } from "./subjects.ts";

/**
 * The fleet's cassettes (`--record nats`, `--replay nats`) in the object store bucket
 * {@link CASSETTE_BUCKET}: the coordinator creates it for a recording run and checks it exists for
 * a replaying one; each worker process reads and writes the cassettes of its threads' cases
 * (worker/cassette/pool-cassette-store.ts asks the pool, which asks this). An object store, not a
 * KV bucket: a cassette of large answers can pass the server's 1 MiB payload limit, and the object
 * store chunks it.
 */

/** Creates the bucket when it is missing (a coordinator starting a `--record nats` run). */
export async function ensureCassetteBucket(js: JetStreamClient, jsm: JetStreamManager, replicas = 1): Promise<void> {
  if (await cassetteBucketExists(jsm)) return;
  await new Objm(js).create(CASSETTE_BUCKET, { description: "evalfleet cassettes: one object per case and trial, a folder per suite", replicas });
}

/** Whether the bucket exists (a `--replay nats` run without it has nothing to replay). */
export async function cassetteBucketExists(jsm: JetStreamManager): Promise<boolean> {
  try {
    await jsm.streams.info(`OBJ_${CASSETTE_BUCKET}`);
    return true;
  } catch {
    return false;
  }
}

/** A worker's view of the bucket: cassettes as text by object name (`<folder>/<file>`, `cassetteFolder` of shared/cassette/cassette.ts). */
export class BucketCassetteStore {
  readonly #js: JetStreamClient;
  #store: Promise<ObjectStore> | null = null;

  constructor(js: JetStreamClient) {
    this.#js = js;
  }

  #bucket(): Promise<ObjectStore> {
    const opening = (this.#store ??= new Objm(this.#js).open(CASSETTE_BUCKET));
    // A failed open (no bucket yet, the broker away) is tried again by the next call.
    opening.catch(() => void (this.#store === opening && (this.#store = null)));
    return opening;
  }

  /** The cassette's text, or null when the bucket holds none under `name`. Throws CASSETTE_STORE when the bucket cannot be read. */
  async get(name: string): Promise<string | null> {
    try {
      const bytes = await (await this.#bucket()).getBlob(name);
      return bytes === null ? null : new TextDecoder().decode(bytes);
    } catch (err) {
      throw new EvalfleetError(ErrorCode.CassetteStore, `cannot read the cassette ${name} from the ${CASSETTE_BUCKET} bucket: ${errorMessage(err)}`, { path: name });
    }
  }

  /** Writes (replaces) the cassette `name`. Throws CASSETTE_STORE when the bucket cannot be written. */
  async put(name: string, text: string): Promise<void> {
    try {
      await (await this.#bucket()).putBlob({ name }, new TextEncoder().encode(text));
    } catch (err) {
      throw new EvalfleetError(ErrorCode.CassetteStore, `cannot write the cassette ${name} to the ${CASSETTE_BUCKET} bucket: ${errorMessage(err)}`, { path: name });
    }
  }
}
