// What each feed last published per session (src/store/feed-event-versions.ts, reached as store.feeds), on SQLite
// and PostgreSQL: one whole map per feed (school, scope, id), replaced whole by the next render, read back exactly
// (the SEQUENCE and LAST-MODIFIED a subscriber's calendar compares).
import { expect, it } from 'vitest';
import type { PublishedEvent } from '../../src/store/types.ts';
import { describeOnEachStore, newSchool, T0, T1, T2 } from './each-store.ts';

describeOnEachStore('feed event versions (store.feeds)', (store) => {
  it('keeps what each feed last published per session, replaced whole, per feed', async () => {
    const s = newSchool();
    expect((await store().feeds.getFeedEventVersions(s, 'team', 3)).size).toBe(0);
    const v = new Map([
      [101, { hash: 'abc', sequence: 2, lastModified: T0 }],
      [102, { hash: 'def', sequence: 0, lastModified: T1 }],
    ]);
    await store().feeds.saveFeedEventVersions(s, 'team', 3, v);
    await store().feeds.saveFeedEventVersions(
      s,
      'student',
      3,
      new Map([[101, { hash: 'x', sequence: 9, lastModified: T2 }]]),
    );
    expect(await store().feeds.getFeedEventVersions(s, 'team', 3)).toEqual(v);
    const next = new Map([[102, { hash: 'ghi', sequence: 1, lastModified: T2 }]]);
    await store().feeds.saveFeedEventVersions(s, 'team', 3, next);
    expect(await store().feeds.getFeedEventVersions(s, 'team', 3)).toEqual(next);
    expect((await store().feeds.getFeedEventVersions(s, 'student', 3)).get(101)?.sequence).toBe(9);
    expect((await store().feeds.getFeedEventVersions(newSchool(), 'team', 3)).size).toBe(0);
  });

  it('keeps a family feed apart from a team or child of the same id, and an empty render empties it', async () => {
    const s = newSchool();
    const one = (hash: string) => new Map([[7, { hash, sequence: 1, lastModified: T0 }]]);
    await store().feeds.saveFeedEventVersions(s, 'family', 5, one('fam'));
    await store().feeds.saveFeedEventVersions(s, 'student', 5, one('kid'));
    expect((await store().feeds.getFeedEventVersions(s, 'family', 5)).get(7)?.hash).toBe('fam');
    await store().feeds.saveFeedEventVersions(s, 'family', 5, new Map());
    expect((await store().feeds.getFeedEventVersions(s, 'family', 5)).size).toBe(0);
    expect((await store().feeds.getFeedEventVersions(s, 'student', 5)).get(7)?.hash).toBe('kid');
  });

  it('reads back every session of a large feed exactly: ids as numbers, hashes and instants as written', async () => {
    const s = newSchool();
    const big = new Map<number, PublishedEvent>();
    for (let i = 0; i < 2000; i++)
      big.set(9_000_000_000 + i, {
        hash: `h"${i}\\é`,
        sequence: i * 1000,
        lastModified: i % 2 ? T1 : '2026-11-02T08:00:00Z',
      });
    await store().feeds.saveFeedEventVersions(s, 'team', 1, big);
    const back = await store().feeds.getFeedEventVersions(s, 'team', 1);
    expect(back).toEqual(big);
    expect([...back.keys()].every((k) => typeof k === 'number')).toBe(true);
  });
});
