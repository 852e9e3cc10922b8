// The last push stage (push/apply.ts): a plan's writes through the real Google provider to the fake Google over
// HTTP, with a real SQLite store: in chunks spread over the calendars, each create recorded as pending before it is
// sent and its result after; a calendar whose quota is spent rests (paused in the store) and gets nothing more; one
// deleted by hand is forgotten with its mappings; a write that fails alone fails its calendar; a dry run counts.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import type { Planned } from '../../src/push/adopt-plan.ts';
import { applyPlan, countPlanned } from '../../src/push/apply.ts';
import { PENDING } from '../../src/push/plan.ts';
import type { CalendarRef, WriteOp } from '../../src/push/provider.ts';
import { googleEventId } from '../../src/push/stable-ids.ts';
import type { PushMapping } from '../../src/store/types.ts';
import { create, identity, remove, update } from './google/on-fake.ts';
import { type GoogleStage, NOW, startGoogleStage } from './google-stage.ts';
import { desired, mapping, SCHOOL, stageCalendar, TARGET } from './stage-calendars.ts';

let g: GoogleStage;
beforeAll(async () => {
  g = await startGoogleStage();
});
afterAll(() => g?.close());

const STARTED = '2026-11-23T11:59:00.000Z';

/** The stage's context: chunks of `chunkSize`, and the warnings it logged. */
function context(chunkSize: number) {
  const base = g.context();
  const warnings: string[] = [];
  const log = createLogger({
    level: 'warn',
    destination: new Writable({
      write(chunk, _enc, cb) {
        warnings.push(JSON.parse(String(chunk)).msg);
        cb();
      },
    }),
  });
  return { ...base, warnings, ctx: { ...base.ctx, chunkSize, startedAt: STARTED, log } };
}

/** A calendar as the plan hands it on: reconciled this run, its writes `ops`. */
function planned(ref: CalendarRef, ops: WriteOp[], over: Partial<Planned> = {}): Planned {
  const c = stageCalendar(ref.key, { ref, desired: desired(...ops.map((o) => o.identity.sessionId)) });
  return { ...c, outcome: { ...c.outcome, reconciled: true }, ops, adopt: [], forget: [], ...over };
}
const mappingsOf = (key: string) => g.ts.store.push.listPushMappings(SCHOOL, TARGET, key);
const eventId = (key: string, s: number) => googleEventId(identity(key, s));
/** A create as the planner makes it for Google: under its deterministic id. */
const planCreate = (ref: CalendarRef, s: number) => ({
  ...create(ref, s),
  remoteEventId: eventId(ref.key, s),
});

