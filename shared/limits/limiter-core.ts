import type { LimitSpec, LimitTable } from "./limit-spec.ts";

/**
 * The provider limiter's arithmetic: per key, a paced request bucket and a token bucket (each
 * holding at most one second's share, so a per-minute limit is spent evenly, not in a burst), a
 * separate cap on requests in flight, a FIFO of waiters, and an adaptive request rate (AIMD) fed by
 * what the provider answers: a 429 lowers the key's rate at once (and its `Retry-After` pauses the
 * key), successes raise it again up to the configured or learnt limit. Without a configured limit
 * the key starts carefully (4 requests per second, doubling each second without a refusal) and
 * learns the limit from the `x-ratelimit-*` headers. Pure: time is passed in (epoch ms), no timers;
 * the drivers (local-limiter.ts, and the coordinator's permit server in distributed mode) call
 * {@link LimiterCore.poll} when {@link LimiterCore.nextPollAt} says.
 */

/** What the provider said about one request, for the limiter to adapt. Every field is optional. */
export interface LimitFeedback {
  /** HTTP status; null when the request never got an answer (a connection error). */
  status?: number | null;
  /** The server's Retry-After, in ms. */
  retryAfterMs?: number | null;
  /** `x-ratelimit-limit-requests`, `-remaining-requests`, `-reset-requests` (ms). */
  limitRequests?: number | null;
  remainingRequests?: number | null;
  resetRequestsMs?: number | null;
  /** `x-ratelimit-limit-tokens`, `-remaining-tokens`, `-reset-tokens` (ms). */
  limitTokens?: number | null;
  remainingTokens?: number | null;
  resetTokensMs?: number | null;
  /** Tokens the request really used (prompt + completion), to settle the estimate it was admitted with. */
  tokens?: number | null;
}

/** One admitted request. */
export interface LimitGrant {
  id: number;
  key: string;
  /** The tokens it was admitted with (its estimate). */
  tokens: number;
}

/** One key as `coordinator status` and the worker metrics show it. */
export interface KeySnapshot {
  key: string;
  /** The configured limits (null fields: not configured). */
  configured: { rpm: number | null; tpm: number | null; concurrency: number | null };
  /** Limits learnt from the provider's headers (requests or tokens per window), or null. */
  learnt: { requests: number | null; tokens: number | null; windowSeconds: number | null };
  /** The rate the key is paced at now, requests per minute (null: not limited yet). */
  rpm: number | null;
  /** The token rate it is paced at now, per minute (null: not limited). */
  tpm: number | null;
  inFlight: number;
  queued: number;
  /** Requests admitted, 429s answered, other failures (5xx, connection errors), tokens used (as settled). */
  admitted: number;
  rateLimited: number;
  failed: number;
  tokens: number;
  /** Epoch ms until which the key is paused by a Retry-After, or null. */
  pausedUntil: number | null;
}

/** The pace kept below a limit, so timing jitter between processes and the provider never crosses it. */
export const PACE = 0.97;
/**
 * The smallest bucket: one request and half an interval's carry, so a grant that comes a little
 * late (a busy event loop) does not lose its share of the rate; it never allows two at once.
 */
export const MIN_CAPACITY = 1.5;
/** The longest pause a Retry-After imposes on a key, ms (a longer one is probed again after it). */
export const MAX_PAUSE_MS = 30_000;
/** Requests of slack kept below a short window's limit (see `pace`). */
export const SLACK_REQUESTS = 2;
/** Timing slack kept below a window's limit, ms (see `pace`). */
export const SLACK_MS = 200;
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
/** The window a per-minute header limit is assumed to cover when no reset time says otherwise, ms. */
export const DEFAULT_WINDOW_MS = 60_000;

interface Waiter {
  id: number;
  tokens: number;
}

class KeyState {
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
  /** Longest reset seen, ms: the window a header limit covers. */
  windowMs: number | null = null;
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

  /**
   * The request limit per window, or null when unknown: the configured per-minute limit and the
   * one the provider's headers state, whichever is lower. A provider that says it admits less than
   * configured (a lower tier, a key shared with other clients) is believed; one that says more does
   * not raise a configured limit.
   */
  limitPerWindow(): { limit: number; windowMs: number } | null {
    const windowMs = this.windowMs ?? DEFAULT_WINDOW_MS;
    const configured = this.spec.rpm !== undefined ? (this.spec.rpm * windowMs) / 60_000 : Infinity;
    const limit = Math.min(configured, this.learntRequests ?? Infinity);
    return limit === Infinity ? null : { limit, windowMs };
  }

