import { ManifestEnvelopeSchema, NATS_PROTOCOL, RunManifestSchema, tryParseJson, type RunManifest } from "../shared/wire/nats.ts";
import { versionMismatch } from "../shared/wire/protocol.ts";

/**
 * A run's manifest as a worker reads it from the runs bucket: the run to serve, a run of another
 * protocol version (refused the way a run of another suite is, naming both versions), or a
 * malformed record. No I/O.
 */

/** What {@link checkManifest} made of a manifest. */
export type ManifestCheck =
  | { kind: "ok"; manifest: RunManifest }
  /**
   * Written by a coordinator speaking another protocol version: this worker cannot serve it.
   * `fingerprint` is the run's suite when the record still says it (null when it does not).
   */
  | { kind: "other-version"; why: string; fingerprint: string | null }
  | { kind: "malformed"; why: string };

/** Reads the manifest of run `runId` from its record's text. */
export function checkManifest(runId: string, text: string): ManifestCheck {
  const raw = tryParseJson(text);
  const parsed = RunManifestSchema.safeParse(raw);
  if (parsed.success) return { kind: "ok", manifest: parsed.data };
  const mismatch = versionMismatch(raw, { ours: NATS_PROTOCOL, what: `run ${runId}`, who: "worker" });
  if (mismatch !== null) {
    const envelope = ManifestEnvelopeSchema.safeParse(raw);
    return { kind: "other-version", why: mismatch, fingerprint: envelope.success ? (envelope.data.suite?.fingerprint ?? null) : null };
  }
  const issue = parsed.error.issues[0];
  return { kind: "malformed", why: `run ${runId} has a malformed manifest: ${issue?.path.join(".") || "manifest"}: ${issue?.message}` };
}
