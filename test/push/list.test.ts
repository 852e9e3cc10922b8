// The third push stage (push/list.ts): which calendars are compared with the remote this run (dueForListing), and
// their listing read through the real Google provider from the fake Google over HTTP, into a real SQLite store.
// An empty listing where nothing is mapped but events are desired is asked for twice before it is believed;
// a refused listing fails, skips or rests its calendar (quota: paused in the store, but not in a dry run).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ensured } from '../../src/push/ensure.ts';
import { dueForListing, type ListingDue, listCalendars } from '../../src/push/list.ts';
import { PENDING } from '../../src/push/plan.ts';
import type { CalendarRef } from '../../src/push/provider.ts';
import { type GoogleStage, startGoogleStage } from './google-stage.ts';
import { desired, mapping, mappings, SCHOOL, stageCalendar, TARGET } from './stage-calendars.ts';

const WINDOW = { from: '2026-09-01T00:00:00.000Z', to: '2027-06-30T00:00:00.000Z' };
const DUE: ListingDue = { reconcileAll: false, dueBefore: '2026-11-23T06:00:00.000Z' };

const ref = (key: string, remoteCalendarId = `cal-${key}`): CalendarRef => ({
  key,
  remoteCalendarId,
  owner: null,
});
const stored = (key: string, lastReconciledAt: string | null) => ({
  schoolId: SCHOOL,
  target: TARGET,
  calendarKey: key,
  remoteCalendarId: `cal-${key}`,
  pausedUntil: null,
  lastReconciledAt,
});
/** A calendar found (not created) this run, reconciled an hour ago, with one event desired and mapped. */
const settled = (key: string, over: Partial<Ensured> = {}): Ensured =>
  stageCalendar(key, {
    ref: ref(key),
    stored: stored(key, '2026-11-23T11:00:00.000Z'),
    desired: desired(1),
    mappings: mappings(key, 1),
    ...over,
  });

describe('which calendars are listed', () => {
  it('not one without a remote, created this run, or not ok', () => {
    const base = settled('team:1').outcome;
    expect(dueForListing(settled('team:1', { ref: null }), { ...DUE, reconcileAll: true })).toBe(false);
    expect(dueForListing(settled('team:1', { ref: ref('team:1', '') }), { ...DUE, reconcileAll: true })).toBe(
      false,
    );
    expect(dueForListing(settled('team:1', { fresh: true }), { ...DUE, reconcileAll: true })).toBe(false);
    for (const state of ['paused', 'skipped', 'failed', 'created'] as const)
      expect(
        dueForListing(settled('team:1', { outcome: { ...base, state } }), { ...DUE, reconcileAll: true }),
      ).toBe(false);
    expect(
      dueForListing(settled('team:1', { outcome: { ...base, state: 'retired' } }), {
        ...DUE,
        reconcileAll: true,
      }),
    ).toBe(true);
  });

  it('each when asked; else one whose mappings are lost or pending, or not reconciled since dueBefore', () => {
    expect(dueForListing(settled('team:1'), DUE)).toBe(false);
    expect(dueForListing(settled('team:1'), { ...DUE, reconcileAll: true })).toBe(true);
    expect(dueForListing(settled('team:1', { mappings: new Map() }), DUE)).toBe(true);
    // Nothing mapped and nothing desired: nothing to find out.
    expect(dueForListing(settled('team:1', { mappings: new Map(), desired: new Map() }), DUE)).toBe(false);
    expect(
      dueForListing(settled('team:1', { mappings: new Map([[1, mapping('team:1', 1, PENDING)]]) }), DUE),
    ).toBe(true);
    expect(
      dueForListing(settled('team:1', { stored: stored('team:1', '2026-11-23T05:59:00.000Z') }), DUE),
    ).toBe(true);
    expect(dueForListing(settled('team:1', { stored: stored('team:1', null) }), DUE)).toBe(true);
    expect(dueForListing(settled('team:1', { stored: null }), DUE)).toBe(true);
  });
});

describe('listing calendars from the remote', () => {
  let g: GoogleStage;
  beforeAll(async () => {
    g = await startGoogleStage();
  });
  afterAll(() => g?.close());

  it('lists the calendars due, asks twice before believing an empty one, and passes the others through', async () => {
    const [lost, recent] = await Promise.all([g.remoteCalendar('team:1'), g.remoteCalendar('team:2')]);
    g.fake.resetStats();
    const { ctx, notes } = g.context();
    const out = await listCalendars(
      ctx,
      [settled('team:1', { ref: lost, mappings: new Map() }), settled('team:2', { ref: recent })],
      DUE,
      WINDOW,
    );
    expect(out.map((c) => c.listing)).toEqual([[], null]);
    expect(g.fake.stats.byOperation['GET events.list']).toBe(2);
    expect(out[0]!.outcome.state).toBe('ok');
    expect(notes).toEqual([]);
  });

  it('a calendar whose quota is spent rests: paused until pauseMinutes from now, in the store, not in a dry run', async () => {
    const spent = await g.remoteCalendar('team:3');
    g.fake.knobs.quotaExceeded.add(spent.remoteCalendarId);
    try {
      const dry = g.context(true);
      const [d] = await listCalendars(
        dry.ctx,
        [settled('team:3', { ref: spent })],
        { ...DUE, reconcileAll: true },
        WINDOW,
      );
      expect(d!.outcome).toMatchObject({ state: 'paused', failure: 'quota' });
      expect(d!.listing).toBeNull();
      expect(await g.ts.store.push.listPushCalendars(SCHOOL, TARGET)).toEqual([]);

      const real = g.context();
      const [c] = await listCalendars(
        real.ctx,
        [settled('team:3', { ref: spent })],
        { ...DUE, reconcileAll: true },
        WINDOW,
      );
      expect(c!.outcome).toMatchObject({ state: 'paused', failure: 'quota' });
      expect(real.reached).toEqual([c!.outcome]);
      expect(real.notes).toEqual([expect.stringMatching(/^team:3: remote listing failed: /)]);
      expect(await g.ts.store.push.listPushCalendars(SCHOOL, TARGET)).toMatchObject([
        { calendarKey: 'team:3', pausedUntil: '2026-11-23T12:30:00.000Z' },
      ]);
    } finally {
      g.fake.knobs.quotaExceeded.delete(spent.remoteCalendarId);
    }
  });
});
