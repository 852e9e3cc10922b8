// Push calendars and the mappings of sessions to remote events, per target and calendar, on SQLite and
// PostgreSQL (moved here from store/contract.ts, where it ran for both dialects too).
import { expect, it } from 'vitest';
import { describeOnEachStore, newSchool, T0, T1, T2 } from './each-store.ts';

describeOnEachStore('SqlPush (store.push)', (store) => {
  it('round-trips push calendars and mappings', async () => {
    const s = newSchool();
    const cal = {
      schoolId: s,
      target: 'google',
      calendarKey: 'team:10',
      remoteCalendarId: 'abc@group.calendar.google.com',
      pausedUntil: null,
      lastReconciledAt: null,
    };
    await store().push.savePushCalendar(cal);
    await store().push.savePushCalendar({ ...cal, calendarKey: 'staff:40', remoteCalendarId: 'x' });
    await store().push.savePushCalendar({ ...cal, pausedUntil: T2, lastReconciledAt: T1 });
    expect(await store().push.listPushCalendars(s, 'google')).toEqual([
      { ...cal, calendarKey: 'staff:40', remoteCalendarId: 'x' },
      { ...cal, pausedUntil: T2, lastReconciledAt: T1 },
    ]);
    expect(await store().push.listPushCalendars(s, 'outlook')).toEqual([]);

    const m = (sessionId: number, calendarKey = 'team:10', hash = 'h1') => ({
      schoolId: s,
      target: 'google',
      calendarKey,
      sessionId,
      remoteEventId: `ev${sessionId}`,
      contentHash: hash,
      updatedAt: T0,
    });
    await store().push.upsertPushMappings([m(1), m(2), m(3), m(1, 'staff:40')]);
    await store().push.upsertPushMappings([{ ...m(2, 'team:10', 'h2'), updatedAt: T1 }]);
    await store().push.upsertPushMappings([]);
    expect(await store().push.listPushMappings(s, 'google', 'team:10')).toEqual([
      m(1),
      { ...m(2, 'team:10', 'h2'), updatedAt: T1 },
      m(3),
    ]);
    await store().push.deletePushMappings(s, 'google', 'team:10', [1, 3]);
    expect(
      (await store().push.listPushMappings(s, 'google')).map((x) => [x.calendarKey, x.sessionId]),
    ).toEqual([
      ['staff:40', 1],
      ['team:10', 2],
    ]);
  });
});
