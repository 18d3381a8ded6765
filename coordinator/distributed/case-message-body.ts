import { NATS_PROTOCOL } from "../../shared/wire/nats.ts";

/**
 * The body of a case message (shared/wire/nats.ts `CaseMessageSchema`), written as text: what
 * every message of a run shares (the protocol, the run, the fingerprint, the trace context) is
 * encoded once per run, and only a case's own fields per case. The same JSON as `JSON.stringify`
 * of the message, fields in the schema's order (test/coordinator/distributed/case-message-body.test.ts).
 */
export class CaseMessageBody {
  readonly #head: string;
  readonly #tail: string;
  readonly #trace: string;

  /** `traceparent`: the publish span's W3C traceparent, or null when tracing is off. */
  constructor(runId: string, fingerprint: string, traceparent: string | null) {
    this.#head = `{"v":${NATS_PROTOCOL},"runId":${JSON.stringify(runId)},"index":`;
    this.#tail = `,"fingerprint":${JSON.stringify(fingerprint)},"token":`;
    this.#trace = traceparent === null ? "}" : `,"traceparent":${JSON.stringify(traceparent)}}`;
  }

  /** The message of trial `trial` of the case at `index` named `name`, with its delivery token. */
  encode(index: number, trial: number, name: string, token: string): string {
    return `${this.#head}${index},"trial":${trial},"name":${JSON.stringify(name)}${this.#tail}${JSON.stringify(token)}${this.#trace}`;
  }
}
