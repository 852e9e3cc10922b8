// Families' acts (issue 40), on SQLite and PostgreSQL (once part of store/contract.ts, run for both there too). The decisions
// are taken in the store, so concurrent callers (here: one process's pool; in production, replicas) never both win.
import { describe, expect, it } from 'vitest';
import type { AbsenceAct } from '../../src/store/types.ts';
import { describeOnEachStore } from './each-store.ts';

const T0 = '2026-11-01T08:00:00.000Z';
const DAY_AGO = '2026-10-31T08:00:00.000Z';
let next = 900_000;

function act(over: Partial<AbsenceAct> = {}): AbsenceAct {
  return {
    schoolId: 'acts',
    studentId: next++,
    sessionId: 1,
    linkId: 'a1b2c3d4e5f6',
    state: 'pending',
    absenceId: null,
    start: '2026-11-03T05:00:00.000Z',
    end: '2026-11-03T06:30:00.000Z',
    reservedAt: T0,
    updatedAt: T0,
    ...over,
  };
}

describeOnEachStore('SqlFamilyActs (store.families)', (store) => {
  describe('families’ acts', () => {
    it('one reservation per child and session, however many ask at once', async () => {
      const a = act();
      const results = await Promise.all(
        Array.from({ length: 8 }, () => store().families.reserveAbsence(a, { max: 3, since: DAY_AGO })),
      );
      expect(results.filter((r) => r.taken)).toHaveLength(1);
      for (const r of results.filter((x) => !x.taken))
        expect('existing' in r && r.existing).toMatchObject({ state: 'pending', sessionId: 1 });
      expect(await store().families.getAbsenceAct(a)).toEqual(a);
    });

    it('at most `max` standing for a child, under concurrency; a released one no longer counts', async () => {
      const child = next++;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store().families.reserveAbsence(act({ studentId: child, sessionId: 10 + i }), {
            max: 3,
            since: DAY_AGO,
          }),
        ),
      );
      expect(results.filter((r) => r.taken)).toHaveLength(3);
      for (const r of results.filter((x) => !x.taken)) expect(r).toEqual({ taken: false, standing: 3 });
      const mine = await store().families.listAbsenceActs('acts', [child]);
      expect(mine).toHaveLength(3);
      expect(await store().families.releaseAbsenceAct(mine[0]!, ['reported'])).toBe(false);
      expect(await store().families.releaseAbsenceAct(mine[0]!, ['pending'])).toBe(true);
      const again = await store().families.reserveAbsence(act({ studentId: child, sessionId: 99 }), {
        max: 3,
        since: DAY_AGO,
      });
      expect(again.taken).toBe(true);
      // Made before the limit's start: not counted.
      const later = await store().families.reserveAbsence(act({ studentId: child, sessionId: 98 }), {
        max: 3,
        since: '2026-11-01T09:00:00.000Z',
      });
      expect(later.taken).toBe(true);
    });

    it('nothing is reserved when the step inside its transaction fails', async () => {
      const a = act();
      await expect(
        store().families.reserveAbsence(a, { max: 3, since: DAY_AGO }, async () => {
          throw new Error('disk full');
        }),
      ).rejects.toThrow('disk full');
      expect(await store().families.getAbsenceAct(a)).toBeNull();
    });

    it('moves an act on only from the states named, and lists the unsettled ones', async () => {
      const a = act();
      expect(await store().families.moveAbsenceAct({ ...a, state: 'undoing' }, ['reported'])).toBe(false);
      expect(await store().families.moveAbsenceAct({ ...a, state: 'undoing' }, [null])).toBe(true);
      const later = '2026-11-01T08:05:00.000Z';
      expect(
        await store().families.moveAbsenceAct({ ...a, state: 'unknown', absenceId: 7, updatedAt: later }, [
          'pending',
        ]),
      ).toBe(false);
      expect(
        await store().families.moveAbsenceAct({ ...a, state: 'reported', absenceId: 7, updatedAt: later }, [
          'undoing',
        ]),
      ).toBe(true);
      expect(await store().families.getAbsenceAct(a)).toMatchObject({ state: 'reported', absenceId: 7 });
      const u = act({ state: 'unknown' });
      await store().families.moveAbsenceAct(u, [null]);
      const unsettled = await store().families.listUnsettledAbsenceActs(
        ['unknown'],
        '2026-11-01T08:00:01.000Z',
      );
      expect(unsettled.map((x) => x.studentId)).toContain(u.studentId);
      expect(unsettled.map((x) => x.studentId)).not.toContain(a.studentId);
      expect(await store().families.listUnsettledAbsenceActs(['unknown'], T0)).toEqual([]);
    });

    it('counts acts per address across callers, within the window', async () => {
      const key = `203.0.113.${next++ % 250}`;
      const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store().families.takeAddressAct('acts', key, { at: at(i), since: DAY_AGO, max: 4 }),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(4);
      const refused = results.find((r) => !r.ok);
      expect(refused && !refused.ok && Date.parse(refused.oldest)).toBeGreaterThanOrEqual(Date.parse(T0));
      // An hour on, the old acts are forgotten.
      const hourOn = await store().families.takeAddressAct('acts', key, {
        at: at(3700),
        since: at(100),
        max: 4,
      });
      expect(hourOn.ok).toBe(true);
    });

    it('forgets address acts and reported acts of sessions over, a day on', async () => {
      const done = act({
        state: 'reported',
        absenceId: 5,
        end: '2026-10-20T06:30:00.000Z',
        reservedAt: '2026-10-19T06:30:00.000Z',
      });
      const standing = act({ state: 'reported', absenceId: 6 });
      const lost = act({
        state: 'unknown',
        end: '2026-10-20T06:30:00.000Z',
        reservedAt: '2026-10-19T06:30:00.000Z',
      });
      for (const a of [done, standing, lost]) await store().families.moveAbsenceAct(a, [null]);
      await store().families.takeAddressAct('acts', 'prune-me', {
        at: '2026-10-19T06:30:00.000Z',
        since: '2026-10-19T00:00:00.000Z',
        max: 1,
      });
      expect(await store().families.pruneFamilyActs(DAY_AGO)).toBeGreaterThanOrEqual(2);
      expect(await store().families.getAbsenceAct(done)).toBeNull();
      expect(await store().families.getAbsenceAct(standing)).not.toBeNull();
      // Not settled yet: kept until it is.
      expect(await store().families.getAbsenceAct(lost)).not.toBeNull();
      const again = await store().families.takeAddressAct('acts', 'prune-me', {
        at: T0,
        since: '2026-10-19T00:00:00.000Z',
        max: 1,
      });
      expect(again.ok).toBe(true);
    });

    it('an act not made stands for nothing, is replaced by a new one, counts once reported, and goes a day on', async () => {
      const limit = { max: 1, since: DAY_AGO };
      const gone = act({ state: 'not-made' });
      expect(await store().families.moveAbsenceAct(gone, [null])).toBe(true);
      // Invisible to every read but the settle step's, and against no limit.
      expect(await store().families.getAbsenceAct(gone)).toBeNull();
      expect(await store().families.listAbsenceActs('acts', [gone.studentId])).toEqual([]);
      expect(
        (await store().families.listUnsettledAbsenceActs(['not-made'], '2026-11-02T00:00:00.000Z')).map(
          (a) => a.studentId,
        ),
      ).toContain(gone.studentId);
      const other = { ...gone, sessionId: 2, state: 'pending' as const };
      expect(await store().families.reserveAbsence(other, limit)).toEqual({ taken: true });
      expect(await store().families.releaseAbsenceAct(other, ['pending'])).toBe(true);
      // A report of the same session again replaces it.
      expect(await store().families.reserveAbsence({ ...gone, state: 'pending' }, limit)).toEqual({
        taken: true,
      });
      expect(await store().families.getAbsenceAct(gone)).toMatchObject({ state: 'pending' });
      expect(await store().families.moveAbsenceAct({ ...gone, state: 'not-made' }, ['pending'])).toBe(true);
      // So does an undo of the absence its late write made (a move from none).
      expect(await store().families.moveAbsenceAct({ ...gone, state: 'undoing', absenceId: 7 }, [null])).toBe(
        true,
      );
      expect(await store().families.getAbsenceAct(gone)).toMatchObject({ state: 'undoing', absenceId: 7 });
      expect(await store().families.moveAbsenceAct({ ...gone, state: 'not-made' }, ['undoing'])).toBe(true);
      // Found late: reported, and it counts.
      expect(
        await store().families.moveAbsenceAct({ ...gone, state: 'reported', absenceId: 8 }, ['not-made']),
      ).toBe(true);
      expect(await store().families.reserveAbsence(other, limit)).toEqual({ taken: false, standing: 1 });
      // Never found: gone a day after its report.
      const old = act({ state: 'not-made', reservedAt: '2026-10-30T08:00:00.000Z' });
      await store().families.moveAbsenceAct(old, [null]);
      await store().families.pruneFamilyActs(DAY_AGO);
      expect(
        (await store().families.listUnsettledAbsenceActs(['not-made'], T0)).map((a) => a.studentId),
      ).not.toContain(old.studentId);
    });
  });
});
