// runs in: main
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";

/**
 * The JetStream API error codes evalfleet branches on (the server's `err_code`, which the client
 * exposes as `JetStreamApiError.code`), named, with one predicate per question asked of them. No
 * other file compares an error with a bare number.
 */

/** JetStream `err_code` values, named after the server's own error names. */
export const JsApiCode = {
  /** 10014: the consumer does not exist (a run's consumer is deleted when the run is over). */
  ConsumerNotFound: JetStreamApiCodes.ConsumerNotFound,
  /** 10059: the stream does not exist (yet). */
  StreamNotFound: JetStreamApiCodes.StreamNotFound,
  /** 10071: an expected-last-sequence check failed: the subject or KV key already holds a message. */
  StreamWrongLastSequence: JetStreamApiCodes.StreamWrongLastSequence,
  /** 10164: the same as 10071, as newer servers say it when the current sequence is not reported. */
  StreamWrongLastSequenceUnknown: JetStreamApiCodes.StreamWrongLastSequenceUnknown,
} as const;

/** One of the {@link JsApiCode} values. */
export type JsApiCode = (typeof JsApiCode)[keyof typeof JsApiCode];

/** The JetStream `err_code` of a thrown value, or null when it is not a JetStream API error. */
export function jsApiCodeOf(err: unknown): number | null {
  return err instanceof JetStreamApiError ? err.code : null;
}

/** Whether the server said the consumer does not exist (10014). */
export function isConsumerNotFound(err: unknown): boolean {
  return jsApiCodeOf(err) === JsApiCode.ConsumerNotFound;
}

/** Whether the server said the stream does not exist (10059). */
export function isStreamNotFound(err: unknown): boolean {
  return jsApiCodeOf(err) === JsApiCode.StreamNotFound;
}

/**
 * Whether a create-only write (a publish with an expected last subject sequence of 0, a KV
 * `create`) was refused because the subject or key is already taken (10071 or 10164).
 */
export function isAlreadyTaken(err: unknown): boolean {
  const code = jsApiCodeOf(err);
  return code === JsApiCode.StreamWrongLastSequence || code === JsApiCode.StreamWrongLastSequenceUnknown;
}
