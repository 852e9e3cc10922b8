// mapLimit (util/concurrency.ts): at most `limit` calls in flight, results in input order, the first failure rejects
// and no new call starts after it.
import { describe, expect, it } from 'vitest';
import { mapLimit } from '../../src/util/concurrency.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mapLimit', () => {
  it('keeps the input order and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0], 2, async (n) => {
      running++;
      most = Math.max(most, running);
      await tick(n * 3);
      running--;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0]);
    expect(most).toBe(2);
  });

  it('handles an empty list and a limit above the length', async () => {
    expect(await mapLimit([], 4, async (n: number) => n)).toEqual([]);
    expect(await mapLimit([1, 2], 10, async (n) => n + 1)).toEqual([2, 3]);
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    const started: number[] = [];
    const run = mapLimit([1, 2, 3, 4, 5], 1, async (n) => {
      started.push(n);
      if (n === 2) throw new Error('two failed');
      return n;
    });
    await expect(run).rejects.toThrow('two failed');
    expect(started).toEqual([1, 2]);
  });
});
