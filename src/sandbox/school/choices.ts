// What families chose and told the school: selection seasons with activity selections, and pre-explained
// absences (a few cover today, so team sheets show `absentToday`).

import { wallToUtc } from '../../util/time-zone.ts';
import { ABSENCE_REASONS } from '../fixed-facts.ts';
import type { SAbsence, SActivity, SActivitySelection, SSeason, SStudent } from '../model.ts';
import type { Rng } from '../prng.ts';
import { DAY, HOUR, MINUTE } from '../time.ts';
import type { Basis } from './basis.ts';

export function makeSeasons(basis: Basis, liveActivities: readonly SActivity[]): SSeason[] {
  const { nowMs, yearStart } = basis;
  const optionsFor = (seasonId: number) =>
    liveActivities
      .slice(0, 8)
      .map((a, k) => ({ id: `${seasonId}-${k + 1}`, label: `${a.name} (${k % 2 === 0 ? 'Mon' : 'Thu'})` }));
  return [
    {
      id: 31,
      name: 'Semester 1 Co-curricular',
      hidden: true,
      open: yearStart - 30 * DAY,
      close: yearStart - 10 * DAY,
      options: optionsFor(31),
    },
    {
      id: 32,
      name: 'Semester 2 Co-curricular',
      hidden: false,
      open: nowMs - 40 * DAY,
      close: nowMs + 10 * DAY,
      options: optionsFor(32),
    },
    { id: 33, name: 'Summer Sport Trials', hidden: false, open: null, close: null, options: [] },
  ];
}

export function makeSelections(
  basis: Basis,
  selRng: Rng,
  students: readonly SStudent[],
  seasons: readonly SSeason[],
  liveActivities: readonly SActivity[],
): SActivitySelection[] {
  const { nowMs } = basis;
  const selections: SActivitySelection[] = [];
  for (const s of students) {
    if (!s.current || !selRng.chance(0.4)) continue;
    const count = selRng.int(1, 2);
    for (let k = 0; k < count; k++) {
      const season = selRng.pick(seasons);
      const option = season.options.length > 0 ? selRng.pick(season.options) : null;
      const activity = option
        ? liveActivities[Number(option.id.split('-')[1]) - 1]!
        : selRng.pick(liveActivities);
      const base = season.open ?? nowMs - 100 * DAY;
      const id = 40001 + selections.length;
      selections.push({
        id,
        selectedTimestamp: Math.min(nowMs - MINUTE, base + selRng.int(0, 20 * 24) * HOUR),
        selectedByGuardianId: selRng.chance(0.6) ? (s.guardians[0]?.id ?? null) : null,
        onWaitlist: selRng.chance(0.1),
        activityId: activity.id,
        seasonId: season.id,
        seasonActivityOptionId: option?.id ?? null,
        studentId: s.id,
        invoice: {
          id: `inv_${(id * 2654435761).toString(36).slice(-8)}`,
          reference: `CB-${String(100000 + id)}`,
          status: selRng.weighted([
            ['paid', 55],
            ['unpaid', 25],
            ['partially-paid', 12],
            ['processing', 8],
          ] as const),
        },
        deleted: selRng.chance(0.04),
      });
    }
  }
  return selections;
}

export function makeAbsences(basis: Basis, absRng: Rng, students: readonly SStudent[]): SAbsence[] {
  const { nowMs, tz } = basis;
  const absences: SAbsence[] = [];
  for (const s of students) {
    if (!s.current || !absRng.chance(0.12)) continue;
    const n = absRng.int(1, 2);
    for (let k = 0; k < n; k++) {
      const coversNow = absRng.chance(0.15);
      const startDay = coversNow
        ? Math.floor(nowMs / DAY) * DAY
        : Math.floor(nowMs / DAY) * DAY + absRng.int(-60, 60) * DAY;
      const start = wallToUtc(startDay, absRng.pick([0, 8, 13]), 0, tz);
      const end = start + absRng.pick([4, 10, 24, 72]) * HOUR + (coversNow ? DAY : 0);
      absences.push({
        id: 7001 + absences.length,
        studentId: s.id,
        start: coversNow ? Math.min(start, nowMs - HOUR) : start,
        end,
        explained: absRng.chance(0.85),
        reason: absRng.pick(ABSENCE_REASONS),
        updatedAt: Math.min(nowMs - MINUTE, start - absRng.int(1, 14) * DAY),
      });
    }
  }
  return absences;
}
