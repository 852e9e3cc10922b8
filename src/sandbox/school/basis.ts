// What every part of the generated school is drawn against: the scale's sizes, the instant the school is generated
// for, and the weeks of its year. Nothing here draws from a random generator.

import type { Scale } from '../model.ts';
import type { Rng } from '../prng.ts';
import { DAY, HOUR } from '../time.ts';

export const SCHOOL_TIME_ZONE = 'Australia/Sydney';

export interface ScaleSpec {
  activities: number;
  teams: number;
  students: number;
  staff: number;
  /** Regular sessions per team per in-season week. */
  regularPerWeek: number;
  looseSessions: number;
}

export const SCALES: Record<Scale, ScaleSpec> = {
  small: { activities: 4, teams: 5, students: 60, staff: 12, regularPerWeek: 1, looseSessions: 10 },
  school: { activities: 24, teams: 120, students: 1200, staff: 120, regularPerWeek: 1, looseSessions: 300 },
  district: {
    activities: 24,
    teams: 1200,
    students: 12000,
    staff: 1200,
    regularPerWeek: 1,
    looseSessions: 3000,
  },
};

export const YEAR_GROUPS = ['Year 7', 'Year 8', 'Year 9', 'Year 10', 'Year 11', 'Year 12'];
export const CATEGORIES: readonly (readonly [string, number, number])[] = [
  // name, first year index, last year index (into YEAR_GROUPS)
  ['Junior', 0, 1],
  ['Intermediate', 2, 3],
  ['Senior', 4, 5],
  ['Open', 0, 5],
];
export const SUBCATEGORIES = ['Boys', 'Girls', 'Mixed'] as const;

export interface Basis {
  spec: ScaleSpec;
  nowMs: number;
  tz: string;
  /** Week 0 of the generated year: midnight UTC of the Monday 24 weeks before the week of `nowMs`. */
  yearStart: number;
  /** Whether the school has days off (school-calendar.ts); without, it is in term every day of the year. */
  holidays: boolean;
}

export function basisFor(spec: ScaleSpec, nowMs: number, holidays = true): Basis {
  return { spec, nowMs, tz: SCHOOL_TIME_ZONE, yearStart: mondayOf(nowMs) - 24 * 7 * DAY, holidays };
}

/** Midnight UTC of the Monday of the week containing `ms`. */
function mondayOf(ms: number): number {
  const day = Math.floor(ms / DAY) * DAY;
  const dow = (new Date(day).getUTCDay() + 6) % 7;
  return day - dow * DAY;
}

/** An instant between an hour and `maxDays` days before now. */
export function pastStamp(basis: Basis, r: Rng, maxDays: number): number {
  return basis.nowMs - r.int(HOUR, maxDays * DAY);
}

/** Groups `items` by `key`, each group in the order of `items`. */
export function groupBy<T>(items: readonly T[], key: (item: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const list = groups.get(key(item)) ?? [];
    list.push(item);
    groups.set(key(item), list);
  }
  return groups;
}
