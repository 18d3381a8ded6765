// runs in: both
/**
 * The levels statistics quotes when nobody asks for others: 95% intervals, a 5% false-alarm rate.
 * They are the parameter defaults of the pure functions of shared/stats/ (a Wilson interval with
 * no level is a 95% one), not run settings: a run's `--confidence` and `--regression-alpha` are
 * compiled by shared/run-settings.ts (whose defaults, in shared/defaults.ts, are these
 * conventions) and handed to these functions by every caller that has them.
 */

/** Two-sided confidence of an interval asked for without one: 0.95. */
export const CONVENTIONAL_CONFIDENCE = 0.95;
/** False-alarm rate of a test asked for without one: 0.05. */
export const CONVENTIONAL_ALPHA = 0.05;
