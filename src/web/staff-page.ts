// GET /staff, "My teams": what the signed-in person may print, mobile first. Per team its next sessions
// (cancelled ones marked, never offered for a sheet) and one tap to the roster, the attendance sheet of each
// upcoming session (the date on the link), the match-day sheet of the next fixture and the team's feed page;
// plus the person's own staff feed. Admins see every team, found with a search box (no script needed).
import express, { type Request, type Response } from 'express';
import {
  createProjectionContext,
  decideSession,
  type EventTemplates,
  loadSchoolInfo,
  type ProjectionContext,
} from '../calendar/index.ts';
import type { Id } from '../domain/types.ts';
import type { FeedTokens } from '../feeds/tokens.ts';
import type { StaffMembership } from '../identity/directory.ts';
import { canPrintSensitive, canSeeTeam, type SensitiveRole } from '../identity/roles.ts';
import type { SchoolId, Store, Stored } from '../store/types.ts';
import { csrfOf, type Principal, principalOf, type StaffAuth } from './staff-auth.ts';
import { escapeHtml, sendPage } from './staff-html.ts';

export interface StaffPageOptions {
  store: Store;
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
const ADMIN_CARDS = 30;

type Session = Stored<'sessions'>;
type Team = Stored<'teams'>;

function day(s: Session, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
  }).format(new Date(s.start));
}

function rosterHref(schoolId: SchoolId, teamId: Id, template: string, session?: Id): string {
  return `/rosters/teams/${teamId}.pdf?template=${encodeURIComponent(template)}&school=${encodeURIComponent(schoolId)}${
    session !== undefined ? `&session=${session}` : ''
  }`;
}

