import { resultSubjectParts } from "../../shared/broker/subjects.ts";
import { resultSeal, type RunTokens } from "../../shared/wire/case-token.ts";
import { NATS_PROTOCOL, ResultMessageSchema, tryParseJson, type ResultMessage } from "../../shared/wire/nats.ts";
import { versionMismatch } from "../../shared/wire/protocol.ts";
import { plainResultMessage } from "../../shared/wire/result-message-check.ts";

/**
 * Whether a message of the results stream proves its delivery (shared/wire/case-token.ts), for the
 * coordinator and `coordinator status`. Pure; no I/O. Whether its worker is present in the run is
 * asked separately (the presence records are on the broker).
 *
 * - A message whose subject does not carry the seal of its case's token was published by someone
 *   who never received the case: it is dropped, and the case waits for its real result, which it
 *   cannot hold back (the real result's subject is another one).
 * - A message on the sealed subject came from a holder of the token, and it holds the case's one
 *   create-only result subject, so no other result can follow: when it is unusable (malformed,
 *   another protocol version, another case, not echoing the token) the problem is recorded as the
 *   case's result rather than waited on forever.
 */

/** Why a message was dropped without touching its case. */
export type DropKind = "not-a-case" | "no-token" | "wrong-token" | "version";

/** What {@link checkResultMessage} made of a message. */
export type ResultCheck =
  | { kind: "ok"; message: ResultMessage }
  /** Dropped: it does not prove the delivery of a case of this run. */
  | { kind: "drop"; drop: DropKind; why: string }
  /** On the trial's sealed subject but unusable: `why` is recorded as the trial's result. */
  | { kind: "spoiled"; index: number; trial: number; why: string; version: boolean };

/** What a result message is checked against. */
export interface ResultCheckContext {
  runId: string;
  tokens: RunTokens;
  /**
   * The name of the selected case at a declaration index; null when it is selected but its name is
   * not known here (`coordinator status` does not load the suite); undefined when it is not selected.
   */
  nameAt(index: number): string | null | undefined;
}

/** One decoder for every message. */
const utf8 = new TextDecoder();

/** Checks one message of the results stream; never throws. */
export function checkResultMessage(data: Uint8Array, subject: string, context: ResultCheckContext): ResultCheck {
  const parts = resultSubjectParts(subject);
  const name = parts ? context.nameAt(parts.index) : undefined;
  if (!parts || name === undefined) return { kind: "drop", drop: "not-a-case", why: "its subject names no case of this run" };
  const raw = tryParseJson(utf8.decode(data));
  const trial = parts.trial;
  // The token once per message (an HMAC): its seal and the echo below are both checked against it.
  const token = context.tokens.token(parts.index, trial);
  if (parts.seal !== resultSeal(token)) {
    // Said as a version mismatch when it is one: the likelier cause, and the clearer line.
    const mismatch = versionMismatch(raw, { ours: NATS_PROTOCOL, what: "result message", who: "coordinator" });
    if (mismatch !== null) return { kind: "drop", drop: "version", why: mismatch };
    if (parts.seal === null) return { kind: "drop", drop: "no-token", why: `case ${parts.index}${trialLabel(trial)}: it carries no delivery token` };
    return { kind: "drop", drop: "wrong-token", why: `case ${parts.index}${trialLabel(trial)}: its delivery token is not the case's` };
  }

  const index = parts.index;
  // The common shape in plain code, anything else through the schema (result-message-check.ts).
  const plain = plainResultMessage(raw);
  const parsed = plain !== null ? { success: true as const, data: plain } : ResultMessageSchema.safeParse(raw);
  if (!parsed.success) {
    const mismatch = versionMismatch(raw, { ours: NATS_PROTOCOL, what: "result message", who: "coordinator" });
    if (mismatch !== null) return { kind: "spoiled", index, trial, why: mismatch, version: true };
    const issue = parsed.error.issues[0];
    return { kind: "spoiled", index, trial, why: `malformed result message: ${issue?.path.join(".") || "message"}: ${issue?.message}`, version: false };
  }
  const m = parsed.data;
  if (m.runId !== context.runId || m.index !== index || m.trial !== trial || (name !== null && m.name !== name)) {
    return { kind: "spoiled", index, trial, why: `result message for run '${m.runId}', case ${m.index}${trialLabel(m.trial)} '${m.name}' on the subject of case ${index}${trialLabel(trial)}`, version: false };
  }
  if (m.token !== token) return { kind: "spoiled", index, trial, why: "result message does not echo its case's delivery token", version: false };
  return { kind: "ok", message: m };
}

/** ` trial N` past trial 1, so that a run without repeats reads as before. */
function trialLabel(trial: number): string {
  return trial === 1 ? "" : ` trial ${trial}`;
}
