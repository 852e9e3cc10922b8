// GET /staff, "My teams": what the signed-in person may print, mobile first. On top, today's and the next sessions
// across the person's own teams, each with its time, the absences reported for it and one tap to its sheets; then
// one card per own team (roster, medical sheet, feed page, its next sessions folded away); the other teams of their
// activities (a manager's: and departments) folded under one heading, so a coach of six teams reads the page in
// three phone screens. Every sheet's label carries its time: two sessions of one day are told apart. Cancelled
// sessions are marked, never offered for a sheet. Admins find any team with a search box (no script needed).
import express, { type Request, type Response } from 'express';
import {
  createProjectionContext,
  decideSession,
  type EventTemplates,
  loadSchoolInfo,
  type ProjectionContext,
  type SessionDecision,
  whyOut,
} from '../calendar/index.ts';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import type { FeedTokens } from '../feeds/tokens.ts';
import type { StaffMembership } from '../identity/directory.ts';
import { canPrintSensitive, canSeeTeam, type SensitiveRole } from '../identity/roles.ts';
import { absencesOfSessions } from '../rosters/index.ts';
import type { SchoolId, Store, Stored } from '../store/types.ts';
import { html, type SafeHtml } from '../util/html.ts';
import { sendPage } from './layouts.ts';
import { csrfOf, type Principal, principalOf, type StaffAuth } from './staff-auth.ts';

export interface StaffPageOptions {
  store: Pick<Store, 'records' | 'feeds'>;
  auth: StaffAuth;
  tokens: FeedTokens;
  schools: readonly { id: SchoolId; name: string; timeZone: string }[];
  sensitiveRoles: readonly SensitiveRole[];
  /** The sensitive template offered on the page (medical and guardian contacts). */
  sensitiveTemplate?: string;
  /** Each school's event wording (config eventTemplatesDir); default the built-in wording. */
  templates?: (schoolId: SchoolId) => EventTemplates | undefined;
  now?: () => Date;
}

const DAY = 86_400_000;
const SESSIONS_SHOWN = 3;
/** Sessions after today in "Today and next" (all of today's come first). */
const NEXT_SHOWN = 3;
const ADMIN_CARDS = 30;

type Session = Stored<'sessions'>;
type Team = Stored<'teams'>;
type School = StaffPageOptions['schools'][number];

interface When {
  day: string;
  /** The school's calendar date (YYYY-MM-DD), to tell today's sessions. */
  date: string;
}

/** The day a session starts on the school's calendar (its times, in lists and on sheet buttons, are the decision's: calendar/). */
function when(s: Session, timeZone: string): When {
  const start = new Date(s.start);
  const day = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
  }).format(start);
  return { day, date: localDate(start, timeZone) };
}