describe('applying a plan', () => {
  it('writes in chunks across calendars, each create pending in the store before it is sent, its result after', async () => {
    const [a, b] = [await g.remoteCalendar('team:1'), await g.remoteCalendar('team:2')];
    let release!: () => void;
    const seen: PushMapping[][] = [];
    g.fake.knobs.holds = [
      {
        match: /^POST .*\/events$/,
        reached: () => {
          if (seen.length === 0)
            void mappingsOf('team:1')
              .then((m) => seen.push(m))
              .then(release);
        },
        release: new Promise<void>((r) => {
          release = r;
        }),
      },
    ];
    g.fake.resetStats();
    const { ctx, reached } = context(2);
    try {
      const [outA, outB] = await applyPlan(ctx, [
        planned(a, [planCreate(a, 1), planCreate(a, 2)]),
        planned(b, [planCreate(b, 3), planCreate(b, 4)]),
      ]);
      expect(seen[0]).toEqual([
        { ...mapping('team:1', 1, PENDING), remoteEventId: eventId('team:1', 1), updatedAt: STARTED },
      ]);
      // Two chunks of two, each with a write of each calendar: one batch each.
      expect([g.fake.stats.batches, g.fake.stats.batchItems]).toEqual([2, 4]);
      expect([outA!.outcome.counts.created, outB!.outcome.counts.created]).toEqual([2, 2]);
      expect(reached.length).toBeGreaterThanOrEqual(2);
      expect(await mappingsOf('team:1')).toEqual(
        [1, 2].map((s) => ({
          ...mapping('team:1', s, create(a, s).rendered.hash),
          remoteEventId: eventId('team:1', s),
          updatedAt: STARTED,
        })),
      );
      expect(await g.ts.store.push.listPushCalendars(SCHOOL, TARGET)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ calendarKey: 'team:1', lastReconciledAt: NOW, pausedUntil: null }),
        ]),
      );
    } finally {
      g.fake.knobs.holds = [];
    }
  });

  it('a calendar whose quota is spent rests until pauseMinutes from now and gets nothing more; others go on', async () => {
    const [spent, other] = [await g.remoteCalendar('team:3'), await g.remoteCalendar('team:4')];
    g.fake.knobs.quotaExceeded.add(spent.remoteCalendarId);
    const { ctx, warnings } = context(1);
    try {
      const [s, o] = await applyPlan(ctx, [
        planned(spent, [create(spent, 1), create(spent, 2)]),
        planned(other, [create(other, 3)]),
      ]);
      expect(s!.outcome).toMatchObject({
        state: 'paused',
        failure: 'quota',
        note: 'paused until 2026-11-23T12:30:00.000Z (quota exceeded)',
        counts: { failed: 1, created: 0 },
      });
      expect(o!.outcome).toMatchObject({ state: 'ok', counts: { created: 1, failed: 0 } });
      expect(await g.ts.store.push.listPushCalendars(SCHOOL, TARGET)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ calendarKey: 'team:3', pausedUntil: '2026-11-23T12:30:00.000Z' }),
        ]),
      );
      expect(warnings).toContain('push write failed');
    } finally {
      g.fake.knobs.quotaExceeded.delete(spent.remoteCalendarId);
    }
  });

  it('a calendar deleted by hand is forgotten with its mappings, to be created again next run', async () => {
    const gone = await g.remoteCalendar('team:5');
    await g.ts.store.push.upsertPushMappings([mapping('team:5', 7)]);
    g.fake.deleteCalendar(gone.remoteCalendarId);
    const { ctx, notes } = context(10);
    const [out] = await applyPlan(ctx, [
      planned(gone, [create(gone, 8)], { mappings: new Map([[7, mapping('team:5', 7)]]) }),
    ]);
    expect(out!.outcome).toMatchObject({ state: 'failed', failure: 'calendar-gone' });
    expect(notes).toEqual([
      'team:5: the remote calendar is gone (deleted by hand?): it is created again on the next run',
    ]);
    expect(await mappingsOf('team:5')).toEqual([]);
    expect(await g.ts.store.push.listPushCalendars(SCHOOL, TARGET)).toEqual(
      expect.arrayContaining([expect.objectContaining({ calendarKey: 'team:5', remoteCalendarId: '' })]),
    );
  });

  it('adopts and forgets mappings first; a delete drops its mapping unless the session is still wanted; one failed write fails the calendar', async () => {
    const cal = await g.remoteCalendar('team:6');
    // Events 5 and 6 already in the calendar: a create of 5 is adopted, 6 is updated; both count as updated.
    await g.provider.apply([planCreate(cal, 5), planCreate(cal, 6)]);
    await g.ts.store.push.upsertPushMappings([
      mapping('team:6', 1),
      mapping('team:6', 2),
      mapping('team:6', 3),
    ]);
    g.fake.knobs.faults = [{ match: /^POST .*\/events$/, status: 403, limit: 1 }];
    const { ctx, warnings } = context(10);
    try {
      const [out] = await applyPlan(ctx, [
        planned(
          cal,
          [
            create(cal, 9),
            remove(cal, 1, 'dup1evnt'),
            remove(cal, 2, 'old2evnt'),
            planCreate(cal, 5),
            update(cal, 6, eventId('team:6', 6)),
          ],
          { desired: desired(9, 1, 5, 6), adopt: [mapping('team:6', 4)], forget: [3] },
        ),
      ]);
      expect(out!.outcome).toMatchObject({
        state: 'failed',
        counts: { failed: 1, deleted: 2, created: 0, updated: 2 },
      });
      expect((await mappingsOf('team:6')).map((m) => [m.sessionId, m.contentHash])).toEqual([
        [1, 'h1'],
        [4, 'h4'],
        [5, create(cal, 5).rendered.hash],
        [6, create(cal, 6).rendered.hash],
        [9, PENDING],
      ]);
      expect(warnings).toEqual(['push write failed', 'some push writes failed']);
    } finally {
      g.fake.knobs.faults = [];
    }
  });

  it('a dry run counts what it would write', () => {
    const ref = { key: 'team:7', remoteCalendarId: 'cal-7', owner: null };
    const [out] = countPlanned([
      planned(ref, [create(ref, 1), create(ref, 2), update(ref, 4, 'ev4'), remove(ref, 3, 'ev3')]),
    ]);
    expect(out!.outcome.counts).toMatchObject({ created: 2, updated: 1, deleted: 1 });
  });
});
