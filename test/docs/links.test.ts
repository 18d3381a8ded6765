import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { ROOT } from "../support/paths.ts";
import { anchorsOf, isExternal, linksOf, slugOf } from "../support/markdown-links.ts";

/** The documentation a reader follows links through: the README, docs/, and the guides beside their code. */
function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => join(ROOT, "docs", f));
  return [join(ROOT, "README.md"), ...docs, join(ROOT, "deploy", "README.md"), join(ROOT, "bench", "README.md")];
}

/** Every broken relative link or anchor in `files`, one line each (`file:line: target: why`). */
function brokenLinks(files: string[], root = ROOT): { problems: string[]; checked: number } {
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string): Set<string> => {
    let set = anchors.get(file);
    if (!set) anchors.set(file, (set = anchorsOf(readFileSync(file, "utf8"))));
    return set;
  };
  const problems: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const { line, target } of linksOf(readFileSync(file, "utf8"))) {
      if (isExternal(target)) continue;
      checked++;
      const where = `${relative(root, file)}:${line}: ${target}`;
      const hash = target.indexOf("#");
      const path = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const to = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (to !== root && !to.startsWith(root + sep)) {
        problems.push(`${where}: points outside the repository`);
        continue;
      }
      if (!existsSync(to)) {
        problems.push(`${where}: no such file`);
        continue;
      }
      if (anchor === null) continue;
      if (statSync(to).isDirectory() || !to.endsWith(".md")) {
        problems.push(`${where}: an anchor into something that is not a Markdown file`);
      } else if (!anchorsIn(to).has(anchor)) {
        problems.push(`${where}: no heading '#${anchor}' in ${relative(root, to)}`);
      }
    }
  }
  return { problems, checked };
}

test("every relative link and anchor in the README, docs/, deploy/README.md and bench/README.md resolves", () => {
  const { problems, checked } = brokenLinks(docFiles());
  assert.deepEqual(problems, []);
  // The docs link to each other a lot; a checker that finds almost nothing has stopped reading them.
  assert.ok(checked > 100, `only ${checked} relative links found`);
});

test("anchors are GitHub's: punctuation dropped, spaces to hyphens, repeats numbered", () => {
  assert.equal(slugOf("Where: `--db URL`"), "where---db-url");
  assert.equal(slugOf("The standalone AgentAsJudgeEval"), "the-standalone-agentasjudgeeval");
  assert.equal(slugOf("`new Case({...})`"), "new-case");
  assert.equal(slugOf("Validation: every problem, before anything runs"), "validation-every-problem-before-anything-runs");
  assert.equal(slugOf("Running against OpenAI, Ollama or vLLM"), "running-against-openai-ollama-or-vllm");
  assert.equal(slugOf("snake_case and [a link](x.md)"), "snake_case-and-a-link");
  const anchors = anchorsOf("# Top\n## Flags\n```sh\n# not a heading\n```\n## Flags\n");
  assert.deepEqual([...anchors], ["top", "flags", "flags-1"]);
});

test("links in code are not links; a broken one outside code is found", () => {
  const md = "See [cli](cli.md#flags) and `[not](a-link.md)`.\n```\n[also not](x.md)\n```\n[ext](https://example.com) [img](./a.png \"t\")";
  assert.deepEqual(
    linksOf(md).map((l) => `${l.line}:${l.target}`),
    ["1:cli.md#flags", "5:https://example.com", "5:./a.png"],
  );
  assert.equal(isExternal("https://example.com"), true);
  assert.equal(isExternal("../deploy/README.md"), false);
});

test("the check reports a missing file, a missing anchor and a link out of the repository", () => {
  const root = mkdtempSync(join(tmpdir(), "evalfleet-links-"));
  try {
    writeFileSync(join(root, "a.md"), "# A\n## Flags\n[ok](b.md#b) [ok](#flags) [gone](c.md) [bad](b.md#nope) [out](../x.md) [code](b.md#b)\n");
    writeFileSync(join(root, "b.md"), "# B\n");
    const { problems, checked } = brokenLinks([join(root, "a.md")], root);
    assert.equal(checked, 6);
    assert.deepEqual(problems, [
      "a.md:3: c.md: no such file",
      "a.md:3: b.md#nope: no heading '#nope' in b.md",
      "a.md:3: ../x.md: points outside the repository",
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
