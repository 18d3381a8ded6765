// runs in: both
import type { LimitSpec } from "./limit-spec.ts";

/**
 * One key of the provider limiter (limiter-core.ts): its limits (configured and learnt), its
 * buckets, its adaptive rate and pace, and its counters. The arithmetic of one key; the core
 * drives it. Pure: time is passed in (epoch ms).
 */

/** The pace kept below a limit, so timing jitter between processes and the provider never crosses it. */
export const PACE = 0.97;
/**
 * The smallest bucket: one request and half an interval's carry, so a grant that comes a little
 * late (a busy event loop) does not lose its share of the rate; it never allows two at once.
 */
export const MIN_CAPACITY = 1.5;
/** The longest pause a Retry-After imposes on a key, ms (a longer one is probed again after it). */
export const MAX_PAUSE_MS = 30_000;
/** Requests of slack kept below a short window's limit at first (see `carefulPace`). */
export const SLACK_REQUESTS = 2;
/** Timing slack kept below a window's limit at first, ms (see `carefulPace`). */
export const SLACK_MS = 200;
/** After a 429, the highest pace the key climbs back to is lowered by this much (a fraction of the limit). */
export const PACE_CAP_STEP = 0.02;
/** Each second without a 429, that highest pace creeps back up by this much, towards {@link PACE}. */
export const PACE_CAP_RECOVERY = 0.0002;
/** A key without a known limit starts at this many requests per second and doubles each second without a refusal. */
export const INITIAL_UNKNOWN_RPS = 4;
/** The lowest rate AIMD goes to, requests per second. */
export const MIN_RPS = 0.05;
/** After a decrease, no other decrease for this long (the 429s of one burst count once), ms. */
export const DECREASE_COOLDOWN_MS = 1000;
/** Increases happen at most this often, ms. */
export const INCREASE_INTERVAL_MS = 1000;
/** A configured key's rate after a 429: this fraction of what it was. */
export const CONFIGURED_DECREASE = 0.85;
/** A learning key's rate after a 429. */
export const LEARNING_DECREASE = 0.5;
/** A configured key climbs back by this fraction of its ceiling per second without a refusal. */
export const CONFIGURED_INCREASE = 0.1;
/**
 * A minute, in ms: the window a provider's per-minute limits (`rpm`, `tpm`, a header's
 * `x-ratelimit-limit-*`) are counted in until a reset time shows a shorter one, and the longest
 * window a reset time can teach. A fact of the providers' limits, not a setting.
 */
export const MINUTE_WINDOW_MS = 60_000;

export interface Waiter {
  id: number;
  tokens: number;
}

export class KeyState {
  readonly key: string;
  spec: LimitSpec;
  /** Adaptive request rate, per ms (Infinity: not limited). */
  rate: number;
  /** Adaptive factor on the token rate (0-1]. */
  tokenFactor = 1;
  /** Doubling phase of a key without a known limit. */
  slowStart: boolean;
  reqLevel: number;
  tokLevel: number;
  last: number;
  pausedUntil = 0;
  lastDecrease = -Infinity;
  lastIncrease: number;
  inFlight = 0;
  readonly queue: Waiter[] = [];
  learntRequests: number | null = null;
  learntTokens: number | null = null;
  /** Whether the provider has answered a request of the key yet. */
  answered = false;
  /** Longest reset seen, ms: the window a header limit covers; null until one is seen (see {@link windowLength}). */
  windowMs: number | null = null;
  /** The adaptive pace (fraction of the limit), or null before the first climb: see {@link pace}. */
  adaptivePace: number | null = null;
  /** The highest pace the key climbs to: {@link PACE}, lowered at each 429 (see {@link PACE_CAP_STEP}). */
  paceCap = PACE;
  admitted = 0;
  rateLimited = 0;
  failed = 0;
  tokens = 0;

  constructor(key: string, spec: LimitSpec, now: number) {
    this.key = key;
    this.spec = spec;
    this.last = now;
    this.lastIncrease = now;
    const ceiling = this.requestCeiling();
    this.slowStart = ceiling === Infinity;
    this.rate = ceiling === Infinity ? INITIAL_UNKNOWN_RPS / 1000 : ceiling;
    // A fresh bucket holds one request, not a second's share: no burst into a limit at start.
    this.reqLevel = 1;
    this.tokLevel = Math.min(this.tokenCapacity(), this.tokenRate() === Infinity ? Infinity : this.tokenRate() * 1000);
  }

  /** The window the key's limits are counted in, ms: the one its resets taught, else {@link MINUTE_WINDOW_MS} (no reset seen yet). */
  windowLength(): number {
    return this.windowMs === null ? MINUTE_WINDOW_MS : this.windowMs;
  }

  /**
   * The request limit per window, or null when unknown: the configured per-minute limit and the
   * one the provider's headers state, whichever is lower. A provider that says it admits less than
   * configured (a lower tier, a key shared with other clients) is believed; one that says more does
   * not raise a configured limit.
   */
  limitPerWindow(): { limit: number; windowMs: number } | null {
    const windowMs = this.windowLength();
    const configured = this.spec.rpm !== undefined ? (this.spec.rpm * windowMs) / 60_000 : Infinity;
    const limit = Math.min(configured, this.learntRequests ?? Infinity);
    return limit === Infinity ? null : { limit, windowMs };
  }

