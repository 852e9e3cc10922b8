// What the projection needs besides the session: the school, custom field metadata, name lookups and wording.
// Built once per render batch (all feeds of a school share one), so projecting an event is pure and cheap.
import { createHash } from 'node:crypto';
import type { CustomFieldMeta, Id, Session } from '../domain/types.ts';
import type { FeedScope, SchoolId, Store } from '../store/types.ts';
import { yieldToEventLoop } from '../util/event-loop.ts';
import { compileNameMatcher, compileNameMatcherPaced, type NameMatcher } from './other-children-filter.ts';
import { type EventTemplates, loadEventTemplates } from './templates.ts';

export interface SchoolInfo {
  id: SchoolId;
  name: string;
  /** IANA zone, e.g. `Europe/London`. */
  timeZone: string;
  /**
   * Location owners that are this school (for home/away). When empty, an owner counts as the school when its
   * name, short name or acronym equals the school's name (case and spacing ignored).
   */
  locationOwnerIds?: Id[];
  /**
   * This installation's part of event UIDs (store.uidDomain(), uid.ts); absent for an installation whose UIDs
   * predate it. Part of the context's fingerprint, so renders made under another domain are made again.
   */
  uidDomain?: string;
}

export interface ProjectionContext {
  school: SchoolInfo;
  customFields: ReadonlyMap<string, CustomFieldMeta>;
  staffNames: ReadonlyMap<Id, string>;
  studentNames: ReadonlyMap<Id, string>;
  templates: EventTemplates;
  /** Every known student's names, compiled once per context (one school, one pull): see other-children-filter.ts. */
  names: NameMatcher;
  /**
   * The members of each team and of each activity's teams: whose first name or surname alone counts as a name in
   * a session of that team or activity (other-children-filter.ts).
   */
  teamStudents: ReadonlyMap<Id, ReadonlySet<Id>>;
  activityStudents: ReadonlyMap<Id, ReadonlySet<Id>>;
  /** Changes whenever anything above changes (set by loadProjectionContext; lets outputs skip re-renders). */
  fingerprint?: string;
}

/** The feed an event is projected for; it is part of the UID (see uid.ts). */
export interface FeedScopeRef {
  scope: FeedScope;
  id: Id;
}

export interface TeamMembers {
  id: Id;
  activity: { id: Id };
  students: readonly { studentId: Id }[];
}

/** Whether a student is around a session: listed on it, or a member of one of its teams or of its activity. */
export function studentsAround(ctx: ProjectionContext, session: Session): (id: Id) => boolean {
  return (id) =>
    session.students.some((s) => s.id === id) ||
    (ctx.activityStudents.get(session.activity.id)?.has(id) ?? false) ||
    session.teams.some((t) => ctx.teamStudents.get(t.id)?.has(id) ?? false);
}

export function personName(p: { firstName: string; lastName: string }): string {
  return `${p.firstName} ${p.lastName}`.trim();
}

export function createProjectionContext(input: {
  school: SchoolInfo;
  customFields?: Iterable<CustomFieldMeta>;
  staff?: Iterable<{ id: Id; firstName: string; lastName: string }>;
  students?: Iterable<{ id: Id; firstName: string; lastName: string; legalFirstName?: string | null }>;
  /** Teams with their members (whose names alone count in their sessions). */
  teams?: Iterable<TeamMembers>;
  templates?: EventTemplates;
  /** The students' names already compiled (loadProjectionContext compiles them without holding the loop). */
  names?: NameMatcher;
}): ProjectionContext {
  const students = [...(input.students ?? [])];
  const staff = [...(input.staff ?? [])];
  const teamStudents = new Map<Id, Set<Id>>();
  const activityStudents = new Map<Id, Set<Id>>();
  for (const t of input.teams ?? []) {
    const ids = t.students.map((m) => m.studentId);
    teamStudents.set(t.id, new Set(ids));
    const all = activityStudents.get(t.activity.id) ?? new Set<Id>();
    for (const id of ids) all.add(id);
    activityStudents.set(t.activity.id, all);
  }
  return {
    names: input.names ?? compileNameMatcher(students, staff),
    teamStudents,
    activityStudents,
    school: input.school,
    customFields: new Map([...(input.customFields ?? [])].map((f) => [f.key, f])),
    staffNames: new Map(staff.map((s) => [s.id, personName(s)])),
    studentNames: new Map(students.map((s) => [s.id, personName(s)])),
    templates: input.templates ?? loadEventTemplates({ schoolId: input.school.id }),
  };
}

const norm = (s: string | null) => (s ?? '').toLocaleLowerCase().replace(/\s+/g, ' ').trim();

/**
 * Which location owners are the school, when the configuration does not say: owners whose name, short name
 * or acronym is the school's name; failing that, the owner of the most venues used for non-fixture sessions
 * (training happens at home). Empty when the sessions carry no owners.
 */
