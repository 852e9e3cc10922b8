// The planner on plain objects: desired events, mappings and a remote listing in, operations per calendar out.
import { describe, expect, it } from 'vitest';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import type { Id } from '../../src/domain/types.ts';
import {
  type CalendarInput,
  type Departed,
  type Desired,
  PENDING,
  type PlanContext,
  planPush,
} from '../../src/push/plan.ts';
import type { CalendarRef, FailureKind, RemoteEvent } from '../../src/push/provider.ts';
import { isGone, noteFailure } from '../../src/push/summary.ts';
import type { PushMapping } from '../../src/store/types.ts';

const WINDOW = { from: '2026-09-01T00:00:00.000Z', to: '2027-06-30T00:00:00.000Z' };
const ctx: PlanContext = {
  schoolId: 'hill',
  target: 'g',
  window: WINDOW,
  maxShrinkFraction: 0.5,
  force: false,
  at: '2026-11-23T12:00:00.000Z',
  eventIdFor: (i) => `ev${i.calendarKey.replace(':', '')}s${i.sessionId}`,
};

function start(sessionId: Id): string {
  return new Date(Date.parse('2026-10-01T15:00:00.000Z') + sessionId * 86_400_000).toISOString();
}

function desired(key: string, sessionId: Id, hash = `h${sessionId}`): Desired {
  const event = {
    sessionId,
    title: `Session ${sessionId}`,
    start: start(sessionId),
    end: start(sessionId),
    status: 'confirmed',
  } as CalendarEvent;
  return {
    sessionId,
    event,
    rendered: { body: { summary: event.title }, hash },
    identity: { schoolId: 'hill', target: 'g', calendarKey: key, sessionId },
  };
}

function mapping(
  key: string,
  sessionId: Id,
  hash = `h${sessionId}`,
  remoteEventId = `r${sessionId}`,
): PushMapping {
  return {
    schoolId: 'hill',
    target: 'g',
    calendarKey: key,
    sessionId,
    remoteEventId,
    contentHash: hash,
    updatedAt: '2026-11-01T00:00:00.000Z',
  };
}

function remote(key: string, sessionId: Id | null, o: Partial<RemoteEvent> = {}): RemoteEvent {
  return {
    remoteEventId: `r${sessionId}`,
    calendarKey: key,
    sessionId,
    hash: `h${sessionId}`,
    start: sessionId === null ? null : start(sessionId),
    end: sessionId === null ? null : start(sessionId),
    live: true,
    ...o,
  };
}

function calendar(
  key: string,
  o: {
    desired?: Desired[];
    mappings?: PushMapping[];
    listing?: RemoteEvent[];
    departed?: [Id, Departed][];
    state?: CalendarInput['state'];
  },
): CalendarInput {
  const ref: CalendarRef = { key, remoteCalendarId: `cal-${key}`, owner: null };
  return {
    key,
    state: o.state ?? 'ok',
    ref,
    desired: new Map((o.desired ?? []).map((d) => [d.sessionId, d])),
    mappings: new Map((o.mappings ?? []).map((m) => [m.sessionId, m])),
    listing: o.listing ?? null,
    departed: new Map(o.departed ?? []),
  };
}

const summary = (ops: { kind: string; identity: { sessionId: Id } }[]) =>
  ops.map((o) => `${o.kind} ${o.identity.sessionId}`);

