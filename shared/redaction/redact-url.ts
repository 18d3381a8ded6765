// runs in: both
/**
 * Credentials a URL (or a form body) carries percent-encoded. The shapes of shapes.ts are matched
 * on text as written, and encoding breaks some of them: `Bearer%20...`, a webhook or database URL
 * passed as a query value (`?dsn=postgres%3A%2F%2Fu%3Apw%40db`) no longer has the shape's
 * separators. So each query value (or form field) is decoded, redacted, and, where that removed
 * something, written back encoded: `?dsn=[REDACTED]`. Pure; the redacting function is the caller's.
 */

/** `[` and `]` left readable in what is written back, as the rest of a cassette shows them. */
const encode = (s: string): string => encodeURIComponent(s).replace(/%5B/g, "[").replace(/%5D/g, "]");

/** `a=1&b=2` with each value decoded, passed to `redact`, and re-encoded where `redact` changed it. */
export function redactFormText(form: string, redact: (text: string) => string): string {
  if (!form.includes("%") && !form.includes("+")) return form;
  let changed = false;
  const parts = form.split("&").map((part) => {
    const eq = part.indexOf("=");
    if (eq < 0) return part;
    const raw = part.slice(eq + 1);
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw.replace(/\+/g, " "));
    } catch {
      return part; // Not valid percent-encoding: the caller's redaction of the text as written is all there is.
    }
    if (decoded === raw) return part;
    const clean = redact(decoded);
    if (clean === decoded) return part;
    changed = true;
    return `${part.slice(0, eq + 1)}${encode(clean)}`;
  });
  return changed ? parts.join("&") : form;
}

/** A URL with each query value redacted as {@link redactFormText} does; the rest as it is. */
export function redactUrlQuery(url: string, redact: (text: string) => string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const hash = url.indexOf("#", q);
  const query = hash < 0 ? url.slice(q + 1) : url.slice(q + 1, hash);
  const clean = redactFormText(query, redact);
  return clean === query ? url : `${url.slice(0, q + 1)}${clean}${hash < 0 ? "" : url.slice(hash)}`;
}

/** Whether a body reads as a form (`a=1&b=x%20y`): worth decoding field by field. */
export function looksLikeForm(body: string): boolean {
  return body.length < 1_000_000 && /^[^=&\s]+=[^&\s]*(?:&[^=&\s]+=[^&\s]*)*$/.test(body);
}
