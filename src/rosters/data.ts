// Reads what a roster needs from the store (never the upstream API) and checks the request makes sense.
import {
  absencesOverlapping,
  createProjectionContext,
  decideSession,
  type EventTemplates,
  familyFacts,
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
  | 'session-too-old'
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
  /**
   * A session that ended more than this many days before `now` is refused (the staff web: the school's
   * syncWindow.daysBack, the past the pulls keep current); none: any session the store holds (the command line).
   */
  pastDays?: number;
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

/**
 * The absences of these students that overlap each of these sessions, per session and student, in one read of the
 * store: what every sheet, /staff and the session page mark a child out by (calendar/absences.ts says why).
 */
export async function absencesOfSessions(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  studentIds: readonly Id[],
  sessions: readonly { id: Id; start: string; end: string }[],
): Promise<Map<Id, Map<Id, PreExplainedAbsence[]>>> {
  const out = new Map<Id, Map<Id, PreExplainedAbsence[]>>();
  if (!sessions.length) return out;
  const list = studentIds.length
    ? await store.records.listAbsences(schoolId, {
        studentIds: [...new Set(studentIds)],
        from: sessions.reduce((m, s) => (s.start < m ? s.start : m), sessions[0]!.start),
        to: sessions.reduce((m, s) => (s.end > m ? s.end : m), sessions[0]!.end),
      })
    : [];
  for (const s of sessions) out.set(s.id, absencesOverlapping(s, list));
  return out;
}

/** Loads and checks everything a roster of `template` for the request needs. */
export async function loadRosterData(
  store: Pick<Store, 'records' | 'feeds'>,
  template: Pick<RosterTemplate, 'name' | 'session'>,
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
    const now = (req.now ?? new Date()).getTime();
    if (req.pastDays !== undefined && Date.parse(session.end) < now - req.pastDays * DAY) {
      throw new RosterError(
        'session-too-old',
        `session ${session.id} ended more than ${req.pastDays} days ago; staff pages and sheets open a session until ${req.pastDays} days after it ends (the school's syncWindow.daysBack, the past its pulls keep current)`,
        404,
      );
    }
    if (template.session === 'fixture' && !session.scored) {
      throw new RosterError(
        'not-a-fixture',
        `session ${session.id} ("${session.title}") is not a fixture; the "${template.name}" template is for fixtures`,
      );
    }
  }

  const absences =
    session && team.students.length > 0
      ? (
          await absencesOfSessions(
            store,
            school.id,
            team.students.map((s) => s.studentId),
            [session],
          )
        ).get(session.id)!
      : new Map<Id, PreExplainedAbsence[]>();

  let locationAddress: string | null = null;
  const loc = session?.location;
  if (loc && !loc.address && loc.id !== null) {
    locationAddress = (await store.records.get(school.id, 'locations', loc.id))?.address ?? null;
  }
  const customFields = session ? await store.records.list(school.id, 'customFields') : [];

  // What the session is (title, times, cancelled and why), in the same words as the feeds and pushes, and what
  // its families are told: the one decision and projection in calendar/.
  const ctx = session
    ? createProjectionContext({
        school: await loadSchoolInfo(store, school.id),
        customFields,
        students: team.students.map((m) => ({ ...m, id: m.studentId })),
        teams: [team],
        ...withTemplates(req.templates?.(school.id)),
      })
    : null;
  const scope = { scope: 'team' as const, id: team.id };
  const decision = session && ctx ? decideSession(session, ctx, 'staff', scope) : null;
  const toldFamilies = session && ctx ? familyFacts(session, ctx, scope) : [];

  return {
    school: { id: school.id, name: school.name, timeZone: school.timeZone },
    team,
    session,
    decision,
    absences,
    customFields,
    locationAddress,
    toldFamilies,
    generatedAt: req.now ?? new Date(),
  };
}
