// The spec's recommended schedule: wait 1 s after the first 429 and double after each further one (2, 4, 8 s),
// capped. The same schedule serves 5xx, network failures and timeouts on reads. The arithmetic (and reading
// Retry-After) is src/util/backoff.ts.

import type { Backoff } from '../util/backoff.ts';

export interface BackoffPolicy extends Backoff {
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
