import { readFileSync } from "node:fs";
import type { Hono } from "hono";
import { packageFile } from "../../shared/runtime/package-files.ts";
import type { ViewerEnv } from "./access.ts";

/**
 * The viewer's pages: one HTML shell per page, with no data in it (every value comes from the
 * JSON API and is put on the page as text by viewer.js, never as markup), and the two assets it
 * loads, which ship in the package (no CDN: the viewer works offline). The Content-Security-Policy
 * (app.ts) allows scripts from this origin only, so no inline script runs even if markup got in.
 */

/** The pages, by the name viewer.js dispatches on. */
export type PageName = "runs" | "run" | "case" | "compare" | "flaky";

/** The HTML shell of a page. The page name is one of {@link PageName}: a constant, never input. */
export function pageShell(page: PageName): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>evalfleet</title>
<link rel="stylesheet" href="/assets/viewer.css">
<script src="/assets/viewer.js" defer></script>
</head>
<body>
<header><a class="brand" href="/">evalfleet</a><nav><a href="/">runs</a><a href="/flaky">flaky</a><a href="/compare">compare</a></nav><span id="live" class="live" hidden>live</span></header>
<main id="app" data-page="${page}"><p class="muted">loading...</p></main>
</body>
</html>
`;
}

/** The assets, read once when the app is made: from the sources in a checkout, from dist/ when installed. */
function loadAssets(): Record<string, { body: string; type: string }> {
  const read = (name: string) => readFileSync(packageFile(`coordinator/serve/assets/${name}`, `dist/coordinator/serve/assets/${name}`), "utf8");
  return {
    "viewer.js": { body: read("viewer.js"), type: "text/javascript; charset=utf-8" },
    "viewer.css": { body: read("viewer.css"), type: "text/css; charset=utf-8" },
  };
}

/** Registers the pages and assets on the app. */
export function addPageRoutes(app: Hono<ViewerEnv>): void {
  const assets = loadAssets();
  for (const [name, asset] of Object.entries(assets)) {
    app.get(`/assets/${name}`, (c) => {
      c.header("Cache-Control", "no-cache");
      return c.body(asset.body, 200, { "Content-Type": asset.type });
    });
  }
  const html = (page: PageName) => pageShell(page);
  app.get("/", (c) => c.html(html("runs")));
  app.get("/runs/:id", (c) => c.html(html("run")));
  app.get("/runs/:id/cases/:index", (c) => c.html(html("case")));
  app.get("/compare", (c) => c.html(html("compare")));
  app.get("/flaky", (c) => c.html(html("flaky")));
}
