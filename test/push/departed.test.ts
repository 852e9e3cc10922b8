// The fourth push stage (push/departed.ts), on a real SQLite store: for each calendar the planner will diff, where
// the sessions of its mappings no longer desired stand now (moved, deleted, or not in the store at all), so that it
// can tell a session gone from the window from one deleted; and the planner's view of a calendar.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookUpDeparted, planInput } from '../../src/push/departed.ts';
import { session } from '../store/fixtures.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';
import { desired, mappings, SCHOOL, stageCalendar } from './stage-calendars.ts';

const T0 = '2026-11-01T08:00:00.000Z';
const MOVED = { start: '2027-09-01T15:00:00.000Z', end: '2027-09-01T16:00:00.000Z' };
const DROPPED = { start: '2026-11-05T15:00:00.000Z', end: '2026-11-05T16:00:00.000Z' };

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
  await ts.store.records.upsertSchool({ id: SCHOOL, name: 'Hill', timeZone: 'Europe/London' });
  // 1 desired; 2 moved out of the window; 3 deleted upstream; 4 never in the store (or long pruned).
  await ts.store.records.upsert(SCHOOL, 'sessions', [session(1), session(2, MOVED), session(3, DROPPED)], T0);
  await ts.store.records.markDeleted(SCHOOL, 'sessions', [3], T0);
});
afterAll(() => ts?.cleanup());

const ctx = () => ({ store: ts.store, schoolId: SCHOOL });
const ref = { key: 'team:1', remoteCalendarId: 'cal-1', owner: null };
const mapped = (over: Parameters<typeof stageCalendar>[1] = {}) =>
  stageCalendar('team:1', { ref, desired: desired(1), mappings: mappings('team:1', 1, 2, 3, 4), ...over });

describe('looking up departed sessions', () => {
  it('finds each mapped session no longer desired where the store has it now, deleted ones included', async () => {
    const [c] = await lookUpDeparted(ctx(), [mapped()]);
    expect(c!.departed).toEqual(
      new Map([
        [2, { ...MOVED, deleted: false }],
        [3, { ...DROPPED, deleted: true }],
      ]),
    );
    // The rest of the calendar goes on as it came.
    expect(c!.mappings.size).toBe(4);
    expect(c!.ref).toBe(ref);
  });

  it('looks up calendars that will be diffed only: ok, created or retired, with a remote, not found gone', async () => {
    const base = mapped().outcome;
    const calendars = [
      mapped({ outcome: { ...base, state: 'created' } }),
      mapped({ outcome: { ...base, state: 'retired' } }),
      mapped({ outcome: { ...base, state: 'paused' } }),
      mapped({ outcome: { ...base, state: 'skipped' } }),
      mapped({ outcome: { ...base, state: 'failed', failure: 'error' } }),
      mapped({ outcome: { ...base, failure: 'calendar-gone' } }),
      mapped({ ref: null }),
    ];
    const sizes = (await lookUpDeparted(ctx(), calendars)).map((c) => c.departed.size);
    expect(sizes).toEqual([2, 2, 0, 0, 0, 0, 0]);
  });

  it("gives the planner the calendar's key, state, failure, remote and what it holds and should hold", async () => {
    const [c] = await lookUpDeparted(ctx(), [mapped({ listing: [] })]);
    expect(planInput(c!)).toEqual({
      key: 'team:1',
      state: 'ok',
      ref,
      failure: undefined,
      desired: c!.desired,
      mappings: c!.mappings,
      listing: [],
      departed: c!.departed,
    });
  });
});
