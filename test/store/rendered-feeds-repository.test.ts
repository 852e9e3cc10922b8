// The rendered feeds themselves and each school's re-render pass mark, on SQLite and PostgreSQL (moved here from
// store/contract.ts, where they ran for both dialects too). What each feed last published per session:
// feed-event-versions.test.ts.
import { expect, it } from 'vitest';
import { describeOnEachStore, newSchool, T0, T1 } from './each-store.ts';

describeOnEachStore('SqlRenderedFeeds (store.feeds)', (store) => {
  it('keeps rendered feeds: compressed bytes round-trip, brotli added by ETag, confirmed and deleted per feed', async () => {
    const s = newSchool();
    expect(await store().feeds.getRenderedFeed(s, 'team', 3)).toBeNull();
    const gzip = Buffer.from([0x1f, 0x8b, 0, 1, 2, 255, 254]);
    const rec = {
      schoolId: s,
      scope: 'team' as const,
      scopeId: 3,
      dataVersion: 4,
      windowKey: '2026-11-23',
      inputs: 'in-1',
      etag: 'e1',
      lastModified: T0,
      gzip,
      br: null,
      eventCount: 12,
      trimmed: 0,
      upcoming: '[]',
      def: '{"scope":"team"}',
      renderedAt: T1,
    };
    await store().feeds.saveRenderedFeed(rec);
    await store().feeds.saveRenderedFeed({ ...rec, scope: 'student', inputs: 'in-2', etag: 'e2' });
    const got = await store().feeds.getRenderedFeed(s, 'team', 3);
    expect(got).toEqual(rec);
    expect(Buffer.isBuffer(got!.gzip)).toBe(true);
    await store().feeds.saveRenderedFeedBrotli(s, 'team', 3, 'stale-etag', Buffer.from([9]));
    expect((await store().feeds.getRenderedFeed(s, 'team', 3))!.br).toBeNull();
    await store().feeds.saveRenderedFeedBrotli(s, 'team', 3, 'e1', Buffer.from([7, 8]));
    expect([...(await store().feeds.getRenderedFeed(s, 'team', 3))!.br!]).toEqual([7, 8]);
    // Confirmed only where the inputs still match.
    await store().feeds.markRenderedFeedsCurrent(
      s,
      [
        { scope: 'team', scopeId: 3, inputs: 'in-1' },
        { scope: 'student', scopeId: 3, inputs: 'other' },
      ],
      5,
    );
    const states = await store().feeds.listRenderedFeedStates(s);
    expect(states.map((x) => [x.scope, x.dataVersion, x.lastModified]).sort()).toEqual([
      ['student', 4, T0],
      ['team', 5, T0],
    ]);
    await store().feeds.deleteRenderedFeeds(s, [{ scope: 'student', scopeId: 3 }]);
    expect(await store().feeds.getRenderedFeed(s, 'student', 3)).toBeNull();
    expect(await store().feeds.listRenderedFeedStates(newSchool())).toEqual([]);
  });

  it('keeps one re-render pass mark per school, replaced by the next', async () => {
    const s = newSchool();
    const other = newSchool();
    expect(await store().feeds.renderPassMark(s)).toBeNull();
    await store().feeds.saveRenderPassMark(s, '4|2026-11-23|a');
    await store().feeds.saveRenderPassMark(other, 'x');
    expect(await store().feeds.renderPassMark(s)).toBe('4|2026-11-23|a');
    await store().feeds.saveRenderPassMark(s, '5|2026-11-23|a');
    expect(await store().feeds.renderPassMark(s)).toBe('5|2026-11-23|a');
    expect(await store().feeds.renderPassMark(other)).toBe('x');
  });
});
