// The SQL of rendered feeds (store/rendered-feeds.ts, reached as store.feeds), on SQLite and PostgreSQL: what
// rendered-feeds-repository.test.ts does not reach. A school's feed states are read in pages of 500 by key
// (scope, then id) with the event loop's turn between pages: every feed once, in key order, none of another school;
// a re-render's confirmation and deletion touch only the feeds named.
import { expect, it } from 'vitest';
import type { RenderedFeedRecord, StoredFeedScope } from '../../src/store/types.ts';
import { describeOnEachStore, newSchool, T0, T1 } from './each-store.ts';

const record = (schoolId: string, scope: StoredFeedScope, scopeId: number): RenderedFeedRecord => ({
  schoolId,
  scope,
  scopeId,
  dataVersion: 1,
  windowKey: '2026-11-23',
  inputs: `in-${scope}-${scopeId}`,
  etag: `e-${scope}-${scopeId}`,
  lastModified: T0,
  gzip: Buffer.from([0x1f, 0x8b, scopeId & 0xff]),
  br: null,
  eventCount: 1,
  trimmed: 0,
  upcoming: '[]',
  def: '{}',
  renderedAt: T1,
});

describeOnEachStore('rendered feeds SQL (store.feeds)', (store) => {
  it('lists more than a page of feed states, each once, ordered by scope and id, of one school only', async () => {
    const school = newSchool();
    const other = newSchool();
    // 1,203 feeds over four scopes, a page boundary (500, 1,000) falling inside a scope, ids not in key order
    // as text (9 < 10 < 100).
    const made: RenderedFeedRecord[] = [];
    for (const [scope, count] of [
      ['team', 499],
      ['activity', 3],
      ['student', 640],
      ['staff', 61],
    ] as const)
      for (let id = 1; id <= count; id++) made.push(record(school, scope, id));
    for (const r of made) await store().feeds.saveRenderedFeed(r);
    await store().feeds.saveRenderedFeed(record(other, 'team', 1));

    const states = await store().feeds.listRenderedFeedStates(school);
    expect(states).toHaveLength(made.length);
    const keys = states.map((s) => `${s.scope}:${s.scopeId}`);
    expect(new Set(keys).size).toBe(made.length);
    const expected = made
      .map((r) => [r.scope, r.scopeId] as const)
      .sort(([a, x], [b, y]) => (a === b ? x - y : a < b ? -1 : 1))
      .map(([s, id]) => `${s}:${id}`);
    expect(keys).toEqual(expected);
    expect(states[0]).toEqual({
      scope: 'activity',
      scopeId: 1,
      dataVersion: 1,
      windowKey: '2026-11-23',
      inputs: 'in-activity-1',
      etag: 'e-activity-1',
      lastModified: T0,
      renderedAt: T1,
    });
  });

  it('confirms and deletes only the feeds named, and a re-save replaces the row', async () => {
    const school = newSchool();
    for (const id of [1, 2, 3]) await store().feeds.saveRenderedFeed(record(school, 'team', id));
    await store().feeds.markRenderedFeedsCurrent(
      school,
      [
        { scope: 'team', scopeId: 1, inputs: 'in-team-1' },
        { scope: 'team', scopeId: 2, inputs: 'in-team-1' }, // made from other inputs: a newer render won
      ],
      7,
    );
    const version = async (id: number) =>
      (await store().feeds.getRenderedFeed(school, 'team', id))?.dataVersion;
    expect([await version(1), await version(2), await version(3)]).toEqual([7, 1, 1]);
    await store().feeds.deleteRenderedFeeds(school, [{ scope: 'team', scopeId: 2 }]);
    expect((await store().feeds.listRenderedFeedStates(school)).map((s) => s.scopeId)).toEqual([1, 3]);
    await store().feeds.saveRenderedFeed({
      ...record(school, 'team', 3),
      etag: 'e-new',
      br: Buffer.from([5]),
    });
    const got = await store().feeds.getRenderedFeed(school, 'team', 3);
    expect(got).toMatchObject({ etag: 'e-new', dataVersion: 1 });
    expect(Buffer.isBuffer(got?.br)).toBe(true);
    expect([...got!.br!]).toEqual([5]);
  });
});
