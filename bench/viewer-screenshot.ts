/**
 * Regenerates docs/viewer.png, the screenshot of the live viewer in README.md and docs/viewer.md:
 * a small demo store (two recorded runs of a support bot's suite through `runCases`, the second
 * with a few failures and an error), the viewer on a free port of this process (`startViewer`, as
 * `evalfleet serve` runs it), and its run page in headless Chromium (playwright-core driving
 * /usr/bin/chromium, or $EVALFLEET_CHROMIUM), 1200 x 820 CSS pixels. Deterministic data; the
 * times in it are the run's own. Run: `node --import tsx bench/viewer-screenshot.ts [OUT.png]`.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Case, runCases, type Agent } from "../index.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";
import { startViewer } from "../coordinator/serve/server.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const OUT = process.argv[2] ?? join(ROOT, "docs", "viewer.png");
const CHROMIUM = process.env.EVALFLEET_CHROMIUM ?? "/usr/bin/chromium";

/** The demo's questions: [case name, question, the answer the bot gives, what the check expects]. */
const QUESTIONS: Array<[string, string, string, string]> = [
  ["refund_within_30_days", "Can I get a refund 20 days after delivery?", "Yes: refunds are accepted within 30 days of delivery.", "30 days"],
  ["refund_after_60_days", "Can I return shoes I bought two months ago?", "Yes, any time.", "not eligible"],
  ["shipping_to_iceland", "Do you ship to Reykjavik?", "We ship to Iceland in 5-7 business days.", "Iceland"],
  ["track_order", "Where is my order 4417?", "Order 4417 left the warehouse yesterday; tracking: TRK-4417.", "TRK-4417"],
  ["change_address", "Can I change the delivery address?", "Yes, until the parcel ships: open the order and edit the address.", "until the parcel ships"],
  ["cancel_subscription", "How do I cancel my subscription?", "Go to Account > Subscription and press Cancel.", "Cancel"],
  ["invoice_copy", "I need a copy of my invoice.", "Your invoices are under Account > Orders.", "Account > Orders"],
  ["warranty_claim", "My headphones broke after 8 months.", "They are under the 1-year warranty: we will replace them.", "warranty"],
  ["gift_card_balance", "How much is left on my gift card?", "I cannot look up card balances.", "balance"],
  ["password_reset", "I forgot my password.", "Use 'Forgot password' on the sign-in page.", "Forgot password"],
  ["price_match", "Do you match a competitor's price?", "We match prices of authorised sellers within 14 days.", "14 days"],
  ["bulk_discount", "Is there a discount for 50 units?", "Orders of 25 units or more get 10% off.", "10%"],
  ["damaged_item", "The mug arrived broken.", "Sorry! Send a photo and we ship a new one at no cost.", "photo"],
  ["loyalty_points", "When do loyalty points expire?", "Points never expire.", "12 months"],
  ["store_hours", "When is the Oslo store open?", "Mon-Sat 10:00-20:00, closed on Sundays.", "10:00"],
  ["exchange_size", "Can I exchange a shirt for a larger size?", "Yes, exchanges are free within 30 days.", "free"],
  ["payment_methods", "Do you take PayPal?", "We accept cards, PayPal and Klarna.", "PayPal"],
  ["order_split", "Why did my order come in two boxes?", "Items ship from the warehouse that has them.", "warehouse"],
  ["newsletter_unsubscribe", "Stop sending me emails.", "You are unsubscribed from the newsletter.", "unsubscribed"],
  ["preorder_date", "When does the X2 preorder ship?", "The X2 ships on 12 March.", "12 March"],
  ["student_discount", "Is there a student discount?", "Students get 15% off with a verified account.", "15%"],
  ["gdpr_export", "Send me all the data you hold on me.", "Request an export under Account > Privacy.", "Privacy"],
];

/** Answers the demo's questions from the table; one case's model call fails, as a provider's can. */
function supportBot(broken: ReadonlySet<string>): Agent {
  return {
    id: "support-bot",
    run: async (input) => {
      const text = String(input);
      const row = QUESTIONS.find(([, q]) => q === text);
      await new Promise((r) => setTimeout(r, 20 + (text.length % 7) * 15));
      if (row && broken.has(row[0])) throw new Error("the model provider answered 503 Service Unavailable");
      return { content: row?.[2] ?? "I do not know.", tools: [{ toolName: "search_help_center", toolArgs: { query: text.slice(0, 40) }, result: "3 articles" }] };
    },
  };
}

/** Passes an answer that states the policy's words; its reason says which were missing (the viewer shows it). */
const statesPolicy = {
  score(run: { content?: unknown }, expected: unknown) {
    const passed = String(run.content).includes(String(expected));
    return { value: passed ? 1 : 0, passed, reason: passed ? "states the policy" : `does not state the policy: "${String(expected)}" is missing` };
  },
};

function cases(broken: ReadonlySet<string>, wrong: ReadonlySet<string>): Case[] {
  return QUESTIONS.map(
    ([name, question, , expected]) =>
      new Case({ name, agent: supportBot(broken), input: question, tags: [name.split("_")[0]!], scorer: statesPolicy, expected: wrong.has(name) ? `${expected} (v2 policy)` : expected }),
  );
}

const dir = mkdtempSync(join(tmpdir(), "evalfleet-screenshot-"));
const store = await ResultsStore.open(`sqlite:${join(dir, "results.db")}`);
try {
  // Yesterday's run passed but for two; today's has a third failure and an error.
  await runCases(cases(new Set(), new Set()), { db: store, suiteName: "support-bot", concurrency: 4, runId: "nightly-2026-12-03" });
  const today = await runCases(cases(new Set(["gdpr_export"]), new Set(["price_match"])), { db: store, suiteName: "support-bot", concurrency: 4, runId: "nightly-2026-12-04" });
  const viewer = await startViewer({ store, host: "127.0.0.1", port: 0, auth: false });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 820 }, deviceScaleFactor: 1 });
    await page.goto(`${viewer.url}/runs/${today.runId}`, { waitUntil: "load" });
    await page.locator("#cases-body tr").first().waitFor();
    await page.locator("#causes details").waitFor();
    await page.screenshot({ path: OUT, type: "png" });
  } finally {
    await browser.close();
    await viewer.close();
  }
  console.log(`wrote ${OUT} (${Math.round(statSync(OUT).size / 1024)} KB)`);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