export function inferLocationOwnerIds(sessions: Iterable<Session>, schoolName: string): Id[] {
  const named = new Set<Id>();
  const trainingCounts = new Map<Id, number>();
  for (const s of sessions) {
    const owner = s.location?.owner;
    if (!owner) continue;
    if ([owner.name, owner.shortName, owner.acronym].map(norm).includes(norm(schoolName)))
      named.add(owner.id);
    if (!s.scored && !s.bye && !s.opponent)
      trainingCounts.set(owner.id, (trainingCounts.get(owner.id) ?? 0) + 1);
  }
  if (named.size) return [...named];
  const best = [...trainingCounts].sort((a, b) => b[1] - a[1])[0];
  return best ? [best[0]] : [];
}

/**
 * The school as every output sees it, with the location owners that are the school: the configured ones, else
 * inferred from every session the store holds. Feeds, pushes, rosters and the CLI all ask here, so a fixture is
 * home or away in the same way everywhere (a roster once compared names and printed "(away)" for a home game).
 */
export async function loadSchoolInfo(
  store: Pick<Store, 'records' | 'feeds'>,
  schoolId: SchoolId,
  opts: { locationOwnerIds?: Id[] } = {},
): Promise<SchoolInfo> {
  const [schools, uidDomain] = await Promise.all([store.records.listSchools(), store.feeds.uidDomain()]);
  const school = schools.find((s) => s.id === schoolId);
  if (!school) throw new Error(`unknown school: ${schoolId}`);
  const owners = opts.locationOwnerIds?.length
    ? opts.locationOwnerIds
    : await inferredOwners(store, schoolId, school.name);
  return {
    id: school.id,
    name: school.name,
    timeZone: school.timeZone,
    ...(owners.length ? { locationOwnerIds: owners } : {}),
    ...(uidDomain ? { uidDomain } : {}),
  };
}

// Inferring the owners reads every session of the school: /staff and each PDF ask on every
// request, so the answer is kept per store and school until the data version (or the school's name) changes.
const ownersKept = new WeakMap<
  Pick<Store, 'records'>,
  Map<SchoolId, { key: string; owners: Promise<Id[]> }>
>();

async function inferredOwners(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  schoolName: string,
): Promise<Id[]> {
  const key = `${await store.records.dataVersion(schoolId)}|${schoolName}`;
  let bySchool = ownersKept.get(store);
  if (!bySchool) {
    bySchool = new Map();
    ownersKept.set(store, bySchool);
  }
  const kept = bySchool.get(schoolId);
  if (kept?.key === key) return kept.owners;
  const owners = store.records
    .listSessions(schoolId, {})
    .then((all) => inferLocationOwnerIds(all, schoolName));
  bySchool.set(schoolId, { key, owners });
  owners.catch(() => {
    if (bySchool.get(schoolId)?.owners === owners) bySchool.delete(schoolId);
  });
  return owners;
}

/** Reads what the projection needs for one school from the store. */
export async function loadProjectionContext(
  store: Pick<Store, 'records' | 'feeds'>,
  schoolId: SchoolId,
  opts: {
    templates?: EventTemplates;
    locationOwnerIds?: Id[];
    /** Called between steps of the longer synchronous work (default: a turn of the event loop). */
    pause?: () => Promise<void>;
  } = {},
): Promise<ProjectionContext> {
  const pause = opts.pause ?? yieldToEventLoop;
  const [customFields, staff, students, teams, schoolInfo] = await Promise.all([
    store.records.list(schoolId, 'customFields'),
    store.records.list(schoolId, 'staff'),
    store.records.list(schoolId, 'students', { includeDeleted: true }),
    store.records.list(schoolId, 'teams'),
    loadSchoolInfo(store, schoolId, opts.locationOwnerIds ? { locationOwnerIds: opts.locationOwnerIds } : {}),
  ]);
  await pause();
  const ctx = createProjectionContext({
    school: schoolInfo,
    customFields,
    staff,
    students,
    teams,
    names: await compileNameMatcherPaced(students, pause, staff),
    ...(opts.templates ? { templates: opts.templates } : {}),
  });
  await pause();
  const versions = (
    rows: { meta: { version: number; deletedAt: string | null } }[],
    id: (r: never) => unknown,
  ) => rows.map((r) => `${String(id(r as never))}:${r.meta.version}:${r.meta.deletedAt ? 1 : 0}`).join(',');
  ctx.fingerprint = createHash('sha256')
    .update(JSON.stringify(schoolInfo))
    .update(JSON.stringify(ctx.templates))
    .update(versions(customFields, (r: { key: string }) => r.key))
    .update(versions(staff, (r: { id: Id }) => r.id))
    .update(versions(students, (r: { id: Id }) => r.id))
    .update(versions(teams, (r: { id: Id }) => r.id))
    .digest('base64url');
  return ctx;
}
