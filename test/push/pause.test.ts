// A calendar whose provider said quota exceeded rests (push/pause.ts), recorded in a real SQLite store: until
// pauseMinutes from now, under its owner-qualified id, keeping when it was last reconciled; none without a remote id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ensured } from '../../src/push/ensure.ts';
import { pauseCalendar } from '../../src/push/pause.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
  await ts.store.records.upsertSchool({ id: 'hill', name: 'Hill', timeZone: 'UTC' });
});
afterAll(() => ts?.cleanup());

const ctx = () => ({
  store: ts.store,
  schoolId: 'hill',
  targetId: 'google',
  clock: () => new Date('2026-03-02T10:00:00.000Z'),
  pauseMinutes: 30,
});
const calendar = (ref: Ensured['ref'], lastReconciledAt: string | null = null) =>
  ({
    spec: { key: 'team:12' },
    ref,
    stored:
      lastReconciledAt === null
        ? null
        : {
            schoolId: 'hill',
            target: 'google',
            calendarKey: 'team:12',
            remoteCalendarId: 'x',
            pausedUntil: null,
            lastReconciledAt,
          },
  }) as unknown as Pick<Ensured, 'spec' | 'ref' | 'stored'>;

describe('pausing a calendar', () => {
  it('records the rest until pauseMinutes from now, and says until when', async () => {
    const note = await pauseCalendar(
      ctx(),
      calendar(
        { key: 'team:12', remoteCalendarId: 'cal-1', owner: 'coach@hill.edu' },
        '2026-03-01T00:00:00.000Z',
      ),
    );
    expect(note).toBe('paused until 2026-03-02T10:30:00.000Z (quota exceeded)');
    expect(await ts.store.push.listPushCalendars('hill', 'google')).toEqual([
      {
        schoolId: 'hill',
        target: 'google',
        calendarKey: 'team:12',
        remoteCalendarId: 'coach@hill.edu|cal-1',
        pausedUntil: '2026-03-02T10:30:00.000Z',
        lastReconciledAt: '2026-03-01T00:00:00.000Z',
      },
    ]);
  });

  it('rests nothing for a calendar with no remote id', async () => {
    expect(await pauseCalendar(ctx(), calendar(null))).toBeNull();
    expect(await ts.store.push.listPushCalendars('hill', 'google')).toHaveLength(1);
  });
});
