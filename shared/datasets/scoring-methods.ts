// runs in: both
/**
 * The scoring methods of an `expected_output` check, as a vocabulary: the choices of
 * `--scoring-method`, of a dataset row's `scoring_method` and of a case's `outputScoring`. Not a
 * setting: what each method does is in expected-output-methods.ts.
 */

/** The scoring methods of `expected_output`, in the order the documentation lists them. */
export const SCORING_METHODS = ["exact", "contains", "regex", "json", "numeric", "judge"] as const;
/** One of {@link SCORING_METHODS}; see shared/datasets/expected-output-methods.ts for what each does. */
export type ScoringMethod = (typeof SCORING_METHODS)[number];
/**
 * The method of an expected output that names none (no run, row, dataset or case says): an exact
 * comparison, as Exulu's checks do. Part of what `expected_output` means, not a run setting (the
 * run's `scoringMethod` defaults to none: each check's own).
 */
export const DEFAULT_SCORING_METHOD: ScoringMethod = "exact";