describe('the push planner', () => {
  it('against the mapping table: creates what is new, updates what changed, leaves the rest alone', () => {
    const key = 'team:1';
    const plan = planPush(
      [
        calendar(key, {
          desired: [desired(key, 1), desired(key, 2, 'h2-new'), desired(key, 3), desired(key, 4)],
          mappings: [mapping(key, 2), mapping(key, 3), mapping(key, 4, PENDING, 'evteam1s4')],
        }),
      ],
      ctx,
    );
    const [c] = plan.calendars;
    expect(summary(c!.ops)).toEqual(['create 1', 'update 2', 'create 4']);
    expect(c!.planned.map((p) => p.reason)).toEqual(['new', 'changed', 'unfinished create']);
    expect(c!.ops[0]).toMatchObject({ kind: 'create', remoteEventId: 'evteam1s1' });
    expect(c!.ops[1]).toMatchObject({ kind: 'update', remoteEventId: 'r2' });
    expect(c!.unchanged).toBe(1);
    expect(c!.reconciled).toBe(false);
    expect(plan.warnings).toEqual([]);
  });

  it('deletes the event of a deleted session, keeps one whose session moved out of the window', () => {
    const key = 'team:1';
    const desiredOnes = [1, 2, 3, 4].map((id) => desired(key, id));
    const plan = planPush(
      [
        calendar(key, {
          desired: desiredOnes,
          mappings: [...desiredOnes.map((d) => mapping(key, d.sessionId)), mapping(key, 8), mapping(key, 9)],
          departed: [
            [8, { start: start(8), end: start(8), deleted: true }],
            [9, { start: '2027-08-01T15:00:00.000Z', end: '2027-08-01T16:00:00.000Z', deleted: false }],
          ],
        }),
      ],
      ctx,
    );
    const [c] = plan.calendars;
    expect(summary(c!.ops)).toEqual(['delete 8']);
    expect(c!.planned[0]).toMatchObject({ reason: 'session deleted', start: start(8) });
    expect(c!.unchanged).toBe(4);
  });

  it('a session moved to another team leaves this calendar; one gone from the store is deleted too', () => {
    const key = 'team:1';
    const plan = planPush(
      [
        calendar(key, {
          desired: [desired(key, 1)],
          mappings: [mapping(key, 1), mapping(key, 5), mapping(key, 6)],
          departed: [[5, { start: start(5), end: start(5), deleted: false }]],
        }),
      ],
      ctx,
    );
    const [c] = plan.calendars;
    expect(summary(c!.ops)).toEqual(['delete 5', 'delete 6']);
    expect(c!.planned.map((p) => p.reason)).toEqual(['no longer in this calendar', 'session deleted']);
  });

  it('with a trusted listing: deletes duplicates and orphans, restores what vanished, adopts what matches', () => {
    const key = 'team:1';
    const listing = [
      remote(key, 1),
      remote(key, 1, { remoteEventId: 'r1-copy' }),
      remote(key, 2, { remoteEventId: 'found-2' }),
      remote(key, 3, { live: false }),
      remote(key, 7),
      remote(key, 8, { start: '2025-01-01T00:00:00.000Z', end: '2025-01-01T01:00:00.000Z' }),
    ];
    const plan = planPush(
      [
        calendar(key, {
          desired: [desired(key, 1), desired(key, 2), desired(key, 3), desired(key, 4)],
          mappings: [mapping(key, 1), mapping(key, 3), mapping(key, 4)],
          listing,
        }),
      ],
      ctx,
    );
    const [c] = plan.calendars;
    expect(c!.reconciled).toBe(true);
    expect(c!.ops.map((o) => `${o.kind} ${o.remoteEventId}`)).toEqual([
      'delete r1-copy',
      'update r3',
      'create evteam1s4',
      'delete r7',
    ]);
    expect(c!.planned.map((p) => p.reason)).toEqual([
      'duplicate',
      'deleted remotely: restore',
      'missing remotely',
      'orphan',
    ]);
    // A re-creation on Graph needs a new transactionId generation: the old id.
    expect(c!.ops[2]).toMatchObject({ generation: 'r4' });
    // Found remotely, unchanged, not mapped: adopted without a write.
    expect(c!.adopt).toEqual([
      expect.objectContaining({ sessionId: 2, remoteEventId: 'found-2', contentHash: 'h2' }),
    ]);
    expect(c!.unchanged).toBe(2);
  });

  it('does not trust a listing much smaller than what we wrote: plans from the mappings and warns', () => {
    const key = 'team:1';
    const ids = [1, 2, 3, 4, 5, 6];
    const plan = planPush(
      [
        calendar(key, {
          desired: ids.map((id) => desired(key, id)),
          mappings: ids.map((id) => mapping(key, id)),
          listing: [remote(key, 1), remote(key, 2)],
        }),
      ],
      ctx,
    );
    const [c] = plan.calendars;
    expect(c!.untrusted).toBe(true);
    expect(c!.reconciled).toBe(false);
    expect(c!.ops).toEqual([]);
    expect(c!.unchanged).toBe(6);
    expect(plan.warnings).toEqual(['team:1: the remote listing shows 2 of 6 events we wrote; not trusted']);
  });

  it('an empty listing where we wrote events is not trusted either', () => {
    const key = 'team:1';
    const plan = planPush(
      [calendar(key, { desired: [desired(key, 1)], mappings: [mapping(key, 1)], listing: [] })],
      ctx,
    );
    expect(plan.calendars[0]!.untrusted).toBe(true);
    expect(plan.calendars[0]!.ops).toEqual([]);
  });

  it('plans each child’s calendar of a family on its own: a shared session lands in both, once each', () => {
    const a = 'student:10';
    const b = 'student:11';
    const plan = planPush(
      [
        calendar(a, { desired: [desired(a, 1), desired(a, 2)], mappings: [mapping(a, 1)] }),
        calendar(b, {
          desired: [desired(b, 1)],
          listing: [remote(b, 1, { remoteEventId: 'b1' }), remote(a, 2, { remoteEventId: 'stray' })],
        }),
      ],
      ctx,
    );
    const [ca, cb] = plan.calendars;
    expect(summary(ca!.ops)).toEqual(['create 2']);
    expect(ca!.ops[0]!.calendar.key).toBe(a);
    // In b's calendar an event tagged for a's calendar is not ours to keep.
    expect(cb!.ops.map((o) => `${o.kind} ${o.remoteEventId}`)).toEqual(['delete stray']);
    expect(cb!.adopt.map((m) => [m.calendarKey, m.sessionId, m.remoteEventId])).toEqual([[b, 1, 'b1']]);
  });

  it('drops deletions that trip the guard unless forced', () => {
    const key = 'team:1';
    const ids = Array.from({ length: 30 }, (_, i) => i + 1);
    const input = () =>
      calendar(key, {
        desired: ids.slice(0, 5).map((id) => desired(key, id)),
        mappings: ids.map((id) => mapping(key, id)),
      });
    const guarded = planPush([input()], ctx);
    expect(guarded.calendars[0]!.ops).toEqual([]);
    expect(guarded.warnings).toEqual([
      '25 deletions of 30 pushed events exceed the guard; deleting nothing (rerun with force to apply)',
    ]);
    const forced = planPush([input()], { ...ctx, force: true });
    expect(forced.calendars[0]!.ops).toHaveLength(25);
    expect(forced.warnings).toEqual([]);
  });

  it('an empty store deletes nothing', () => {
    const key = 'team:1';
    const plan = planPush([calendar(key, { mappings: [mapping(key, 1), mapping(key, 2)] })], ctx);
    expect(plan.calendars[0]!.ops).toEqual([]);
    expect(plan.warnings).toEqual([
      'nothing to push but 2 events pushed before: the store looks empty; deleting nothing',
    ]);
  });

  it('does not empty many calendars that left the scope at once', () => {
    const keep = calendar('team:1', { desired: [desired('team:1', 1)], mappings: [mapping('team:1', 1)] });
    const retired = [2, 3, 4, 5].map((n) =>
      calendar(`team:${n}`, { state: 'retired', mappings: [mapping(`team:${n}`, 100 + n)] }),
    );
    const plan = planPush([keep, ...retired], ctx);
    expect(plan.warnings).toEqual(['4 calendars left the scope at once; not emptying them']);
    for (const c of plan.calendars.slice(1)) {
      expect(c.ops).toEqual([]);
      expect(c.planned).toHaveLength(1);
    }
  });

  it('a calendar that is paused, skipped or gone gets no operations', () => {
    const key = 'team:1';
    const paused = calendar(key, { desired: [desired(key, 1)], state: 'paused' });
    const gone = {
      ...calendar('team:2', { desired: [desired('team:2', 1)] }),
      failure: 'calendar-gone' as const,
    };
    const plan = planPush([paused, gone], ctx);
    expect(plan.calendars.map((c) => c.ops)).toEqual([[], []]);
  });

  it('a calendar found gone stays gone when another write to it fails after (it is forgotten after the run)', () => {
    const outcome: { failure?: FailureKind } = {};
    noteFailure(outcome, 'quota');
    expect(isGone(outcome)).toBe(false);
    noteFailure(outcome, 'calendar-gone');
    noteFailure(outcome, 'error');
    expect(outcome.failure).toBe('calendar-gone');
    expect(isGone(outcome)).toBe(true);
  });
});