  /**
   * The fraction of the limit the key is paced at: {@link PACE}, or less when the window is short
   * or holds few requests, so that timing jitter of {@link SLACK_MS} or {@link SLACK_REQUESTS}
   * requests never crosses the limit (60 per 6 s: 0.967; 10 per second: 0.8).
   */
  pace(): number {
    const l = this.limitPerWindow();
    if (!l) return PACE;
    return Math.max(0.5, Math.min(PACE, 1 - Math.max(SLACK_REQUESTS / l.limit, SLACK_MS / l.windowMs)));
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
    const learnt = this.learntTokens !== null ? this.learntTokens / (this.windowMs ?? DEFAULT_WINDOW_MS) : Infinity;
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

/** The limiter's state for every key. */
export class LimiterCore {
  #limits: LimitTable;
  readonly #keys = new Map<string, KeyState>();
  /** Grants in flight by id, to settle on release. */
  readonly #granted = new Map<number, { key: string; tokens: number }>();
  /** Waiting ids by key (to cancel). */
  readonly #waiting = new Map<number, string>();
  #nextId = 1;

  constructor(limits: LimitTable = {}) {
    this.#limits = { ...limits };
  }

  /** Replaces the configured limits (a key already in use keeps its counters and adapts from there). */
  configure(limits: LimitTable, now: number): void {
    this.#limits = { ...limits };
    for (const [key, state] of this.#keys) {
      state.refill(now);
      state.spec = limits[key] ?? {};
      const ceiling = state.requestCeiling();
      if (ceiling !== Infinity) {
        state.slowStart = false;
        state.rate = Math.min(state.rate === Infinity ? ceiling : state.rate, ceiling);
      }
    }
  }

  /** Queues a request for `key` with `tokens` estimated; returns its id (grants come from {@link poll}). */
  request(key: string, tokens: number, now: number): number {
    const state = this.#state(key, now);
    const id = this.#nextId++;
    state.queue.push({ id, tokens: Math.max(0, Number.isFinite(tokens) ? tokens : 0) });
    this.#waiting.set(id, key);
    return id;
  }

  /** Drops a waiting request (its caller gave up). Returns false when it was not waiting. */
  cancel(id: number): boolean {
    const key = this.#waiting.get(id);
    if (key === undefined) return false;
    this.#waiting.delete(id);
    const q = this.#keys.get(key)!.queue;
    const i = q.findIndex((w) => w.id === id);
    if (i >= 0) q.splice(i, 1);
    return true;
  }

  /** Admits every request that may go now, in FIFO order per key. */
  poll(now: number): LimitGrant[] {
    const grants: LimitGrant[] = [];
    for (const state of this.#keys.values()) {
      if (state.queue.length === 0) continue;
      state.refill(now);
      while (state.queue.length > 0 && state.canAdmit(state.queue[0]!, now)) {
        const w = state.queue.shift()!;
        this.#waiting.delete(w.id);
        state.reqLevel -= 1;
        if (state.tokLevel !== Infinity) state.tokLevel -= w.tokens;
        state.inFlight++;
        state.admitted++;
        this.#granted.set(w.id, { key: state.key, tokens: w.tokens });
        grants.push({ id: w.id, key: state.key, tokens: w.tokens });
      }
    }
    return grants;
  }

  /** When {@link poll} may admit something next (epoch ms), or null when only a release or a request can. */
  nextPollAt(now: number): number | null {
    let next: number | null = null;
    for (const state of this.#keys.values()) {
      if (state.queue.length === 0) continue;
      state.refill(now);
      const at = state.readyAt(state.queue[0]!, now);
      if (at !== null && (next === null || at < next)) next = at;
    }
    return next;
  }

  /**
   * A granted request ended: frees its concurrency slot, settles its tokens, and adapts the key
   * to what the provider said. Unknown ids (released twice, or granted by another core) are ignored.
   */
  release(id: number, feedback: LimitFeedback, now: number): void {
    const g = this.#granted.get(id);
    if (!g) return;
    this.#granted.delete(id);
    const state = this.#keys.get(g.key);
    if (!state) return;
    state.inFlight = Math.max(0, state.inFlight - 1);
    this.observe(g.key, feedback, now, g.tokens);
  }

  /**
   * What the provider said about a request of `key` (released here, or seen elsewhere: a client
   * outside the limiter). `estimated` is the token estimate it was admitted with.
   */
  observe(key: string, feedback: LimitFeedback, now: number, estimated = 0): void {
    const state = this.#state(key, now);
    state.refill(now);
    if (feedback.status !== undefined && feedback.status !== null) state.answered = true;
    if (typeof feedback.tokens === "number" && Number.isFinite(feedback.tokens) && feedback.tokens >= 0) {
      state.tokens += feedback.tokens;
      // Settle the estimate: a request that used more goes into debt, one that used less gives back.
      if (state.tokLevel !== Infinity) state.tokLevel = Math.min(state.tokenCapacity(), state.tokLevel - (feedback.tokens - estimated));
    }
    this.#learn(state, feedback);
    const status = feedback.status ?? null;
    if (status === 429) {
      state.rateLimited++;
      if (feedback.retryAfterMs && feedback.retryAfterMs > 0) state.pausedUntil = Math.max(state.pausedUntil, now + Math.min(feedback.retryAfterMs, MAX_PAUSE_MS));
      if (now - state.lastDecrease >= DECREASE_COOLDOWN_MS) {
        state.lastDecrease = now;
        state.slowStart = false;
        const tokenBound = feedback.remainingTokens === 0 && (feedback.remainingRequests ?? 1) > 0;
        if (tokenBound) state.tokenFactor = Math.max(0.05, state.tokenFactor * (state.spec.tpm !== undefined ? CONFIGURED_DECREASE : LEARNING_DECREASE));
        else {
          const factor = state.spec.rpm !== undefined ? CONFIGURED_DECREASE : LEARNING_DECREASE;
          const base = state.rate === Infinity ? INITIAL_UNKNOWN_RPS / 1000 : state.rate;
          state.rate = Math.max(MIN_RPS / 1000, base * factor);
        }
        // No credit survives a refusal: the next request waits a full interval.
        state.reqLevel = Math.min(state.reqLevel, 0);
        state.lastIncrease = now;
      }
      return;
    }
    if (status === null || status >= 500 || status === 408) state.failed++;
    if (status !== null && status >= 200 && status < 300) this.#increase(state, feedback, now);
  }

  /** Every key's counters and current pace. */
  snapshot(now: number): KeySnapshot[] {
    return [...this.#keys.values()].map((s) => {
      s.refill(now);
      const tr = s.tokenRate();
      return {
        key: s.key,
        configured: { rpm: s.spec.rpm ?? null, tpm: s.spec.tpm ?? null, concurrency: s.spec.concurrency ?? null },
        learnt: { requests: s.learntRequests, tokens: s.learntTokens, windowSeconds: s.windowMs === null ? null : s.windowMs / 1000 },
        rpm: s.rate === Infinity ? null : round(s.rate * 60_000),
        tpm: tr === Infinity ? null : round(tr * 60_000),
        inFlight: s.inFlight,
        queued: s.queue.length,
        admitted: s.admitted,
        rateLimited: s.rateLimited,
        failed: s.failed,
        tokens: s.tokens,
        pausedUntil: s.pausedUntil > now ? s.pausedUntil : null,
      };
    });
  }

  #state(key: string, now: number): KeyState {
    let s = this.#keys.get(key);
    if (!s) this.#keys.set(key, (s = new KeyState(key, this.#limits[key] ?? {}, now)));
    return s;
  }

