// Which feeds a school has: one per team, current student, active staff member and live activity, each with
// its audience (staff feeds speak to staff; the others to guardians and students) and the sessions it covers.
import { personName } from '../calendar/context.ts';
import { normaliseHexColor } from '../calendar/project.ts';
import type { Audience } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope, SchoolId, Store, Stored } from '../store/types.ts';
import { yieldToEventLoop } from '../util/event-loop.ts';

export interface FeedDef {
  schoolId: SchoolId;
  scope: FeedScope;
  scopeId: Id;
  /** The team's, person's or activity's name. */
  subject: string;
  /** The calendar's name (X-WR-CALNAME). */
  calendarName: string;
  description: string;
  audience: Audience;
  color: string | null;
}

export const AUDIENCE_OF: Record<FeedScope, Audience> = {
  team: 'guardian',
  student: 'guardian',
  activity: 'guardian',
  staff: 'staff',
};

/** A feed's definition from what is known of its subject (the admins' search builds its answers so too). */
export function feedDefFor(
  school: { id: SchoolId; name: string },
  scope: FeedScope,
  scopeId: Id,
  subject: string,
  color: string | null,
): FeedDef {
  const what: Record<FeedScope, string> = {
    team: `Sessions and fixtures of ${subject}`,
    student: `Sessions and fixtures for ${subject}`,
    staff: `Sessions ${subject} is assigned to (staff view)`,
    activity: `All ${subject} sessions and fixtures`,
  };
  return {
    schoolId: school.id,
    scope,
    scopeId,
    subject,
    calendarName: `${subject} · ${school.name}`,
    description: `${what[scope]} at ${school.name}.`,
    audience: AUDIENCE_OF[scope],
    color,
  };
}

async function schoolOf(store: Pick<Store, 'records'>, schoolId: SchoolId) {
  const school = (await store.records.listSchools()).find((s) => s.id === schoolId);
  if (!school) throw new Error(`unknown school: ${schoolId}`);
  return school;
}

function activityColors(activities: Stored<'activities'>[]): Map<Id, string | null> {
  return new Map(activities.map((a) => [a.id, normaliseHexColor(a.hexColor)]));
}

/**
 * Every feed of a school: teams (hidden ones too: staff decide whom to give the link), current students,
 * staff who are not deactivated, and activities that are not archived.
 */
export async function listFeedDefs(store: Pick<Store, 'records'>, schoolId: SchoolId): Promise<FeedDef[]> {
  const school = await schoolOf(store, schoolId);
  // One read at a time with the event loop's turn between them: a district's teams and students are ~100 ms of
  // reading each, which a web server in the same process would otherwise wait out back to back.
  const teams = await store.records.list(schoolId, 'teams');
  await yieldToEventLoop();
  const students = await store.records.list(schoolId, 'students');
  await yieldToEventLoop();
  const staff = await store.records.list(schoolId, 'staff');
  const activities = await store.records.list(schoolId, 'activities');
  const colors = activityColors(activities);
  const byName = <T>(items: T[], name: (t: T) => string) =>
    items.sort((a, b) => name(a).localeCompare(name(b)));
  return [
    ...byName(teams, (t) => t.name).map((t) =>
      feedDefFor(school, 'team', t.id, t.name, colors.get(t.activity.id) ?? null),
    ),
    ...byName(
      students.filter((s) => s.current),
      personName,
    ).map((s) => feedDefFor(school, 'student', s.id, personName(s), null)),
    ...byName(
      staff.filter((s) => !s.frozen),
      personName,
    ).map((s) => feedDefFor(school, 'staff', s.id, personName(s), null)),
    ...byName(
      activities.filter((a) => !a.archived),
      (a) => a.name,
    ).map((a) => feedDefFor(school, 'activity', a.id, a.name, normaliseHexColor(a.hexColor))),
  ];
}

/**
 * One feed's definition, or null when its subject is gone (deleted team, student who left, …). `known`: the
 * school as the caller already read it (a projection context's), sparing a read of every school in the store.
 */
export async function getFeedDef(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  scope: FeedScope,
  scopeId: Id,
  known?: { id: SchoolId; name: string },
): Promise<FeedDef | null> {
  const school =
    known?.id === schoolId ? known : (await store.records.listSchools()).find((s) => s.id === schoolId);
  if (!school) return null;
  switch (scope) {
    case 'team': {
      const t = await store.records.get(schoolId, 'teams', scopeId);
      if (!t || t.meta.deletedAt) return null;
      const a = await store.records.get(schoolId, 'activities', t.activity.id);
      return feedDefFor(school, scope, scopeId, t.name, normaliseHexColor(a?.hexColor ?? null));
    }
    case 'student': {
      const s = await store.records.get(schoolId, 'students', scopeId);
      return s && !s.meta.deletedAt && s.current
        ? feedDefFor(school, scope, scopeId, personName(s), null)
        : null;
    }
    case 'staff': {
      const s = await store.records.get(schoolId, 'staff', scopeId);
      return s && !s.meta.deletedAt && !s.frozen
        ? feedDefFor(school, scope, scopeId, personName(s), null)
        : null;
    }
    case 'activity': {
      const a = await store.records.get(schoolId, 'activities', scopeId);
      return a && !a.meta.deletedAt && !a.archived
        ? feedDefFor(school, scope, scopeId, a.name, normaliseHexColor(a.hexColor))
        : null;
    }
  }
}
