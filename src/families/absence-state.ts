// Whether families of a school may report absences now, and why not: the school's setting, and what the upstream
// last said about writing them (a 403: the API token may not write pre-explained absences). The refusal is kept in
// the store (a per-school cursor), so every replica hides the option and `rostercal status` can say why.
import type { SchoolConfig } from '../config.ts';
import type { Instant } from '../domain/types.ts';
import type { SchoolId, Store } from '../store/types.ts';

const REFUSED_KEY = 'families.absences.refused';

export interface AbsenceWriteRefusal {
  at: Instant;
  status: number;
}

export type AbsenceReporting =
  | { on: true }
  | { on: false; reason: 'off' | 'refused' | 'read-only'; why: string; refusedAt?: Instant };

export const REPORTING_OFF =
  'off (families.reportAbsences is not set for this school): families cannot say "can\u2019t make it" from their calendar pages';

export function refusedWhy(r: AbsenceWriteRefusal): string {
  return `turned on, but hidden from families: the upstream answered ${r.status} to POST /pre-explained-absences at ${r.at} (the API token may not write pre-explained absences). Give the token that permission in the school's system, then start serve again (which clears this).`;
}

export async function readRefusal(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
): Promise<AbsenceWriteRefusal | null> {
  const raw = await store.records.getCursor(schoolId, REFUSED_KEY);
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Partial<AbsenceWriteRefusal>;
    return typeof v.at === 'string' && typeof v.status === 'number' ? { at: v.at, status: v.status } : null;
  } catch {
    return null;
  }
}

export function recordRefusal(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  r: AbsenceWriteRefusal,
): Promise<void> {
  return store.records.setCursor(schoolId, REFUSED_KEY, JSON.stringify(r));
}

/** At start: a new token (or new permissions) may write, so the next report tries again. */
export function clearRefusal(store: Pick<Store, 'records'>, schoolId: SchoolId): Promise<void> {
  return store.records.setCursor(schoolId, REFUSED_KEY, '');
}

/** The state of the feature for a school, as /admin, `status` and the landing pages read it. */
export async function absenceReporting(
  store: Pick<Store, 'records' | 'readOnly'>,
  school: { id: SchoolId; families?: Pick<SchoolConfig['families'], 'reportAbsences'> },
): Promise<AbsenceReporting> {
  if (!school.families?.reportAbsences) return { on: false, reason: 'off', why: REPORTING_OFF };
  const refused = await readRefusal(store, school.id);
  if (refused) return { on: false, reason: 'refused', why: refusedWhy(refused), refusedAt: refused.at };
  if (store.readOnly)
    return {
      on: false,
      reason: 'read-only',
      why: `turned on, but hidden from families: the store cannot be written (${store.readOnly}), so no report could be audited`,
    };
  return { on: true };
}
