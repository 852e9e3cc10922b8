// Asking again: the one schedule and budget every retry in rostercal uses (the upstream transport, Google calls and
// batches, Graph batches, OpenID discovery). Waits grow exponentially (base · 2^retry, capped), jittered where
// parallel callers must not retry in lockstep; a server's Retry-After is honoured either as a floor under the
// schedule (the upstream service: a server that keeps saying "1 s" is still backed off from) or as the wait itself
// (Graph names the moment its throttle lifts). A loop that calls and waits uses `retrying`; a queue that puts an
// item back for later (a batch part) asks `nextRetryDelay` when, if at all.
//
// Not p-retry & co.: they run one sequential loop by throwing, while the batch engines re-queue single parts of a
// round trip with their own budgets, and none honours Retry-After as a floor.

export interface Backoff {
  baseMs: number;
  capMs: number;
}

export interface RetryPolicy extends Backoff {
  /** Retries after the first attempt (0: one attempt only). */
  maxRetries: number;
  /** Equal jitter: wait between half and all of the delay, so that parallel callers spread out. */
  jitter?: boolean;
}

/** How a server's Retry-After combines with the schedule: never sooner than both, or exactly as asked. */
export type RetryAfterUse = 'floor' | 'exact';

/** Wait before retry number `retry` (0 for the first retry): base · 2^retry, at most cap. */
export function backoffDelay(b: Backoff, retry: number): number {
  return Math.min(b.capMs, b.baseMs * 2 ** retry);
}

/** Between half and all of `backoffDelay` ("equal jitter"). */
export function jitteredBackoffDelay(b: Backoff, retry: number, random: () => number = Math.random): number {
  const full = backoffDelay(b, retry);
  return full / 2 + random() * (full / 2);
}

/** The wait before retry number `retry`, the policy's jitter applied, and a server's Retry-After honoured. */
export function retryDelay(
  p: Backoff & { jitter?: boolean },
  retry: number,
  retryAfter?: { ms: number | null; use: RetryAfterUse },
): number {
  if (retryAfter?.use === 'exact' && retryAfter.ms !== null) return retryAfter.ms;
  const scheduled = p.jitter ? jitteredBackoffDelay(p, retry) : backoffDelay(p, retry);
  return retryAfter?.ms != null ? Math.max(scheduled, retryAfter.ms) : scheduled;
}

/**
 * For a queue that puts a failed item back: the wait before its next try, or null when `tries` (retries
 * already made) has used up `limit` (default the policy's maxRetries). `step` is the schedule's position when it
 * is not `tries` (a budget longer than the schedule that stops doubling at maxRetries).
 */
export function nextRetryDelay(
  p: RetryPolicy,
  tries: number,
  opts: { limit?: number; step?: number; retryAfter?: { ms: number | null; use: RetryAfterUse } } = {},
): number | null {
  if (tries >= (opts.limit ?? p.maxRetries)) return null;
  return retryDelay(p, opts.step ?? tries, opts.retryAfter);
}

/** What a failed attempt allows: no retry, or one (with its own budget or Retry-After, where they differ). */
export type RetryVerdict =
  | false
  | true
  | { maxRetries?: number; retryAfterMs?: number | null; retryAfterUse?: RetryAfterUse };

export interface RetryingOptions {
  policy: RetryPolicy;
  /** Whether (and how) the failure `err` of try number `retry` (0: the first attempt) may be retried; may throw. */
  retryable: (err: unknown, retry: number) => RetryVerdict;
  /** Before each wait; throwing ends the loop with that error (a Retry-After too long to wait out). */
  onRetry?: (info: { retry: number; waitMs: number; error: unknown; retryAfterMs: number | null }) => void;
  sleep?: (ms: number) => Promise<void>;
}

export function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

/**
 * Calls `attempt(retry)` until it succeeds, its failure is not retryable, or the retries are spent (the last
 * failure is thrown). `retry` counts from 0; the wait before retry n+1 is the schedule's delay n.
 */
export async function retrying<T>(attempt: (retry: number) => Promise<T>, opts: RetryingOptions): Promise<T> {
  const wait = opts.sleep ?? sleep;
  for (let retry = 0; ; retry++) {
    try {
      return await attempt(retry);
    } catch (err) {
      const verdict = opts.retryable(err, retry);
      if (verdict === false) throw err;
      const v = verdict === true ? {} : verdict;
      if (retry >= (v.maxRetries ?? opts.policy.maxRetries)) throw err;
      const retryAfterMs = v.retryAfterMs ?? null;
      const waitMs = retryDelay(opts.policy, retry, { ms: retryAfterMs, use: v.retryAfterUse ?? 'floor' });
      opts.onRetry?.({ retry: retry + 1, waitMs, error: err, retryAfterMs });
      await wait(waitMs);
    }
  }
}

/**
 * Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable.
 */
export function parseRetryAfter(header: string | null, nowMs: number): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}
