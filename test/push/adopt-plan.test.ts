// The fifth push stage (push/adopt-plan.ts): the planner's result taken onto each calendar. Its counts add to what
// the stages before counted, its findings mark the outcome, its planned operations join a dry run's, and what the
// planner read (the listing, the departed sessions) is not handed to the applier.
import { describe, expect, it } from 'vitest';
import { adoptPlan } from '../../src/push/adopt-plan.ts';
import { type CalendarPlan, emptyPlan, type PushPlan } from '../../src/push/plan.ts';
import type { RemoteEvent, WriteOp } from '../../src/push/provider.ts';
import { desired, mapping, mappings, SCHOOL, stageCalendar, TARGET } from './stage-calendars.ts';

const plan = (key: string, over: Partial<CalendarPlan> = {}): CalendarPlan => ({
  ...emptyPlan(key),
  ...over,
});
const pushPlan = (...calendars: CalendarPlan[]): PushPlan => ({ calendars, warnings: [] });

const listed: RemoteEvent = {
  remoteEventId: 'ev1',
  calendarKey: 'team:1',
  sessionId: 1,
  hash: 'h1',
  start: null,
  end: null,
  live: true,
};

describe('adopting the plan', () => {
  it("adds the plan's unchanged to the counts, marks reconciled and untrusted as the plan found, calendar by calendar", () => {
    const a = stageCalendar('team:1', {
      outcome: {
        ...stageCalendar('team:1').outcome,
        counts: { ...stageCalendar('x').outcome.counts, unchanged: 2 },
      },
    });
    const b = stageCalendar('team:2');
    const [pa, pb] = adoptPlan(
      [a, b],
      pushPlan(plan('team:1', { unchanged: 3, reconciled: true }), plan('team:2', { untrusted: true })),
    );
    expect(pa!.outcome).toMatchObject({ reconciled: true, untrusted: false, counts: { unchanged: 5 } });
    expect(pb!.outcome).toMatchObject({ reconciled: false, untrusted: true, counts: { unchanged: 0 } });
    // The stage's input is left as it was.
    expect(a.outcome.counts.unchanged).toBe(2);
  });

  it("carries the plan's writes and bookkeeping, and leaves behind what the planner read", () => {
    const ref = { key: 'team:1', remoteCalendarId: 'cal-1', owner: null };
    const op: WriteOp = {
      kind: 'delete',
      calendar: ref,
      identity: { schoolId: SCHOOL, target: TARGET, calendarKey: 'team:1', sessionId: 9 },
      remoteEventId: 'ev9',
    };
    const c = stageCalendar('team:1', {
      desired: desired(1),
      mappings: mappings('team:1', 1, 2),
      listing: [listed],
      departed: new Map([
        [2, { start: '2026-11-01T10:00:00.000Z', end: '2026-11-01T11:00:00.000Z', deleted: true }],
      ]),
      retire: ['old-calendar'],
    });
    const [p] = adoptPlan(
      [c],
      pushPlan(plan('team:1', { ops: [op], adopt: [mapping('team:1', 1)], forget: [2] })),
    );
    expect(p).toMatchObject({
      ops: [op],
      adopt: [mapping('team:1', 1)],
      forget: [2],
      retire: ['old-calendar'],
    });
    expect(p!.desired).toBe(c.desired);
    expect(p!.mappings).toBe(c.mappings);
    expect(Object.keys(p!).sort()).toEqual(
      ['adopt', 'desired', 'forget', 'mappings', 'ops', 'outcome', 'ref', 'retire', 'spec', 'stored'].sort(),
    );
  });

  it("adds planned operations to a dry run's outcome only", () => {
    const planned = [{ kind: 'create' as const, sessionId: 4, title: 'Match', start: null, reason: 'new' }];
    const dry = stageCalendar('team:1', { outcome: { ...stageCalendar('team:1').outcome, ops: [] } });
    const real = stageCalendar('team:2');
    const [d, r] = adoptPlan([dry, real], pushPlan(plan('team:1', { planned }), plan('team:2', { planned })));
    expect(d!.outcome.ops).toEqual(planned);
    expect(r!.outcome).not.toHaveProperty('ops');
  });
});
