/**
 * What the documentation link check needs from a Markdown file: its links and the anchors its
 * headings get. Pure; no I/O (test/docs/links.test.ts reads the files).
 *
 * Anchors follow GitHub's rule (github-slugger): the heading's text, lowercased, with everything
 * but letters, marks, digits, connector punctuation (`_`), spaces and hyphens removed, spaces
 * turned into hyphens, and `-1`, `-2`, ... appended to repeats.
 */

/** A link found in a Markdown file. */
export interface MarkdownLink {
  /** 1-based line of the link. */
  line: number;
  /** The target as written: `docs/cli.md#flags`, `#exit-codes`, `https://...`. */
  target: string;
}

const FENCE = /^\s*(```|~~~)/;

/** The lines of a Markdown text that are outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (FENCE.test(text)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ line: i + 1, text });
  });
  return out;
}

/** Replaces inline code spans with neutral text, so a `[x](y)` shown as code is not a link. */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)[\s\S]*?\1/g, (span) => "c".repeat(span.length));
}

/** GitHub's anchor for a heading's Markdown text (before repeats are numbered). */
export function slugOf(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1") // a link shows its text
    .replace(/`([^`]*)`/g, "$1") // code shows its content
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor the file's headings get, repeats numbered as GitHub numbers them. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!m) continue;
    const base = slugOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every inline link `[text](target)` outside code, in order. Images count too. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text } of proseLines(markdown)) {
    for (const m of withoutCodeSpans(text).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line, target: m[1]! });
    }
  }
  return links;
}

/** Whether a link leaves the repository (a URL with a scheme). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}
