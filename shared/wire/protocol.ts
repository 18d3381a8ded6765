// runs in: both
/**
 * Protocol versions. Every message of the NATS protocol carries its version in `v`, every thread
 * task in `protocol`. A process meeting a message of another version refuses it with one sentence
 * naming both versions, the way a suite mismatch names both fingerprints. Pure; no I/O.
 */

/** The version a message says it speaks (its `field`: `v` on NATS, `protocol` between threads), or undefined when it says none. */
export function versionOf(message: unknown, field = "v"): unknown {
  return message !== null && typeof message === "object" ? (message as Record<string, unknown>)[field] : undefined;
}

/** How to name the two sides of a version check. */
export interface VersionCheck {
  /** The version this process speaks. */
  ours: number;
  /** The message, as in `case message speaks ...`. */
  what: string;
  /** This process, as in `this worker speaks ...`. */
  who: string;
  /** The protocol's name, as in `speaks <protocol> version 3`. Default `protocol`. */
  protocol?: string;
  /** Where the message keeps its version. Default `v`. */
  field?: string;
}

/**
 * `<what> speaks <protocol> version <theirs>; this <who> speaks <ours>` when `message` says it
 * speaks another version; null when it speaks ours, or says nothing (then its schema says what is wrong).
 */
export function versionMismatch(message: unknown, check: VersionCheck): string | null {
  const theirs = versionOf(message, check.field);
  if (theirs === undefined || theirs === check.ours) return null;
  return `${check.what} speaks ${check.protocol ?? "protocol"} version ${JSON.stringify(theirs)}; this ${check.who} speaks ${check.ours}`;
}
