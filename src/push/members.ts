// Who a target's calendars belong to (every team/activity/staff member/student in scope) and which sessions
// each calendar shows in the window.

import type { PushTargetConfig } from '../config/push-targets.ts';
import type { Id, Instant } from '../domain/types.ts';
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
 * The sessions of each member's calendar in the window: what `store.listSessions(sessionQuery(scope, id, …))`
 * answers for each id (teams, activity, assigned staff; for a student the sessions listing them plus the
 * sessions of their teams' current rosters), read with one query instead of one per calendar — a school has a
 * thousand student calendars. test/push/scope.test.ts holds the two equal.
 */
export async function sessionsByMember(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  scope: PushTargetConfig['scope'],
  ids: Id[],
  window: { from: Instant; to: Instant },
): Promise<Map<Id, Stored<'sessions'>[]>> {
  const out = new Map<Id, Stored<'sessions'>[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const all = await store.records.listSessions(schoolId, { from: window.from, to: window.to });
  let rosters: Map<Id, Id[]> | null = null;
  if (scope === 'student') {
    rosters = new Map();
    for (const t of await store.records.list(schoolId, 'teams'))
      rosters.set(
        t.id,
        t.students.map((x) => x.studentId),
      );
  }
  for (const s of all) {
    const members = new Set<Id>();
    switch (scope) {
      case 'team':
        for (const t of s.teams) members.add(t.id);
        break;
      case 'activity':
        members.add(s.activity.id);
        break;
      case 'staff':
        for (const x of s.staff) members.add(x.id);
        break;
      case 'student':
        for (const x of s.students) members.add(x.id);
        for (const t of s.teams) for (const id of rosters?.get(t.id) ?? []) members.add(id);
        break;
    }
    for (const id of members) out.get(id)?.push(s);
  }
  return out;
}