function localDate(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

/** The session page of one team's session (web/staff-session-page.ts): its roster, who is out and why. */
export function sessionHref(schoolId: SchoolId, teamId: Id, sessionId: Id): string {
  return `/staff/teams/${teamId}/sessions/${sessionId}?school=${encodeURIComponent(schoolId)}`;
}

export function rosterHref(schoolId: SchoolId, teamId: Id, template: string, session?: Id): string {
  return `/rosters/teams/${teamId}.pdf?template=${encodeURIComponent(template)}&school=${encodeURIComponent(schoolId)}${
    session !== undefined ? `&session=${session}` : ''
  }`;
}

function button(href: string, label: string | SafeHtml, primary = false): SafeHtml {
  return html`<a class="btn${primary && ' primary'}" href="${href}">${label}</a>`;
}

/**
 * What a list says of a session: its day and time, its title (home or away, result) and a cancelled one's why; with
 * `href`, the day, time and title are one tap to its session page.
 */
function sessionSays(d: SessionDecision, day: string, href: string | null): SafeHtml {
  const said = html`<strong${d.cancelled && html` class="cancelled"`}>${day} ${d.time}</strong><span>${d.title}</span>`;
  const head = href
    ? html`<a class="session" href="${href}">${said}</a>`
    : html`<div class="session">${said}</div>`;
  if (!d.cancelled) return head;
  return html`${head}<div><span class="tag warn">cancelled</span>${
    d.cancellationReason && html` <span class="muted">${d.cancellationReason}</span>`
  }</div>`;
}

/** The sheets of one session for one team, each labelled with the session's time (and day, where asked). */
function sheetButtons(schoolId: SchoolId, teamId: Id, s: Session, label: string): SafeHtml {
  // The day and time kept on one line (at 390 px a button broke "10:00–" from "11:15"), inside one span: a
  // button is a flex box, and two children would be two columns ("Attendance" over "sheet ·", then the time).
  const when = html`<span class="nowrap">${label}</span>`;
  return html`${button(rosterHref(schoolId, teamId, 'attendance-sheet', s.id), html`<span>Attendance sheet · ${when}</span>`, true)}${
    s.scored &&
    button(
      rosterHref(schoolId, teamId, 'match-day-sheet', s.id),
      html`<span>Match-day sheet · ${when}</span>`,
    )
  }`;
}

/** Who of these teams' students is out of the session, and why, as every staff output says it (calendar/). */
function whoIsOut(
  s: Session,
  teams: Team[],
  absences: Map<Id, PreExplainedAbsence[]> | undefined,
  school: School,
  today: string,
): { name: string; why: string }[] {
  const out: { name: string; why: string }[] = [];
  const seen = new Set<Id>();
  const opts = { sessionIsToday: when(s, school.timeZone).date === today, time: clockOf(school.timeZone) };
  for (const t of teams)
    for (const m of t.students) {
      if (seen.has(m.studentId)) continue;
      seen.add(m.studentId);
      const why = whyOut(m, absences?.get(m.studentId) ?? [], s, opts);
      if (why) out.push({ name: `${m.firstName} ${m.lastName}`.trim(), why: why.replace(/\n/g, '; ') });
    }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

const clocks = new Map<string, (iso: string) => string>();
/** The school's wall clock of an instant, "15:30", as the sheets print it. */
export function clockOf(timeZone: string): (iso: string) => string {
  let f = clocks.get(timeZone);
  if (!f) {
    const fmt = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    f = (iso) => fmt.format(new Date(iso));
    clocks.set(timeZone, f);
  }
  return f;
}

/** Where the session is and who is out of it: each child named with the reason, never only a count. */
function placeAndOut(place: string | undefined, out: { name: string; why: string }[]): SafeHtml {
  const where = place ? `${place} · ` : '';
  if (!out.length) return html`<div class="muted">${where}no absences reported</div>`;
  return html`<div class="muted">${where}<strong>${out.length} ${out.length === 1 ? 'absence' : 'absences'} reported</strong></div><ul class="out">${out.map(
    (o) => html`<li><strong>${o.name}</strong> · ${o.why}</li>`,
  )}</ul>`;
}

const HIDDEN_NOTE = html`<p class="muted">Hidden in the school’s system: students and families do not see it listed there. Its calendar link reaches only those staff give it to.</p>`;

const NO_TEAMS = html`<div class="card"><p>No teams are assigned to you in the school’s extracurricular system today.</p><p class="muted">Teams come from the “assigned staff” of each team and the activities you have permissions for; ask the sports office if one is missing.</p></div>`;

/** An admin finds any team by name: the search form, and the teams it found (at most ADMIN_CARDS). */
function adminSearch(all: Team[], q: string): { form: SafeHtml; found: Team[] } {
  const needle = q.toLowerCase();
  const matching = needle
    ? all.filter((t) => `${t.name} ${t.activity.name}`.toLowerCase().includes(needle))
    : [];
  const note =
    needle && matching.length > ADMIN_CARDS
      ? html`<p class="muted">${matching.length} teams match; the first ${ADMIN_CARDS} are shown.</p>`
      : needle && !matching.length && html`<p class="muted">No team matches.</p>`;
  return {
    form: html`<form class="card" method="get" action="/staff" role="search"><label for="q">Find a team (${all.length} teams)</label><input id="q" type="search" name="q" value="${q}" placeholder="team or activity name"><div class="actions"><button type="submit" class="primary">Search</button></div>${note}</form>`,
    found: matching.slice(0, ADMIN_CARDS),
  };
}

/** The teams of a person's activities (a manager's: and departments) not their own; hidden ones only where assigned. */
function othersOf(all: Team[], membership: StaffMembership): Team[] {
  return all.filter(
    (t) => !membership.access.assignedTeamIds.has(t.id) && canSeeTeam(membership.access, t.id) && !t.hidden,
  );
}

function byTeamOf(sessions: Session[]): Map<Id, Session[]> {
  const byTeam = new Map<Id, Session[]>();
  for (const s of sessions)
    for (const t of s.teams) {
      const list = byTeam.get(t.id) ?? [];
      list.push(s);
      byTeam.set(t.id, list);
    }
  return byTeam;
}

/** What the page reads once for a school and hands every card: its projection, and who is out of each session. */
interface Listing {
  school: School;
  ctx: ProjectionContext;
  /** Per session, the absences of its students that overlap it (rosters/ reads them as the sheets do). */
  absences: Map<Id, Map<Id, PreExplainedAbsence[]>>;
  /** The school's calendar date today. */
  today: string;
}

/** One team's card: its roster and sheets, its next sessions (with who is out) folded away, the families' page. */
async function teamCard(
  opts: StaffPageOptions,
  at: Listing,
  team: Team,
  sessions: Session[],
  membership: StaffMembership | null,
  anchor: string,
): Promise<SafeHtml> {
  const { school, ctx } = at;
  const upcoming = sessions.slice(0, SESSIONS_SHOWN);
  const feed = await opts.tokens.ensureIfVouched(school.id, 'team', team.id);
  const sensitiveTemplate = opts.sensitiveTemplate ?? 'medical-and-guardian-contacts';
  const sensitive = !membership
    ? opts.sensitiveRoles.includes('admin') || opts.sensitiveRoles.includes('staff')
    : canPrintSensitive(membership.access, team.id, opts.sensitiveRoles);
  const rows = upcoming.map((s) => {
    // Title (home or away, result), times and cancelled-and-why as calendar/ decides them for every output.
    const d = decideSession(s, ctx, 'staff', { scope: 'team', id: team.id });
    const w = when(s, school.timeZone);
    const says = sessionSays(d, w.day, sessionHref(school.id, team.id, s.id));
    if (d.cancelled) return html`<li data-session="${s.id}">${says}</li>`;
    const out = placeAndOut(s.location?.name, whoIsOut(s, [team], at.absences.get(s.id), school, at.today));
    return html`<li data-session="${s.id}">${says}${out}<div class="actions">${sheetButtons(school.id, team.id, s, `${w.day} ${d.time}`)}</div></li>`;
  });
  const actions = html`${button(rosterHref(school.id, team.id, 'team-roster'), 'Team roster')}${
    sensitive && button(rosterHref(school.id, team.id, sensitiveTemplate), 'Medical & contacts')
  }`;
  // The sessions' sheets and the link for families fold away: "Today and next" has the coming ones.
  const calendar =
    feed?.token &&
    html`<div class="actions">${button(`/feeds/${feed.token}`, 'Team calendar (the page for families)')}</div>`;
  const summary = rows.length
    ? `${upcoming.length === 1 ? 'Next session' : `Next ${upcoming.length}`}: who is out, sheets${calendar ? ', calendar' : ''}`
    : 'Team calendar';
  const folded =
    (rows.length > 0 || calendar) &&
    html`<details><summary>${summary}</summary>${rows.length > 0 && html`<ul class="sessions">${rows}</ul>`}${calendar}</details>`;
  return html`<section class="card" id="${anchor}"><h3>${team.name}</h3><div class="muted">${team.activity.name} · ${team.students.length} students</div>${
    team.hidden && HIDDEN_NOTE
  }<div class="actions">${actions}</div>${!rows.length && html`<p class="muted">No sessions in the next 30 days.</p>`}${folded}</section>`;
}

/** Today's sessions of the person's own teams, then the next few, soonest first; who is out of each, and sheets. */
function todayAndNext(at: Listing, own: Team[], shown: Session[], anchor: string): SafeHtml {
  if (!own.length) return html``;
  const { school, ctx } = at;
  const section = (inner: SafeHtml) =>
    html`<section class="card" id="${anchor}"><h2>Today and next</h2>${inner}</section>`;
  if (!shown.length)
    return section(html`<p class="muted">None of your teams has a session in the next 30 days.</p>`);
  const byTeam = new Map(own.map((t) => [t.id, t]));
  const rows = shown.map((s) => {
    const w = when(s, school.timeZone);
    const teams = s.teams.flatMap((t) => byTeam.get(t.id) ?? []);
    const day = w.date === at.today ? 'Today' : w.day;
    const d = decideSession(s, ctx, 'staff', { scope: 'team', id: teams[0]!.id });
    const says = sessionSays(d, day, sessionHref(school.id, teams[0]!.id, s.id));
    if (d.cancelled) return html`<li data-session="${s.id}">${says}</li>`;
    const out = placeAndOut(s.location?.name, whoIsOut(s, teams, at.absences.get(s.id), school, at.today));
    const sheets = teams.map((t) =>
      sheetButtons(school.id, t.id, s, teams.length > 1 ? `${d.time} · ${t.name}` : d.time),
    );
    return html`<li data-session="${s.id}">${says}${out}<div class="actions">${sheets}</div></li>`;
  });
  return section(html`<ul class="sessions">${rows}</ul>`);
}

/** Today's sessions of these teams, then the next NEXT_SHOWN. */
function nextOf(own: Team[], sessions: Session[], today: string, timeZone: string): Session[] {
  const ownIds = new Set(own.map((t) => t.id));
  const mine = sessions.filter((s) => s.teams.some((t) => ownIds.has(t.id)));
  const todays = mine.filter((s) => when(s, timeZone).date === today);
  return [...todays, ...mine.filter((s) => !todays.includes(s)).slice(0, NEXT_SHOWN)];
}

/** One school's part of the page: the person's role, today and next, their teams' cards (an admin's search). */
async function schoolPart(
  opts: StaffPageOptions,
  school: School,
  membership: StaffMembership | null,
  q: string,
  at: Date,
  manySchools: boolean,
): Promise<SafeHtml> {
  const all = (await opts.store.records.list(school.id, 'teams')).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  const isAdmin = !membership || membership.access.role === 'admin';
  const own = membership ? all.filter((t) => membership.access.assignedTeamIds.has(t.id)) : [];
  const search = isAdmin ? adminSearch(all, q) : null;
  const others = membership && !isAdmin ? othersOf(all, membership) : [];
  const carded = q && search ? search.found : [...own, ...others];
  const sessions = await sessionsOf(opts, school, [...carded, ...own], at);
  const templates = opts.templates?.(school.id);
  const today = localDate(at, school.timeZone);
  const byTeam = byTeamOf(sessions);
  const next = nextOf(own, sessions, today, school.timeZone);
  // Who is out of every session the page lists, read once (the absences the sheets mark).
  const listed = new Set([
    ...next,
    ...carded.flatMap((t) => (byTeam.get(t.id) ?? []).slice(0, SESSIONS_SHOWN)),
  ]);
  const listing: Listing = {
    school,
    ctx: createProjectionContext({
      school: await loadSchoolInfo(opts.store, school.id),
      ...(templates ? { templates } : {}),
    }),
    absences: await absencesOfSessions(
      opts.store,
      school.id,
      [...carded, ...own].flatMap((t) => t.students.map((m) => m.studentId)),
      [...listed].filter((s) => !s.cancelled),
    ),
    today,
  };
  const cards = async (teams: Team[]) => {
    // One after the other: a card may issue the team's feed token (a write).
    const out: SafeHtml[] = [];
    for (const t of teams)
      out.push(
        await teamCard(
          opts,
          listing,
          t,
          byTeam.get(t.id) ?? [],
          membership,
          // Two schools may number their teams alike: the page's anchors stay unique.
          manySchools ? `team-${school.id}-${t.id}` : `team-${t.id}`,
        ),
      );
    return out;
  };
  let body: SafeHtml;
  if (q && search) body = html`${await cards(search.found)}`;
  else if (own.length && others.length)
    body = html`<h2 class="group">Your teams (${own.length})</h2>${await cards(own)}<details class="group" id="other-teams"><summary><h2 class="group">Other teams of your ${
      membership?.access.role === 'manager' ? 'activities and departments' : 'activities'
    } (${others.length})</h2></summary>${await cards(others)}</details>`;
  else if (!isAdmin && !own.length && !others.length) body = NO_TEAMS;
  else body = html`${await cards([...own, ...others])}`;
  const issued = membership
    ? await opts.tokens.ensureIfVouched(school.id, 'staff', membership.user.id)
    : null;
  const ownFeed = issued?.token && button(`/feeds/${issued.token}`, 'My calendar (all my sessions)');
  return html`<h1>${school.name}</h1><p class="muted">${signedInAs(membership)}${
    isAdmin && html` <a href="/admin">Admin pages</a>`
  }</p>${todayAndNext(listing, own, next, manySchools ? `next-${school.id}` : 'next')}<div class="actions">${ownFeed}</div>${search?.form}${body}`;
}

/** "Signed in as Tilly Smith, coach.": the person's name as the school's directory has it, their role after it. */
function signedInAs(membership: StaffMembership | null): string {
  if (!membership) return 'Signed in with the admin token.';
  const role = { admin: 'administrator', manager: 'manager', staff: 'coach' }[membership.access.role];
  const { firstName, lastName, email } = membership.user;
  const name = `${firstName} ${lastName}`.trim() || email;
  return name ? `Signed in as ${name}, ${role}.` : `Signed in as ${role}.`;
}

/** The sessions of these teams in the next 30 days, soonest first. */
async function sessionsOf(
  opts: StaffPageOptions,
  school: School,
  teams: Team[],
  at: Date,
): Promise<Session[]> {
  if (!teams.length) return [];
  const sessions = await opts.store.records.listSessions(school.id, {
    teamIds: [...new Set(teams.map((t) => t.id))],
    from: at.toISOString(),
    to: new Date(at.getTime() + 30 * DAY).toISOString(),
  });
  return sessions.sort((a, b) => a.start.localeCompare(b.start));
}

/** GET /staff: a part for each school the person belongs to (the admin token: every school). */
function myTeamsPage(opts: StaffPageOptions, now: () => Date) {
  return async (req: Request, res: Response, next: express.NextFunction) => {
    try {
      const p = principalOf(res) as Principal;
      const q = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, 100) : '';
      const at = now();
      const parts: SafeHtml[] = [];
      const schools =
        p.kind === 'admin-token'
          ? opts.schools.map((s) => ({ school: s, membership: null as StaffMembership | null }))
          : p.memberships.flatMap((m) => {
              const s = opts.schools.find((x) => x.id === m.school.id);
              return s ? [{ school: s, membership: m }] : [];
            });
      for (const { school, membership } of schools)
        parts.push(await schoolPart(opts, school, membership, q, at, schools.length > 1));
      // The page names who is out and why (a family's words may be about health): audited like the session page,
      // once per view, before a byte is sent.
      await opts.auth.auditView(req, res, {
        action: 'my-teams',
        schoolId: schools.length === 1 ? schools[0]!.school.id : null,
        template: 'my-teams',
      });
      const label = p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email);
      sendPage(res, { title: 'My teams', body: html`${parts}`, who: { label, csrf: csrfOf(p) } });
    } catch (err) {
      next(err);
    }
  };
}

export function createStaffPageRouter(opts: StaffPageOptions): express.Router {
  const router = express.Router();
  router.get('/staff', opts.auth.requireStaff, myTeamsPage(opts, opts.now ?? (() => new Date())));
  router.get('/', (_req, res) => {
    res.redirect(303, '/staff');
  });
  return router;
}
