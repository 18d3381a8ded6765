import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { importOptional, isMissingPackage } from "../../../shared/runtime/optional-package.ts";
import { ConfigError, ErrorCode } from "../../../shared/errors.ts";

/** A specifier TypeScript cannot check: the point is that nothing installs it. */
const ABSENT = ["evalfleet-test", "absent-sdk"].join("-");

describe("importOptional", () => {
  test("a package that is not installed: one line naming the package, what needs it and the command to install it", async () => {
    const err = await importOptional(ABSENT, "wrapSomething", () => import(ABSENT)).then(
      () => assert.fail("imported a package that does not exist"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ConfigError);
    assert.equal(err.code, ErrorCode.ConfigMissing);
    assert.equal(err.message, `wrapSomething needs the package "${ABSENT}", which is not installed: npm install ${ABSENT}`);
    assert.ok(!err.message.includes("\n"));
    assert.deepEqual(err.details, { field: "package", value: ABSENT });
  });

  test("a subpath of a missing package names the package", async () => {
    const err = await importOptional(ABSENT, "mcpToolkit", () => import(`${ABSENT}/client/index.js`)).catch((e: unknown) => e);
    assert.ok(err instanceof ConfigError, String(err));
    assert.match(err.message, new RegExp(`needs the package "${ABSENT}"`));
  });

  test("an installed package that fails to import for another reason (its own import missing) keeps its own error", async () => {
    // A package folder whose entry imports a package nobody installed.
    const root = mkdtempSync(join(tmpdir(), "evalfleet-optional-"));
    const pkg = join(root, "node_modules", "broken-sdk");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "broken-sdk", type: "module", exports: "./index.js" }));
    writeFileSync(join(pkg, "index.js"), `import "${ABSENT}";\nexport const x = 1;\n`);
    const entry = pathToFileURL(join(pkg, "index.js")).href;
    const err = await importOptional("broken-sdk", "x", () => import(entry)).catch((e: unknown) => e);
    assert.ok(!(err instanceof ConfigError), "the missing package is another one: the original error stays");
    assert.match(String((err as Error).message), new RegExp(ABSENT));
  });

  test("a module that loads is returned as it is", async () => {
    const mod = await importOptional("node:path", "x", () => import("node:path"));
    assert.equal(typeof mod.join, "function");
  });
});

describe("isMissingPackage", () => {
  test("matches Node's not-found errors for that package only", () => {
    const notFound = (message: string) => Object.assign(new Error(message), { code: "ERR_MODULE_NOT_FOUND" });
    assert.equal(isMissingPackage(notFound("Cannot find package 'pg' imported from /x/y.js"), "pg"), true);
    assert.equal(isMissingPackage(notFound("Cannot find package 'pg-types' imported from /x/y.js"), "pg"), false);
    assert.equal(isMissingPackage(notFound("Cannot find module '/x/node_modules/ai/dist/index.mjs' imported from /x/y.js"), "pg"), false);
    assert.equal(isMissingPackage(new Error("Cannot find package 'pg'"), "pg"), false, "not a not-found error code");
    assert.equal(isMissingPackage(null, "pg"), false);
  });
});