  /** Learns a key's limits and window from the headers of any answer. */
  #learn(state: KeyState, f: LimitFeedback): void {
    for (const reset of [f.resetRequestsMs, f.resetTokensMs]) {
      // The longest reset seen approaches the window the limits cover (capped at a minute).
      if (typeof reset === "number" && reset > 0) state.windowMs = Math.min(DEFAULT_WINDOW_MS, Math.max(state.windowMs ?? 0, reset));
    }
    // A shorter window than assumed may lower the pace: never run above the ceiling.
    const ceilingNow = state.requestCeiling();
    if (state.rate > ceilingNow) state.rate = ceilingNow;
    state.reqLevel = Math.min(state.reqLevel, state.requestCapacity());
    if (typeof f.limitRequests === "number" && f.limitRequests > 0) {
      state.learntRequests = f.limitRequests;
      const ceiling = state.requestCeiling();
      if (ceiling !== Infinity) {
        // The provider said its limit: a key still starting up goes to it; one that was refused stays below.
        if (state.slowStart || state.rate > ceiling) state.rate = ceiling;
        state.slowStart = false;
      }
    }
    if (typeof f.limitTokens === "number" && f.limitTokens > 0) state.learntTokens = f.limitTokens;
    // A provider that says it has nothing left: stop climbing (a learning key holds its rate).
    if (f.remainingRequests === 0 && state.spec.rpm === undefined) {
      state.slowStart = false;
      state.lastIncrease = Math.max(state.lastIncrease, state.last);
    }
  }

  #increase(state: KeyState, f: LimitFeedback, now: number): void {
    if (now - state.lastIncrease < INCREASE_INTERVAL_MS) return;
    state.lastIncrease = now;
    if (state.tokenFactor < 1) state.tokenFactor = Math.min(1, state.tokenFactor + CONFIGURED_INCREASE);
    const ceiling = state.requestCeiling();
    if (state.rate >= ceiling) return;
    // Near the provider's own floor (few requests left), hold rather than climb into a refusal.
    if (typeof f.remainingRequests === "number" && typeof f.limitRequests === "number" && f.limitRequests > 0 && f.remainingRequests / f.limitRequests < 0.05 && state.spec.rpm === undefined) return;
    let next: number;
    if (state.slowStart) next = state.rate * 2;
    else if (ceiling !== Infinity) next = state.rate + ceiling * CONFIGURED_INCREASE;
    else next = state.rate + Math.max(state.rate * 0.1, 0.5 / 1000);
    state.rate = Math.min(ceiling, next);
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
