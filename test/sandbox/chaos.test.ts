import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.ts';
import { call, get, type Json } from './helpers.ts';

const NOW = '2026-03-02T01:00:00.000Z';

describe('chaos knobs', () => {
  it('burst past the limit gets 429 with Retry-After; the bucket refills', async () => {
    // One token per 5 s, so a slow machine cannot refill the bucket between the requests.
    const sb = await startSandbox({ now: NOW, rateLimit: 0.2, burst: 3 });
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push(await call(sb, 'GET', '/departments'));
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
      const limited = statuses[3]!;
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(5);
      expect(limited.json).toEqual({ error: { status: 429, message: expect.any(String) } });
      // The control routes are never limited and need no token.
      const stats = (await (await fetch(`${sb.url}/_sandbox/stats`)).json()) as Json;
      expect(stats).toMatchObject({
        routes: { 'GET /departments': { total: 5, byStatus: { 200: 3, 429: 2 } } },
      });
      expect(sb.stats().routes['GET /departments']?.total).toBe(5);
      const reset = await fetch(`${sb.url}/_sandbox/stats/reset`, { method: 'POST' });
      expect(((await reset.json()) as Json).total).toBe(0);
      expect(sb.stats().total).toBe(0);
    } finally {
      await sb.close();
    }
  });

  it('the bucket refills at the rate limit', async () => {
    const sb = await startSandbox({ now: NOW, rateLimit: 20, burst: 1 });
    try {
      expect((await call(sb, 'GET', '/departments')).status).toBe(200);
      // The wait is what is tested: the bucket refills on the real clock (one token in 50 ms here). A loaded
      // machine only makes it longer, which cannot fail a bucket that refills.
      await new Promise((r) => setTimeout(r, 120));
      expect((await call(sb, 'GET', '/departments')).status).toBe(200);
    } finally {
      await sb.close();
    }
  });

  it('errorRate answers that fraction with 5xx, deterministically for a seed', async () => {
    const run = async () => {
      const sb = await startSandbox({ now: NOW, seed: 2, errorRate: 0.3 });
      try {
        const out: number[] = [];
        for (let i = 0; i < 40; i++) out.push((await call(sb, 'GET', '/year-groups')).status);
        return out;
      } finally {
        await sb.close();
      }
    };
    const a = await run();
    const failures = a.filter((s) => s >= 500);
    expect(failures.length).toBeGreaterThan(4);
    expect(failures.length).toBeLessThan(24);
    expect(new Set(failures).size).toBeGreaterThan(1);
    expect(await run()).toEqual(a);
  });

  it('latencyMs delays responses', async () => {
    const sb = await startSandbox({ now: NOW, latencyMs: 120 });
    try {
      const t = performance.now();
      await get(sb, '/departments');
      expect(performance.now() - t).toBeGreaterThanOrEqual(110);
    } finally {
      await sb.close();
    }
  });

  it('malformedRate serves deterministic broken records that isMalformed names', async () => {
    const sb = await startSandbox({ now: NOW, malformedRate: 0.2 });
    try {
      const env = await get(sb, '/sessions', { pageLength: 1000 });
      const broken = env.data.filter(
        (s) => typeof s.id !== 'number' || typeof s.startDateTime !== 'string' || typeof s.title !== 'string',
      );
      expect(broken.length).toBeGreaterThan(env.data.length * 0.08);
      expect(broken.length).toBeLessThan(env.data.length * 0.35);
      const good = env.data.filter((s) => !broken.includes(s));
      expect(good.every((s) => !sb.isMalformed('sessions', s.id as number))).toBe(true);
      const again = await get(sb, '/sessions', { pageLength: 1000 });
      expect(again.data).toEqual(env.data);
      expect(env.pagination.numRecords).toBe(env.data.length); // counted as records all the same
    } finally {
      await sb.close();
    }
  });
});
