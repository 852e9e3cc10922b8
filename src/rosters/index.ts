// Printable PDF rosters: the one entry point the CLI and the web route use.
import type { EventTemplates } from '../calendar/index.ts';
import type { Id } from '../domain/types.ts';
import type { SchoolId, Store, Stored } from '../store/types.ts';
import { DAY, wallToUtc } from '../util/time-zone.ts';
import { loadRosterData, RosterError, resolveSchool } from './data.ts';
import type { FontSet } from './fonts.ts';
import { renderSheet } from './render.ts';
import { buildSheet, type RosterData } from './sheet.ts';
import {
  loadTemplate,
  type RosterTemplate,
  TemplateError,
  type TemplateSource,
  UnknownTemplateError,
} from './template.ts';

export {
  absencesOfSessions,
  defaultSession,
  loadRosterData,
  RosterError,
  resolveSchool,
  upcomingSessions,
} from './data.ts';
export { fontSources, preloadFonts } from './fonts.ts';
export type { RosterData, RosterSchool } from './sheet.ts';
export {
  loadAllTemplates,
  loadTemplate,
  type RosterTemplate,
  TemplateError,
  templateNames,
} from './template.ts';

export interface RosterOptions extends TemplateSource {
  schoolId?: SchoolId | null;
  teamId: Id;
  sessionId?: Id | null;
  /** Template name; default `team-roster`, or `attendance-sheet` when a session is given. */
  template?: string | null;
  now?: Date;
  /** Refuse a session that ended more than this many days before `now` (RosterRequest.pastDays). */
  pastDays?: number;
  fonts?: FontSet;
  /**
   * Whether the school keeps medical and guardian data (config `schools[].rosters.sensitive`). A template that
   * prints them is refused for a school that does not: its columns would be empty, which reads as "none".
   */
  sensitiveRosters?: (schoolId: SchoolId) => boolean;
  /**
   * The viewer may see sensitive rosters of this team (their role: identity/roles.ts `canPrintSensitive`; the
   * command line: whoever runs it). With a school that keeps medical data, sheets whose template asks for it mark
   * the students with a medical condition. Default false: no mark.
   */
  mayShowMedical?: boolean;
  /** Each school's event wording (config eventTemplatesDir), so titles say what the feeds say; default built-in. */
  eventTemplates?: (schoolId: SchoolId) => EventTemplates | undefined;
}

export interface Roster {
  pdf: Buffer;
  /** A file name that says what it is: `u14-netball-a-attendance-sheet-2026-11-26.pdf`. */
  fileName: string;
  template: RosterTemplate;
  data: RosterData;
}

export function defaultTemplateName(sessionId: Id | null | undefined): string {
  return sessionId === null || sessionId === undefined ? 'team-roster' : 'attendance-sheet';
}

function slug(text: string): string {
  const s = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s || 'team';
}

export function rosterFileName(template: RosterTemplate, data: RosterData): string {
  const parts = [slug(data.team.name), template.name];
  if (data.session) {
    const day = new Intl.DateTimeFormat('en-CA', {
      timeZone: data.school.timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(new Date(data.session.start));
    parts.push(day);
  }
  return `${parts.join('-')}-${data.team.id}.pdf`;
}

/** Loads a template by name, turning template errors into roster errors (unknown → 404, invalid → 500). */
export function templateFor(name: string, source: TemplateSource): RosterTemplate {
  try {
    return loadTemplate(name, source);
  } catch (err) {
    if (err instanceof TemplateError) {
      const unknown = err instanceof UnknownTemplateError;
      throw new RosterError(
        unknown ? 'unknown-template' : 'invalid-template',
        err.message,
        unknown ? 404 : 500,
      );
    }
    throw err;
  }
}

/** Renders one roster from the store. Throws RosterError for requests that cannot be served. */
export async function generateRoster(
  store: Pick<Store, 'records' | 'feeds'>,
  opts: RosterOptions,
): Promise<Roster> {
  const template = templateFor(opts.template ?? defaultTemplateName(opts.sessionId), opts);
  const data = await loadRosterData(store, template, {
    schoolId: opts.schoolId ?? null,
    teamId: opts.teamId,
    sessionId: opts.sessionId ?? null,
    now: opts.now,
    ...(opts.pastDays !== undefined ? { pastDays: opts.pastDays } : {}),
    ...(opts.eventTemplates ? { templates: opts.eventTemplates } : {}),
  });
  const sensitive = template.columns.some((c) => c.field === 'medical' || c.field === 'guardianContact');
  if (sensitive && opts.sensitiveRosters && !opts.sensitiveRosters(data.school.id)) {
    throw new RosterError(
      'sensitive-off',
      `${template.name}: this school does not keep medical conditions or guardian contacts ` +
        `(turn on schools[].rosters.sensitive in the configuration; the next sync reads them)`,
      409,
    );
  }
  const mayShowMedical =
    opts.mayShowMedical === true && (!opts.sensitiveRosters || opts.sensitiveRosters(data.school.id));
  const pdf = await renderSheet(buildSheet(template, data, { mayShowMedical }), template, {
    fonts: opts.fonts,
  });
  return { pdf, fileName: rosterFileName(template, data), template, data };
}

/** Visible (not hidden, not deleted) teams of a school, for printing every roster. */
export async function visibleTeams(store: Pick<Store, 'records'>, schoolId?: SchoolId | null) {
  const school = await resolveSchool(store, schoolId);
  const teams = await store.records.list(school.id, 'teams');
  return { school, teams: teams.filter((t) => !t.hidden && !t.meta.deletedAt) };
}

/** One sheet of a day: a session and one of its teams. */
export interface DaySheet {
  session: Stored<'sessions'>;
  team: { id: Id; name: string };
}

/**
 * Every sheet a session template prints for one day of a school (`YYYY-MM-DD` in its time zone): one per visible
 * team of each session starting that day, in start order. Cancelled sessions need no sheet, nor practices a
 * fixture template; both are counted, so the caller can say what it left out.
 */
export async function sheetsOfDay(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId | null | undefined,
  date: { year: number; month: number; day: number },
  template: Pick<RosterTemplate, 'session'>,
) {
  const { school, teams } = await visibleTeams(store, schoolId);
  const midnight = Date.UTC(date.year, date.month - 1, date.day);
  const from = wallToUtc(midnight, 0, 0, school.timeZone);
  const to = wallToUtc(midnight + DAY, 0, 0, school.timeZone);
  const byId = new Map(teams.map((t) => [t.id, t]));
  const sessions = (
    await store.records.listSessions(school.id, {
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
    })
  )
    .filter((s) => !s.meta.deletedAt && Date.parse(s.start) >= from && Date.parse(s.start) < to)
    .sort((a, b) => a.start.localeCompare(b.start) || a.id - b.id);
  const sheets: DaySheet[] = [];
  let cancelled = 0;
  let notFixtures = 0;
  for (const session of sessions) {
    const mine = session.teams.flatMap((t) => {
      const team = byId.get(t.id);
      return team ? [{ id: team.id, name: team.name }] : [];
    });
    if (mine.length === 0) continue;
    if (session.cancelled) cancelled++;
    else if (template.session === 'fixture' && !session.scored) notFixtures++;
    else for (const team of mine) sheets.push({ session, team });
  }
  return { school, sheets, cancelled, notFixtures };
}
