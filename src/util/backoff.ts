// Retry delays: exponential (base · 2^retry, capped), optionally jittered so that parallel callers do not retry
// in lockstep, and the server's Retry-After read as milliseconds.

export interface Backoff {
  baseMs: number;
  capMs: number;
}

/** Wait before retry number `retry` (0 for the first retry): base · 2^retry, at most cap. */
export function backoffDelay(b: Backoff, retry: number): number {
  return Math.min(b.capMs, b.baseMs * 2 ** retry);
}

/** Between half and all of `backoffDelay` ("equal jitter"). */
export function jitteredBackoffDelay(b: Backoff, retry: number, random: () => number = Math.random): number {
  const full = backoffDelay(b, retry);
  return full / 2 + random() * (full / 2);
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
