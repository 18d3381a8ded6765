// runs in: both
import { redactText } from "./redaction/secrets.ts";

/**
 * Text that reaches a terminal. Every model- or user-derived string a command prints goes through
 * {@link safeText}, so an output can neither restyle or hijack the terminal nor show a secret.
 */

/**
 * Removes secrets (shared/redaction/secrets.ts), then replaces control characters (ANSI escapes included)
 * with `?`; keeps newlines and tabs. Cut a text after this, never before: a cut through a secret
 * would leave a piece of it that no redactor recognises.
 */
export function safeText(text: unknown): string {
  return redactText(String(text ?? "")).replace(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g, "?");
}
