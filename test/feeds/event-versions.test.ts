// SEQUENCE and LAST-MODIFIED per feed event (feeds/event-versions.ts), on a real SQLite store: they move only when
// what the feed's audience sees changes, never backwards, and each feed keeps its own. Events are projected from
// hand-built sessions (test/calendar/fixtures.ts) as a guardian's team feed sees them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectSession } from '../../src/calendar/project.ts';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import type { Session } from '../../src/domain/types.ts';
import { versionFeedEvents } from '../../src/feeds/event-versions.ts';
import type { Store } from '../../src/store/types.ts';
import { ctx, session } from '../calendar/fixtures.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
let store: Store;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
  store = ts.store;
});
afterAll(() => ts?.cleanup());

let nextFeed = 1;
const newFeed = () => ({ schoolId: 'riverside', scope: 'team' as const, scopeId: nextFeed++ });
const NOW = new Date('2026-03-20T12:00:00.750Z');

/** The guardian's event of session `id` at upstream version `version`, updated at `updatedAt`. */
function event(id: number, version: number, updatedAt: string, over: Partial<Session> = {}): CalendarEvent {
  const e = projectSession(session({ id, ...over }, { version, updatedAt }), ctx(), 'guardian', {
    scope: 'team',
    id: 10,
  });
  if (!e) throw new Error('not projected');
  return e;
}

const versions = (events: CalendarEvent[]) => events.map((e) => [e.sessionId, e.sequence, e.lastModified]);

describe('versionFeedEvents', () => {
  it('keeps the projection’s versions on first sight, and keeps them while the audience sees the same', async () => {
    const feed = newFeed();
    const first = [event(1, 4, '2026-03-01T10:00:00.000Z'), event(2, 0, '2026-03-02T10:00:00.000Z')];
    expect(versions(await versionFeedEvents(store, feed, first, NOW))).toEqual([
      [1, 4, '2026-03-01T10:00:00.000Z'],
      [2, 0, '2026-03-02T10:00:00.000Z'],
    ]);
    // A staff-only edit upstream: the record's version and update time move, the guardian's event does not.
    const staffEdit = [
      event(1, 7, '2026-03-10T10:00:00.000Z', { notes: 'Staff only: bring the cones' }),
      event(2, 0, '2026-03-02T10:00:00.000Z'),
    ];
    expect(versions(await versionFeedEvents(store, feed, staffEdit, NOW))).toEqual([
      [1, 4, '2026-03-01T10:00:00.000Z'],
      [2, 0, '2026-03-02T10:00:00.000Z'],
    ]);
  });

  it('moves SEQUENCE on past both the last published and the record’s, with the record’s time when newer', async () => {
    const feed = newFeed();
    await versionFeedEvents(store, feed, [event(1, 4, '2026-03-01T10:00:00.000Z')], NOW);
    const moved = [event(1, 5, '2026-03-11T10:00:00.000Z', { title: 'U15 Football: Cup tie' })];
    expect(versions(await versionFeedEvents(store, feed, moved, NOW))).toEqual([
      [1, 5, '2026-03-11T10:00:00.000Z'],
    ]);
    // The record jumped ahead (edits this feed never published): its version, never one already given out.
    const jumped = [event(1, 9, '2026-03-12T10:00:00.000Z', { title: 'U15 Football: Cup final' })];
    expect(versions(await versionFeedEvents(store, feed, jumped, NOW))).toEqual([
      [1, 9, '2026-03-12T10:00:00.000Z'],
    ]);
    // The record went back (a restored upstream): still one more than last published.
    const back = [event(1, 2, '2026-03-12T10:00:00.000Z', { title: 'U15 Football: Cup semi' })];
    expect(versions(await versionFeedEvents(store, feed, back, NOW))).toEqual([
      [1, 10, '2026-03-20T12:00:00.000Z'],
    ]);
  });

  it('dates a change of wording or context, which the record does not know of, now (to the second)', async () => {
    const feed = newFeed();
    await versionFeedEvents(store, feed, [event(1, 4, '2026-03-01T10:00:00.000Z')], NOW);
    const reworded = { ...event(1, 4, '2026-03-01T10:00:00.000Z'), title: 'Football (U15)' };
    expect(versions(await versionFeedEvents(store, feed, [reworded], NOW))).toEqual([
      [1, 5, '2026-03-20T12:00:00.000Z'],
    ]);
  });

  it('forgets the sessions a feed no longer holds, and keeps each feed’s own', async () => {
    const [a, b] = [newFeed(), newFeed()];
    await versionFeedEvents(
      store,
      a,
      [event(1, 3, '2026-03-01T10:00:00.000Z'), event(2, 3, '2026-03-01T10:00:00.000Z')],
      NOW,
    );
    await versionFeedEvents(store, b, [event(1, 3, '2026-03-01T10:00:00.000Z')], NOW);
    await versionFeedEvents(store, a, [event(1, 3, '2026-03-01T10:00:00.000Z')], NOW);
    expect([...(await store.feeds.getFeedEventVersions('riverside', 'team', a.scopeId)).keys()]).toEqual([1]);
    // Session 2 comes back changed: first sight again, with the projection's versions.
    const back = [event(2, 6, '2026-03-15T10:00:00.000Z', { title: 'U15 Football: Replay' })];
    expect(versions(await versionFeedEvents(store, a, back, NOW))).toEqual([
      [2, 6, '2026-03-15T10:00:00.000Z'],
    ]);
    const changedInA = [{ ...event(1, 3, '2026-03-01T10:00:00.000Z'), title: 'Renamed' }];
    await versionFeedEvents(store, a, changedInA, NOW);
    expect((await store.feeds.getFeedEventVersions('riverside', 'team', b.scopeId)).get(1)?.sequence).toBe(3);
  });

  it('hands back the same event objects when nothing moves', async () => {
    const feed = newFeed();
    const events = [event(1, 4, '2026-03-01T10:00:00.000Z')];
    const out = await versionFeedEvents(store, feed, events, NOW);
    expect(out[0]).toBe(events[0]);
  });
});
