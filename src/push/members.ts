// Who a target's calendars belong to (every team/activity/staff member/student in scope) and which sessions
// each calendar shows in the window.

import type { PushTargetConfig } from '../config/push-targets.ts';
import type { Id, Instant } from '../domain/types.ts';
import { ScopeIndex } from '../feeds/feed-scope.ts';
import type { SchoolId, Store, Stored } from '../store/types.ts';

function fillTemplate(
  template: string,
  values: Record<string, string | number | null | undefined>,
): string | null {
  let missing = false;
  const out = template.replace(/\{(\w+)\}/g, (_m, k: string) => {
    const v = values[k];
    if (v === null || v === undefined || v === '') {
      missing = true;
      return '';
    }
    return String(v);
  });
  return missing ? null : out;
}

export interface Member {
  id: Id;
  name: string;
  email: string | null;
  values: Record<string, string | number | null | undefined>;
}

/** Who the target's calendars belong to: every team/activity/staff member/student in scope. */
export async function members(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  target: PushTargetConfig,
): Promise<Member[]> {
  const name = (p: { firstName: string; lastName: string }) => `${p.firstName} ${p.lastName}`.trim();
  let all: Member[];
  switch (target.scope) {
    case 'team':
      all = (await store.records.list(schoolId, 'teams')).map((t) => ({
        id: t.id,
        name: t.name,
        email: null,
        values: {},
      }));
      break;
    case 'activity':
      all = (await store.records.list(schoolId, 'activities'))
        .filter((a) => !a.archived)
        .map((a) => ({ id: a.id, name: a.name, email: null, values: {} }));
      break;
    case 'staff':
      all = (await store.records.list(schoolId, 'staff'))
        .filter((s) => !s.frozen)
        .map((s) => ({
          id: s.id,
          name: name(s),
          email: s.email,
          values: {
            id: s.id,
            email: s.email,
            sisId: s.sisId,
            externalId: s.externalId,
            firstName: s.firstName,
            lastName: s.lastName,
          },
        }));
      break;
    case 'student':
      all = (await store.records.list(schoolId, 'students'))
        .filter((s) => s.current)
        .map((s) => {
          // Student records carry no email in the domain model today; a later one may.
          const email = (s as { email?: string | null }).email ?? null;
          return {
            id: s.id,
            name: name(s),
            email,
            values: { id: s.id, email, sisId: s.sisId, firstName: s.firstName, lastName: s.lastName },
          };
        });
      break;
  }
  if (!target.ids) return all;
  const wanted = new Set(target.ids);
  return all.filter((m) => wanted.has(m.id));
}

export function ownerOf(target: PushTargetConfig, m: Member): string | null {
  if (target.provider === 'outlook')
    return fillTemplate(target.outlook.mailbox, m.values)?.toLowerCase() ?? null;
  if (target.google.calendars.mode !== 'created') return m.email?.toLowerCase() ?? null;
  return null;
}

export function calendarName(target: PushTargetConfig, school: { name: string }, m: Member): string {
  if (target.provider === 'outlook') return target.outlook.calendarName;
  return fillTemplate(target.google.calendars.name, { name: m.name, school: school.name }) ?? m.name;
}

/**
 * The sessions of each member's calendar in the window, as a feed of the same scope includes them
 * (feeds/feed-scope.ts), read with one query instead of one per calendar — a school has a thousand student
 * calendars. test/push/scope.test.ts holds them equal to the feeds' per-scope read.
 */
export async function sessionsByMember(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  scope: PushTargetConfig['scope'],
  ids: Id[],
  window: { from: Instant; to: Instant },
): Promise<Map<Id, Stored<'sessions'>[]>> {
  if (ids.length === 0) return new Map();
  const all = await store.records.listSessions(schoolId, { from: window.from, to: window.to });
  // Only a student's calendar reads the teams' rosters.
  const rosters = new Map<Id, Set<Id>>();
  if (scope === 'student')
    for (const t of await store.records.list(schoolId, 'teams'))
      rosters.set(t.id, new Set(t.students.map((x) => x.studentId)));
  const index = new ScopeIndex(rosters);
  for (const s of all) index.add(s);
  return new Map(ids.map((id) => [id, index.of(scope, id)]));
}
