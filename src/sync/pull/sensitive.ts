// Sensitive rosters (school.rosters.sensitive): whether the stored teams carry medical and guardian data, and
// what a team keeps when they must not.
import type { SchoolConfig } from '../../config.ts';
import type { Team } from '../../domain/types.ts';
import type { Store } from '../../store/types.ts';

/** Whether the stored teams carry medical and guardian data ('on') or not ('off'). */
export const SENSITIVE_KEY = 'rosters:sensitive';

export const sensitiveMark = (school: SchoolConfig) => (school.rosters.sensitive ? 'on' : 'off');

/** Turned on or off since the teams were stored: every team is read (and rewritten) again. */
export async function sensitiveChanged(
  store: Pick<Store, 'records'>,
  school: SchoolConfig,
): Promise<boolean> {
  return (await store.records.getCursor(school.id, SENSITIVE_KEY)) !== sensitiveMark(school);
}

/** sensitiveChanged, judged from the school's cursors as read (Store.records.cursors). */
export function sensitiveChangedIn(cursors: ReadonlyMap<string, string>, school: SchoolConfig): boolean {
  return (cursors.get(SENSITIVE_KEY) ?? null) !== sensitiveMark(school);
}

/** A team as a school without sensitive rosters keeps it: no medical conditions, guardians or absence marks. */
export function withoutSensitive(team: Team): Team {
  return {
    ...team,
    students: team.students.map(({ absentToday: _a, absentReason: _r, ...m }) => ({
      ...m,
      medicalConditions: [],
      guardians: [],
    })),
  };
}
