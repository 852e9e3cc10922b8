import { describe, expect, it } from 'vitest';
import { parseTargets } from '../../src/config/push-targets.ts';
import { DEFAULT_BACKOFF } from '../../src/upstream/http.ts';
import {
  backoffDelay,
  jitteredBackoffDelay,
  nextRetryDelay,
  parseRetryAfter,
  retrying,
} from '../../src/util/retry.ts';

describe('backoff', () => {
  it('doubles from the base up to the cap', () => {
    const b = { baseMs: 1000, capMs: 5000 };
    expect([0, 1, 2, 3, 10].map((r) => backoffDelay(b, r))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });

  it('with jitter, waits between half and all of the plain delay', () => {
    const b = { baseMs: 100, capMs: 10_000 };
    expect(jitteredBackoffDelay(b, 3, () => 0)).toBe(400);
    expect(jitteredBackoffDelay(b, 3, () => 0.999_999)).toBeCloseTo(800, 2);
    for (let i = 0; i < 100; i++) {
      const d = jitteredBackoffDelay(b, 2);
      expect(d).toBeGreaterThanOrEqual(200);
      expect(d).toBeLessThanOrEqual(400);
    }
  });

  it('reads Retry-After as seconds or an HTTP date, and nothing else', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 1.5 ', now)).toBe(1500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});

describe('retrying', () => {
  const policy = { baseMs: 100, capMs: 1000, maxRetries: 3 };

  it('retries what is retryable up to maxRetries, waiting the schedule, then throws the last failure', async () => {
    const waits: number[] = [];
    let calls = 0;
    const run = retrying(
      async (retry) => {
        calls++;
        throw new Error(`try ${retry}`);
      },
      { policy, retryable: () => true, sleep: async (ms) => void waits.push(ms) },
    );
    await expect(run).rejects.toThrow('try 3');
    expect(calls).toBe(4);
    expect(waits).toEqual([100, 200, 400]);
  });

  it('stops at once on a failure that is not retryable, and honours a verdict’s own budget', async () => {
    let calls = 0;
    await expect(
      retrying(
        async () => {
          calls++;
          throw new Error('no');
        },
        { policy, retryable: () => false, sleep: async () => {} },
      ),
    ).rejects.toThrow('no');
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      retrying(
        async () => {
          calls++;
          throw new Error('brief');
        },
        { policy, retryable: () => ({ maxRetries: 1 }), sleep: async () => {} },
      ),
    ).rejects.toThrow('brief');
    expect(calls).toBe(2);
  });

  it('takes Retry-After as a floor under the schedule, and lets onRetry end the loop', async () => {
    const waits: number[] = [];
    const result = await retrying(
      async (retry) => {
        if (retry < 2) throw new Error('busy');
        return 'done';
      },
      {
        policy,
        retryable: (_e, retry) => ({ retryAfterMs: retry === 0 ? 50 : 700 }),
        sleep: async (ms) => void waits.push(ms),
      },
    );
    expect(result).toBe('done');
    expect(waits).toEqual([100, 700]);
    await expect(
      retrying(
        async () => {
          throw new Error('busy');
        },
        {
          policy,
          retryable: () => true,
          onRetry: () => {
            throw new Error('too long');
          },
        },
      ),
    ).rejects.toThrow('too long');
  });

  it('tells a queue when an item may go again, or that its tries are spent', () => {
    expect(nextRetryDelay(policy, 0)).toBe(100);
    expect(nextRetryDelay(policy, 3)).toBeNull();
    expect(nextRetryDelay(policy, 5, { limit: 24, step: 1 })).toBe(200);
    expect(nextRetryDelay(policy, 2, { limit: 24, retryAfter: { ms: 30, use: 'exact' } })).toBe(30);
    expect(nextRetryDelay(policy, 2, { retryAfter: { ms: null, use: 'exact' } })).toBe(400);
    const d = nextRetryDelay({ ...policy, jitter: true }, 2);
    expect(d).toBeGreaterThanOrEqual(200);
    expect(d).toBeLessThanOrEqual(400);
  });
});

describe('running out of retries at the production defaults', () => {
  // The suite's clients mostly retry more and wait less (docs/test-overrides.md): here the defaults themselves
  // run out, through the one loop every client uses, with the waits recorded instead of slept.
  const runOut = async (policy: { baseMs: number; capMs: number; maxRetries: number }) => {
    const waits: number[] = [];
    let attempts = 0;
    const last = await retrying(
      async (retry) => {
        attempts++;
        throw new Error(`failure ${retry}`);
      },
      { policy, retryable: () => true, sleep: async (ms) => void waits.push(ms) },
    ).catch((err: Error) => err.message);
    return { attempts, waits, last };
  };

  it('an upstream request: 6 retries after 1, 2, 4, 8, 16 and 32 s, then its last failure', async () => {
    expect(await runOut(DEFAULT_BACKOFF)).toEqual({
      attempts: 7,
      waits: [1000, 2000, 4000, 8000, 16_000, 32_000],
      last: 'failure 6',
    });
  });

  it('a push target that names no backoff: 8 retries, the last two at the 32 s cap', async () => {
    const [target] = parseTargets(
      [{ id: 't', provider: 'google', scope: 'team', google: { auth: { accessToken: 'x' } } }],
      'targets',
    );
    if (target?.provider !== 'google') throw new Error('a Google target was parsed as another provider');
    expect(await runOut(target.google.backoff)).toEqual({
      attempts: 9,
      waits: [1000, 2000, 4000, 8000, 16_000, 32_000, 32_000, 32_000],
      last: 'failure 8',
    });
  });
});
