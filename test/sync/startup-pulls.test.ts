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