  /**
   * The careful pace a key starts at: {@link PACE}, or less when the window is short or holds few
   * requests, so that timing jitter of {@link SLACK_MS} or {@link SLACK_REQUESTS} requests cannot
   * cross the limit (60 per 6 s: 0.967; 10 per second: 0.8; 4 per second: 0.5). Also the floor
   * the adaptive pace never goes under.
   */
  carefulPace(): number {
    const l = this.limitPerWindow();
    if (!l) return PACE;
    return Math.max(0.5, Math.min(PACE, 1 - Math.max(SLACK_REQUESTS / l.limit, SLACK_MS / l.windowMs)));
  }

  /**
   * The fraction of the limit the key is paced at now: it starts at {@link carefulPace}, climbs
   * half the way to {@link paceCap} (at most {@link PACE}) each second the provider answers
   * without a 429, and falls half the way back to the careful pace at a 429 (which also lowers
   * the cap). A short window's fixed slack capped a 4-per-second limit at half of it; the real
   * jitter of the path is learnt instead.
   */
  pace(): number {
    const floor = this.carefulPace();
    return Math.max(floor, Math.min(this.paceCap, PACE, this.adaptivePace ?? floor));
  }

  /** A second without a 429: the pace climbs half the way to its cap; a rate that was at the old ceiling moves with it. */
  climbPace(): void {
    if (!this.limitPerWindow()) return;
    const before = this.requestCeiling();
    const p = this.pace();
    this.adaptivePace = p + (Math.min(this.paceCap, PACE) - p) / 2;
    this.paceCap = Math.min(PACE, this.paceCap + PACE_CAP_RECOVERY);
    if (this.rate >= before) this.rate = this.requestCeiling();
  }

  /** A 429: the cap goes under the pace that was refused, the pace half the way back to careful. */
  backOffPace(): void {
    if (!this.limitPerWindow()) return;
    const floor = this.carefulPace();
    const p = this.pace();
    this.paceCap = Math.max(floor, Math.min(this.paceCap, p) - PACE_CAP_STEP);
    this.adaptivePace = Math.max(floor, p - (p - floor) / 2);
    this.rate = Math.min(this.rate, this.requestCeiling());
  }

  /** The paced ceiling of the request rate, per ms: configured, else learnt, else Infinity. */
  requestCeiling(): number {
    const l = this.limitPerWindow();
    return l ? (l.limit * this.pace()) / l.windowMs : Infinity;
  }

  /** The token rate, per ms (Infinity: not limited). */
  tokenRate(): number {
    // As for requests: the configured limit and the stated one, whichever is lower.
    const configured = this.spec.tpm !== undefined ? this.spec.tpm / 60_000 : Infinity;
    const learnt = this.learntTokens !== null ? this.learntTokens / this.windowLength() : Infinity;
    const rate = Math.min(configured, learnt);
    return rate === Infinity ? Infinity : rate * PACE * this.tokenFactor;
  }

  /**
   * At most one second's share, and at most half the slack the pace leaves in the provider's
   * window (a burst plus the paced rate must still fit in any window); at least one request.
   */
  requestCapacity(): number {
    if (this.rate === Infinity) return Infinity;
    // Until the provider has answered once (its headers say its window), no burst at all.
    if (!this.answered) return 1;
    const l = this.limitPerWindow();
    const slack = l ? (l.limit * (1 - this.pace())) / 2 : Infinity;
    return Math.max(MIN_CAPACITY, Math.min(this.rate * 1000, slack));
  }

  tokenCapacity(): number {
    const r = this.tokenRate();
    return r === Infinity ? Infinity : Math.max(1, r * 1000);
  }

  refill(now: number): void {
    const dt = Math.max(0, now - this.last);
    this.last = now;
    if (this.rate !== Infinity) this.reqLevel = Math.min(this.requestCapacity(), this.reqLevel + this.rate * dt);
    else this.reqLevel = Infinity;
    const tr = this.tokenRate();
    if (tr !== Infinity) this.tokLevel = Math.min(this.tokenCapacity(), this.tokLevel + tr * dt);
    else this.tokLevel = Infinity;
  }

  concurrency(): number {
    return this.spec.concurrency ?? Infinity;
  }

  /** Whether the head of the queue can be admitted now (after refill). */
  canAdmit(w: Waiter, now: number): boolean {
    if (now < this.pausedUntil) return false;
    if (this.inFlight >= this.concurrency()) return false;
    if (this.reqLevel < 1) return false;
    // A request larger than the bucket waits for a full bucket, then goes into debt.
    if (this.tokLevel < Math.min(w.tokens, this.tokenCapacity())) return false;
    return true;
  }

  /** When the head could be admitted (epoch ms), or null when only a release can make room. */
  readyAt(w: Waiter, now: number): number | null {
    if (this.inFlight >= this.concurrency()) return null;
    let at = Math.max(now, this.pausedUntil);
    if (this.reqLevel < 1 && this.rate !== Infinity) at = Math.max(at, now + (1 - this.reqLevel) / this.rate);
    const tr = this.tokenRate();
    const need = Math.min(w.tokens, this.tokenCapacity());
    if (this.tokLevel < need && tr !== Infinity) at = Math.max(at, now + (need - this.tokLevel) / tr);
    return Math.ceil(at);
  }
}
