// Reads what a roster needs from the store (never the upstream API) and checks the request makes sense.
import {
  createProjectionContext,
  decideSession,
  type EventTemplates,
  loadSchoolInfo,
} from '../calendar/index.ts';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import type { SchoolId, Store, Stored } from '../store/types.ts';
import type { RosterData, RosterSchool } from './sheet.ts';
import type { RosterTemplate } from './template.ts';

export type RosterErrorCode =
  | 'no-school'
  | 'unknown-school'
  | 'ambiguous-school'
  | 'unknown-team'
  | 'unknown-session'
  | 'session-not-for-team'
  | 'session-required'
  | 'session-not-allowed'
  | 'sensitive-off'
  | 'not-a-fixture'
  | 'unknown-template'
  | 'invalid-template';

/** A request that cannot produce a roster: the message says why, in words for the person who asked. */
export class RosterError extends Error {
  override name = 'RosterError';
  readonly code: RosterErrorCode;
  /** HTTP status for the web route. */
  readonly status: number;
  constructor(code: RosterErrorCode, message: string, status = 400) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** The school to print for: the one asked for, or the only one in the store. */
export async function resolveSchool(
  store: Pick<Store, 'records'>,
  schoolId?: SchoolId | null,
): Promise<RosterSchool> {
  const schools = await store.records.listSchools();
  if (schoolId) {
    const school = schools.find((s) => s.id === schoolId);
    if (!school) {
      const known = schools.map((s) => s.id).join(', ') || 'none';
      throw new RosterError(
        'unknown-school',
        `unknown school "${schoolId}" (schools in the store: ${known})`,
        404,
      );
    }
    return school;
  }
  if (schools.length === 0) {
    throw new RosterError('no-school', 'the store holds no school yet: run `rostercal sync` first', 404);
  }
  if (schools.length > 1) {
    throw new RosterError(
      'ambiguous-school',
      `the store holds several schools (${schools.map((s) => s.id).join(', ')}): say which one with --school`,
    );
  }
  return schools[0]!;
}

export interface RosterRequest {
  schoolId?: SchoolId | null;
  teamId: Id;
  sessionId?: Id | null;
  /** Generation time; default now. */
  now?: Date;
  /** Each school's event wording (session titles say the same as in the feeds); default the built-in wording. */
  templates?: (schoolId: SchoolId) => EventTemplates | undefined;
}

const DAY = 86_400_000;

const withTemplates = (templates: EventTemplates | undefined) => (templates ? { templates } : {});

/**
 * A team's sessions that have not ended yet, in start order, looking a year ahead (cancelled ones included:
 * callers show or skip them).
 */
export async function upcomingSessions(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  teamId: Id,
  now: Date,
  days = 365,
): Promise<Stored<'sessions'>[]> {
  const sessions = await store.records.listSessions(schoolId, {
    teamIds: [teamId],
    from: now.toISOString(),
    to: new Date(now.getTime() + days * DAY).toISOString(),
  });
  return sessions
    .filter((s) => !s.meta.deletedAt && Date.parse(s.end) > now.getTime())
    .sort((a, b) => a.start.localeCompare(b.start) || a.id - b.id);
}

/** The session a sheet is for when none is named: the next one that is not cancelled (a fixture for fixture sheets). */
export function defaultSession<S extends { cancelled: boolean; scored: boolean }>(
  upcoming: S[],
  template: Pick<RosterTemplate, 'session'>,
): S | null {
  return upcoming.find((s) => !s.cancelled && (template.session !== 'fixture' || s.scored)) ?? null;
}

/** Whether two spans of time share an instant (an absence and a session: the sheet marks exactly these). */
export function overlaps(a: { start: string; end: string }, b: { start: string; end: string }): boolean {
  return Date.parse(a.start) < Date.parse(b.end) && Date.parse(a.end) > Date.parse(b.start);
}

/** Loads and checks everything a roster of `template` for the request needs. */
export async function loadRosterData(
  store: Pick<Store, 'records' | 'feeds'>,
  template: RosterTemplate,
  req: RosterRequest,
): Promise<RosterData> {
  const school = await resolveSchool(store, req.schoolId);
  const team = await store.records.get(school.id, 'teams', req.teamId);
  if (!team || team.meta.deletedAt) {
    throw new RosterError('unknown-team', `unknown team ${req.teamId} in school "${school.id}"`, 404);
  }
  let sessionId = req.sessionId ?? null;
  if (sessionId === null && (template.session === 'required' || template.session === 'fixture')) {
    const upcoming = await upcomingSessions(store, school.id, team.id, req.now ?? new Date());
    const next = defaultSession(upcoming, template);
    if (!next) {
      throw new RosterError(
        'session-required',
        `team ${team.id} ("${team.name}") has no upcoming ${template.session === 'fixture' ? 'fixture' : 'session'} that is not cancelled: give one (--session ID, or ?session=ID; \`rostercal sessions --team ${team.id}\` lists them)`,
      );
    }
    sessionId = next.id;
  }
  if (sessionId !== null && template.session === 'none') {
    throw new RosterError(
      'session-not-allowed',
      `the "${template.name}" template is not for a session; leave out the session or pick a session template`,
    );
  }
  let session = null;
  if (sessionId !== null) {
    session = await store.records.get(school.id, 'sessions', sessionId);
    // Another team's session answers as one that does not exist: a refusal names nothing of it (its title), nor
    // says that it exists.
    if (!session || session.meta.deletedAt || !session.teams.some((t) => t.id === team.id)) {
      throw new RosterError('unknown-session', `team ${team.id} has no session ${sessionId}`, 404);
    }
    if (template.session === 'fixture' && !session.scored) {
      throw new RosterError(
        'not-a-fixture',
        `session ${session.id} ("${session.title}") is not a fixture; the "${template.name}" template is for fixtures`,
      );
    }
  }

  const absences = new Map<Id, PreExplainedAbsence[]>();
  if (session && team.students.length > 0) {
    const list = await store.records.listAbsences(school.id, {
      studentIds: team.students.map((s) => s.studentId),
      from: session.start,
      to: session.end,
    });
    for (const a of list) {
      // The store's window test is trusted only as a pre-filter: a roster marks exactly the overlapping ones.
      if (a.meta.deletedAt || !overlaps(a, session)) continue;
      const mine = absences.get(a.studentId) ?? [];
      mine.push(a);
      absences.set(a.studentId, mine);
    }
  }

  let locationAddress: string | null = null;
  const loc = session?.location;
  if (loc && !loc.address && loc.id !== null) {
    locationAddress = (await store.records.get(school.id, 'locations', loc.id))?.address ?? null;
  }
  const customFields = session ? await store.records.list(school.id, 'customFields') : [];

  // What the session is (title, times, cancelled and why), in the same words as the feeds and pushes: the one
  // decision in calendar/.
  const decision = session
    ? decideSession(
        session,
        createProjectionContext({
          school: await loadSchoolInfo(store, school.id),
          ...withTemplates(req.templates?.(school.id)),
        }),
        'staff',
        { scope: 'team', id: team.id },
      )
    : null;

  return {
    school: { id: school.id, name: school.name, timeZone: school.timeZone },
    team,
    session,
    decision,
    absences,
    customFields,
    locationAddress,
    generatedAt: req.now ?? new Date(),
  };
}
