// Percent-encoded credentials in a URL's query and in a form body (shared/redaction/redact-url.ts):
// decoded, redacted and written back, the rest of the URL kept as it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { looksLikeForm, redactFormText, redactUrlQuery } from "../../../shared/redaction/redact-url.ts";
import { Redactor } from "../../../shared/redaction/redact.ts";
import { shapedTokens } from "../../support/token-shapes.ts";

const redactor = new Redactor([]);
const redact = (s: string): string => redactor.text(s);

test("every single-line shape, percent-encoded as a query value, is redacted; its neighbours are kept", () => {
  for (const t of shapedTokens().filter((x) => !x.token.includes("\n"))) {
    const url = `https://api.example/v1/items?page=2&t=${encodeURIComponent(t.token)}&q=hello%20world#top`;
    const clean = redactUrlQuery(redact(url), redact);
    assert.ok(!clean.includes(encodeURIComponent(t.secret)) && !clean.includes(t.secret), `${t.label}: ${clean}`);
    assert.ok(clean.startsWith("https://api.example/v1/items?page=2&t="), clean);
    assert.ok(clean.endsWith("&q=hello%20world#top"), `the other values and the fragment are kept: ${clean}`);
  }
});

test("a URL without credentials, or without a query, comes back as it was", () => {
  for (const url of ["https://a.example/x", "https://a.example/x?q=caf%C3%A9&n=1", "https://a.example/x?bad=%E0%A4%A", "https://a.example/x?flag&y=1"]) {
    assert.equal(redactUrlQuery(url, redact), url);
  }
});

test("a form body field by field; '+' is a space", () => {
  const bearer = shapedTokens().find((t) => t.label === "a bearer token")!;
  const form = `grant=x&auth=${encodeURIComponent(bearer.token).replace(/%20/g, "+")}&n=1`;
  assert.ok(looksLikeForm(form));
  assert.equal(redactFormText(form, redact), `grant=x&auth=${encodeURIComponent(redact(bearer.token)).replace(/%5B/g, "[").replace(/%5D/g, "]")}&n=1`);
  assert.ok(!looksLikeForm('{"a": 1}'));
  assert.ok(!looksLikeForm("plain text, not a form"));
});