export function createStaffPageRouter(opts: StaffPageOptions): express.Router {
  const now = opts.now ?? (() => new Date());
  const sensitiveTemplate = opts.sensitiveTemplate ?? 'medical-and-guardian-contacts';
  const router = express.Router();

  async function teamCard(
    schoolId: SchoolId,
    timeZone: string,
    ctx: ProjectionContext,
    team: Team,
    sessions: Session[],
    membership: StaffMembership | null,
    isTokenAdmin: boolean,
    anchor: string,
  ): Promise<string> {
    const upcoming = sessions.slice(0, SESSIONS_SHOWN);
    const next = upcoming.find((s) => !s.cancelled);
    const fixture = sessions.find((s) => s.scored && !s.cancelled);
    const feed = await opts.tokens.ensureIfVouched(schoolId, 'team', team.id);
    const sensitive = isTokenAdmin
      ? opts.sensitiveRoles.includes('admin') || opts.sensitiveRoles.includes('staff')
      : membership !== null && canPrintSensitive(membership.access, team.id, opts.sensitiveRoles);
    const rows = upcoming
      .map((s) => {
        // Title (home or away, result), times and cancelled-and-why as calendar/ decides them for every output.
        const d = decideSession(s, ctx, 'staff', { scope: 'team', id: team.id });
        const w = { day: day(s, timeZone), time: d.time };
        const place = s.location?.name ? ` · ${escapeHtml(s.location.name)}` : '';
        const kind = s.scored
          ? `<span class="tag">fixture${s.opponent ? ` v ${escapeHtml(s.opponent)}` : ''}</span>`
          : '';
        const what = `<div>${escapeHtml(d.title)}</div>`;
        if (d.cancelled)
          return `<li data-session="${s.id}"><span class="cancelled">${escapeHtml(w.day)} ${escapeHtml(w.time)}</span> <span class="tag warn">cancelled</span>${kind}${what}${
            d.cancellationReason ? `<div class="muted">${escapeHtml(d.cancellationReason)}</div>` : ''
          }</li>`;
        return `<li data-session="${s.id}"><div>${escapeHtml(w.day)} ${escapeHtml(w.time)}${place}${kind}</div>${what}<div class="actions"><a class="btn primary" href="${escapeHtml(rosterHref(schoolId, team.id, 'attendance-sheet', s.id))}">Attendance sheet · ${escapeHtml(w.day)}</a></div></li>`;
      })
      .join('');
    const actions = [
      `<a class="btn" href="${escapeHtml(rosterHref(schoolId, team.id, 'team-roster'))}">Team roster</a>`,
      fixture
        ? `<a class="btn" href="${escapeHtml(rosterHref(schoolId, team.id, 'match-day-sheet', fixture.id))}">Match-day sheet · ${escapeHtml(day(fixture, timeZone))}</a>`
        : '',
      sensitive
        ? `<a class="btn" href="${escapeHtml(rosterHref(schoolId, team.id, sensitiveTemplate))}">Medical &amp; guardian contacts</a>`
        : '',
      feed?.token ? `<a class="btn" href="/feeds/${escapeHtml(feed.token)}">Team calendar</a>` : '',
    ].filter(Boolean);
    return `<section class="card" id="${escapeHtml(anchor)}"><h2>${escapeHtml(team.name)}</h2><div class="muted">${escapeHtml(team.activity.name)} · ${team.students.length} students${team.hidden ? ' · hidden' : ''}</div>
<ul class="sessions">${rows || `<li class="muted">No sessions in the next 30 days${next ? '' : ''}.</li>`}</ul>
<div class="actions">${actions.join('')}</div></section>`;
  }

  router.get('/staff', opts.auth.requireStaff, async (req: Request, res: Response, next) => {
    try {
      const p = principalOf(res) as Principal;
      const q = typeof req.query.q === 'string' ? req.query.q.trim().slice(0, 100) : '';
      const at = now();
      const parts: string[] = [];
      const schools =
        p.kind === 'admin-token'
          ? opts.schools.map((s) => ({ school: s, membership: null as StaffMembership | null }))
          : p.memberships.flatMap((m) => {
              const s = opts.schools.find((x) => x.id === m.school.id);
              return s ? [{ school: s, membership: m }] : [];
            });
      for (const { school, membership } of schools) {
        const all = (await opts.store.list(school.id, 'teams')).sort((a, b) => a.name.localeCompare(b.name));
        const isAdmin = !membership || membership.access.role === 'admin';
        let shown: Team[];
        let index = '';
        if (isAdmin) {
          const needle = q.toLowerCase();
          const matching = needle
            ? all.filter((t) => `${t.name} ${t.activity.name}`.toLowerCase().includes(needle))
            : [];
          const own = membership ? all.filter((t) => membership.access.assignedTeamIds.has(t.id)) : [];
          shown = needle ? matching.slice(0, ADMIN_CARDS) : own;
          index = `<form class="card" method="get" action="/staff" role="search"><label for="q">Find a team (${all.length} teams)</label><input id="q" type="search" name="q" value="${escapeHtml(q)}" placeholder="team or activity name"><div class="actions"><button type="submit" class="primary">Search</button></div>${
            needle && matching.length > ADMIN_CARDS
              ? `<p class="muted">${matching.length} teams match; the first ${ADMIN_CARDS} are shown.</p>`
              : needle && !matching.length
                ? '<p class="muted">No team matches.</p>'
                : ''
          }</form>`;
        } else {
          shown = all.filter(
            (t) =>
              canSeeTeam(membership.access, t.id) &&
              (!t.hidden || membership.access.assignedTeamIds.has(t.id)),
          );
          // Own teams first, then the teams of their activities.
          shown.sort(
            (a, b) =>
              Number(membership.access.assignedTeamIds.has(b.id)) -
                Number(membership.access.assignedTeamIds.has(a.id)) || a.name.localeCompare(b.name),
          );
        }
        const sessions = shown.length
          ? await opts.store.listSessions(school.id, {
              teamIds: shown.map((t) => t.id),
              from: at.toISOString(),
              to: new Date(at.getTime() + 30 * DAY).toISOString(),
            })
          : [];
        const byTeam = new Map<Id, Session[]>();
        for (const s of sessions.sort((a, b) => a.start.localeCompare(b.start)))
          for (const t of s.teams) {
            const list = byTeam.get(t.id) ?? [];
            list.push(s);
            byTeam.set(t.id, list);
          }
        const cards: string[] = [];
        const templates = opts.templates?.(school.id);
        const ctx = createProjectionContext({
          school: await loadSchoolInfo(opts.store, school.id),
          ...(templates ? { templates } : {}),
        });
        // A coach's own teams first, then those their activities (a manager's: and departments) add: with both,
        // headings say which is which (a demo coach of 7 teams sees 35 cards).
        const ownCount = membership
          ? shown.filter((t) => membership.access.assignedTeamIds.has(t.id)).length
          : 0;
        const grouped = !isAdmin && ownCount > 0 && ownCount < shown.length;
        for (const [i, t] of shown.entries()) {
          if (grouped && i === 0) cards.push(`<h2 class="group">Your teams (${ownCount})</h2>`);
          if (grouped && i === ownCount)
            cards.push(
              `<h2 class="group">Other teams of your ${membership?.access.role === 'manager' ? 'activities and departments' : 'activities'} (${shown.length - ownCount})</h2>`,
            );
          cards.push(
            await teamCard(
              school.id,
              school.timeZone,
              ctx,
              t,
              byTeam.get(t.id) ?? [],
              membership,
              !membership,
              // Two schools may number their teams alike: the page's anchors stay unique.
              schools.length > 1 ? `team-${school.id}-${t.id}` : `team-${t.id}`,
            ),
          );
        }
        let ownFeed = '';
        if (membership) {
          const issued = await opts.tokens.ensureIfVouched(school.id, 'staff', membership.user.id);
          if (issued?.token)
            ownFeed = `<a class="btn" href="/feeds/${escapeHtml(issued.token)}">My calendar (all my sessions)</a>`;
        }
        const role = membership
          ? { admin: 'administrator', manager: 'manager', staff: 'coach' }[membership.access.role]
          : 'admin token';
        parts.push(
          `<h1>${escapeHtml(school.name)}</h1><p class="muted">Signed in as ${escapeHtml(role)}.${
            isAdmin ? ' <a href="/admin">Admin pages</a>' : ''
          }</p><div class="actions">${ownFeed}</div>${index}${
            cards.join('') ||
            (isAdmin
              ? ''
              : '<div class="card"><p>No teams are assigned to you in the school’s extracurricular system today.</p><p class="muted">Teams come from the “assigned staff” of each team and the activities you have permissions for; ask the sports office if one is missing.</p></div>')
          }`,
        );
      }
      const label = p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email);
      sendPage(res, { title: 'My teams', body: parts.join(''), who: { label, csrf: csrfOf(p) } });
    } catch (err) {
      next(err);
    }
  });

  router.get('/', (_req, res) => {
    res.redirect(303, '/staff');
  });
  return router;
}
