// runStartupPulls: serve's first pulls in parallel across upstreams, one at a time behind each upstream, bounded.
import { describe, expect, it } from 'vitest';
import { runStartupPulls } from '../../src/sync/startup-pulls.ts';

const school = (id: string, url: string) => ({ id, upstream: { url } });

describe('runStartupPulls', () => {
  it('pulls different upstreams at once (up to the bound) and the schools of one upstream one after another', async () => {
    const schools = [
      school('a1', 'http://a.example/x'),
      school('a2', 'http://a.example/y'),
      school('b1', 'http://b.example/'),
      school('c1', 'http://c.example/'),
      school('d1', 'http://d.example/'),
      school('a3', 'http://a.example/z'),
    ];
    const running = new Set<string>();
    let most = 0;
    const order: string[] = [];
    await runStartupPulls(
      schools,
      async (s) => {
        const host = new URL(s.upstream.url).host;
        for (const r of running)
          expect(new URL(schools.find((x) => x.id === r)!.upstream.url).host).not.toBe(host);
        running.add(s.id);
        most = Math.max(most, running.size);
        await new Promise((r) => setTimeout(r, 5));
        running.delete(s.id);
        order.push(s.id);
      },
      { atOnce: 3 },
    );
    expect(most).toBe(3);
    // a's schools in their configured order.
    expect(order.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
    expect(order.sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'c1', 'd1']);
  });

  it('a failed pull is told and the others still run', async () => {
    const failed: string[] = [];
    const done: string[] = [];
    await runStartupPulls(
      [school('x', 'http://x.example/'), school('y', 'http://x.example/'), school('z', 'http://z.example/')],
      async (s) => {
        if (s.id === 'x') throw new Error('boom');
        done.push(s.id);
      },
      { onError: (s) => failed.push(s.id) },
    );
    expect(failed).toEqual(['x']);
    expect(done.sort()).toEqual(['y', 'z']);
  });
});

describe('runStartupPulls with a width that changes', () => {
  it('starts no more than the width allows when each pull starts, and more once it widens', async () => {
    const schools = Array.from({ length: 12 }, (_, i) => school(`s${i}`, `http://u${i}.example/`));
    let width = 2;
    let running = 0;
    const seen: { running: number; width: number }[] = [];
    await runStartupPulls(
      schools,
      async () => {
        running++;
        seen.push({ running, width });
        // Widens once two have started: the runner looks again without waiting for a pull to end.
        if (seen.length === 2) width = 5;
        await new Promise((r) => setTimeout(r, 400));
        running--;
      },
      { atOnce: () => width },
    );
    expect(seen).toHaveLength(12);
    for (const s of seen) expect(s.running).toBeLessThanOrEqual(s.width);
    expect(Math.max(...seen.map((s) => s.running))).toBe(5);
    // The third to fifth started while the first two still ran (each takes 400 ms).
    expect(seen.slice(2, 5).map((s) => s.running)).toEqual([3, 4, 5]);
  });

  it('lets running pulls end when it narrows, and keeps each upstream one at a time in order', async () => {
    const schools = ['a1', 'a2', 'a3', 'b1', 'b2', 'c1', 'd1'].map((id) =>
      school(id, `http://${id[0]}.example/`),
    );
    let width = 4;
    const running = new Set<string>();
    const order: string[] = [];
    const startedWith: number[] = [];
    await runStartupPulls(
      schools,
      async (s) => {
        for (const r of running) expect(r[0]).not.toBe(s.id[0]);
        running.add(s.id);
        startedWith.push(running.size);
        width = 1;
        await new Promise((r) => setTimeout(r, 20));
        running.delete(s.id);
        order.push(s.id);
      },
      { atOnce: () => width },
    );
    expect(order.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
    expect(order.filter((id) => id.startsWith('b'))).toEqual(['b1', 'b2']);
    // The first pull narrowed the width to 1 as it started: from then on, one at a time.
    expect(startedWith.slice(1).every((n) => n === 1)).toBe(true);
    expect(order).toHaveLength(7);
  });
});
