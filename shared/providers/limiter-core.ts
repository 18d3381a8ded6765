// runs in: both
import type { LimitTable } from "./limit-spec.ts";
import { KeyState, MAX_PAUSE_MS, INITIAL_UNKNOWN_RPS, MIN_RPS, DECREASE_COOLDOWN_MS, INCREASE_INTERVAL_MS, CONFIGURED_DECREASE, LEARNING_DECREASE, CONFIGURED_INCREASE, MINUTE_WINDOW_MS } from "./limiter-key.ts";

/**
 * The provider limiter's arithmetic: per key, a paced request bucket and a token bucket (each
 * holding at most one second's share, so a per-minute limit is spent evenly, not in a burst), a
 * separate cap on requests in flight, a FIFO of waiters, and an adaptive request rate (AIMD) fed by
 * what the provider answers: a 429 lowers the key's rate at once (and its `Retry-After` pauses the
 * key), successes raise it again up to the configured or learnt limit, and an adaptive pace
 * (limiter-key.ts: careful at first on a short window, towards 0.97 of the limit while no 429
 * comes back, half the way back at one). Without a configured limit
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

/** The tunables of the limiter, defined with a key's arithmetic (limiter-key.ts). */
export { PACE, MIN_CAPACITY, MAX_PAUSE_MS, SLACK_REQUESTS, SLACK_MS, PACE_CAP_STEP, PACE_CAP_RECOVERY, INITIAL_UNKNOWN_RPS, MIN_RPS, DECREASE_COOLDOWN_MS, INCREASE_INTERVAL_MS, CONFIGURED_DECREASE, LEARNING_DECREASE, CONFIGURED_INCREASE, MINUTE_WINDOW_MS } from "./limiter-key.ts";

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
          state.backOffPace();
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
      if (typeof reset === "number" && reset > 0) state.windowMs = Math.min(MINUTE_WINDOW_MS, Math.max(state.windowMs ?? 0, reset));
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
    state.climbPace();
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
