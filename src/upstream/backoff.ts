// The spec's recommended schedule: wait 1 s after the first 429 and double after each further one (2, 4, 8 s),
// capped. The same schedule serves 5xx, network failures and timeouts on reads.

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  maxRetries: number;
  /** A Retry-After longer than this is not waited out: the request fails with the 429 instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  baseMs: 1000,
  capMs: 32_000,
  maxRetries: 6,
  maxRetryAfterMs: 120_000,
};

/** Wait before retry number `retry` (0 for the first retry): base · 2^retry, at most cap. */
export function backoffDelay(policy: BackoffPolicy, retry: number): number {
  return Math.min(policy.capMs, policy.baseMs * 2 ** retry);
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
