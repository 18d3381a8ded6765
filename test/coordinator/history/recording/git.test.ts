// The git commit and branch a run records, from the CI's environment (coordinator/history/recording/git.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { gitFromEnvironment } from "../../../../coordinator/history/recording/git.ts";

describe("gitFromEnvironment", () => {
  test("git commit and branch from the CI's environment; evalfleet's own variables win", () => {
    assert.deepEqual(gitFromEnvironment({ GITHUB_SHA: "abc", GITHUB_REF_NAME: "main" }), { commit: "abc", branch: "main" });
    assert.deepEqual(gitFromEnvironment({ GITHUB_SHA: "abc", GITHUB_HEAD_REF: "feature", GITHUB_REF_NAME: "12/merge" }), { commit: "abc", branch: "feature" });
    assert.deepEqual(gitFromEnvironment({ CI_COMMIT_SHA: "def", CI_COMMIT_REF_NAME: "dev" }), { commit: "def", branch: "dev" });
    assert.deepEqual(gitFromEnvironment({ GIT_COMMIT: "123", GIT_BRANCH: "origin/release" }), { commit: "123", branch: "release" });
    assert.deepEqual(gitFromEnvironment({ EVALFLEET_GIT_BRANCH: "nightly", GITHUB_REF_NAME: "main", GITHUB_SHA: "abc" }), { commit: "abc", branch: "nightly" });
    assert.deepEqual(gitFromEnvironment({}), { commit: null, branch: null });
  });
});
