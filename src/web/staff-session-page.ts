// GET /staff/teams/:teamId/sessions/:sessionId?school=ID: one session on a coach's phone, one tap from /staff. When
// and where (a map link), what the families were told, then the team: who is out and why, who is expected, each
// child's year and, for a fixture, jersey, position and captain. For the roles the school allows the medical sheet
// (auth.sensitiveRoles, a school that keeps the data), the ✚ mark, the conditions and the guardians' phones as tel:
// links. The printable sheets are one tap further. Read from the store alone (rosters/ loads what the sheets
// print), audited like a roster download before a byte is sent (a HEAD is no view); a session that does not exist, and one of a team
// the person may not see, get the same answer.
import express, { type Request, type Response } from 'express';
import { whyOut } from '../calendar/absences.ts';
import { sessionDate, sessionDay } from '../calendar/times.ts';
import type { Guardian, Id, TeamMember } from '../domain/types.ts';
import { canSeeTeam, type SensitiveRole } from '../identity/roles.ts';
import { loadRosterData, type RosterData, RosterError } from '../rosters/index.ts';
import { conditionLines, MEDICAL_MARK } from '../rosters/medical.ts';
import type { Store } from '../store/types.ts';
import { html, type SafeHtml } from '../util/html.ts';
import { sendPage, sendProblem } from './layouts.ts';
import { pastDaysOf, type RosterSchool, seesSensitive } from './rosters.ts';
import { csrfOf, type Principal, principalOf, type StaffAuth } from './staff-auth.ts';
import { clockOf, rosterHref } from './staff-page.ts';

export interface SessionPageOptions {
  store: Pick<Store, 'records' | 'feeds'>;
  auth: StaffAuth;
  schools: readonly (RosterSchool & { timeZone: string })[];
  sensitiveRoles: readonly SensitiveRole[];
  sensitiveTemplate?: string;
  now?: () => Date;
}

/** The one answer for a session that does not exist and one the person may not see: it says nothing of which. */
function notFound(res: Response): void {
  sendProblem(
    res,
    404,
    'No such session among your teams',
    [
      'This address names no session of a team you may see. It may have been deleted or moved in the school’s system; your teams’ sessions are on “My teams”.',
    ],
    { href: '/staff', label: 'My teams' },
  );
}

/** A session of the person's own team that ended longer ago than the school keeps current (rosters/data.ts). */
function tooOld(res: Response, days: number): void {
  sendProblem(
    res,
    404,
    'This session is too far in the past',
    [
      `This session ended more than ${days} days ago. Staff pages and sheets open a session until ${days} days after it ends; older ones are no longer kept up to date from the school’s system.`,
    ],
    { href: '/staff', label: 'My teams' },
  );
}

const fullName = (m: Pick<TeamMember, 'firstName' | 'lastName'>) => `${m.firstName} ${m.lastName}`.trim();

/** A map of the place: its coordinates where the school's system has them, otherwise its name and address. */
function mapHref(loc: NonNullable<RosterData['session']>['location'], address: string | null): string | null {
  if (!loc) return null;
  const at =
    loc.latitude !== null && loc.longitude !== null
      ? `${loc.latitude},${loc.longitude}`
      : [loc.name, address].filter(Boolean).join(', ');
  return at ? `https://www.openstreetmap.org/search?query=${encodeURIComponent(at)}` : null;
}

/** A guardian's phone as a tel: link (its digits and a leading +), with the number as written. */
function guardianLine(g: Guardian): SafeHtml {
  const who = html`${g.name}${g.relationship && html` (${g.relationship})`}`;
  const dial = g.phone?.replace(/[^\d+]/g, '') ?? '';
  return html`<li>${who}${dial && html` <a class="btn" href="${`tel:${dial}`}">${g.phone}</a>`}</li>`;
}

interface ChildRow {
  member: TeamMember;
  why: string;
}

function childItem(
  row: ChildRow,
  data: RosterData,
  show: { fixture: boolean; sensitive: boolean },
): SafeHtml {
  const m = row.member;
  const medical = show.sensitive && m.medicalConditions.length > 0;
  const position =
    m.positionId === null ? '' : (data.team.positions.find((p) => p.id === m.positionId)?.name ?? '');
  const facts = [
    m.yearGroup?.name ?? '',
    ...(show.fixture
      ? [m.jerseyNumber ? `#${m.jerseyNumber}` : '', position, m.captain ? 'Captain' : '']
      : []),
  ].filter(Boolean);
  const status = row.why
    ? html`<div class="status out">Out · ${row.why.replace(/\n/g, '; ')}</div>`
    : html`<div class="status">Expected</div>`;
  const details =
    show.sensitive &&
    (m.medicalConditions.length > 0 || m.guardians.length > 0) &&
    html`${medical && html`<div class="medical">${conditionLines(m.medicalConditions).join('; ')}</div>`}${
      // Folded: seventeen children's guardians would fill six screens; the call is one tap away.
      m.guardians.length > 0 &&
      html`<details class="contacts"><summary>Call a guardian (${m.guardians.length})</summary><ul class="out">${m.guardians.map(guardianLine)}</ul></details>`
    }`;
  return html`<li data-student="${m.studentId}"><strong>${fullName(m)}</strong>${
    medical &&
    html` <span class="medical" title="medical condition" aria-label="medical condition">${MEDICAL_MARK}</span>`
  }${facts.length > 0 && html` <span class="muted">· ${facts.join(' · ')}</span>`}${status}${details}</li>`;
}

/** The session's facts: when, where (and a map), the opponent, what the families were told. */
function sessionFacts(data: RosterData): SafeHtml {
  const s = data.session!;
  const d = data.decision!;
  const loc = s.location;
  const address = loc?.address || data.locationAddress || null;
  const map = mapHref(loc, address);
  const rows: [string, SafeHtml | string][] = [
    // The time range on one line: at 390 px "15:30–" broke from "17:00".
    [
      'When',
      html`${sessionDay(s.start, data.school.timeZone, 'en-GB', 'long')} · <span class="nowrap">${d.time}</span>`,
    ],
  ];
  if (loc)
    rows.push([
      'Where',
      html`${loc.name}${address && html`<br>${address}`}${map && html`<br><a class="btn" href="${map}">Map</a>`}`,
    ]);
  if (s.opponent) rows.push(['Opponent', s.opponent]);
  for (const f of data.toldFamilies ?? []) rows.push([f.label, f.value]);
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

function sessionBody(data: RosterData, now: Date, sensitive: boolean, sensitiveTemplate: string): SafeHtml {
  const s = data.session!;
  const d = data.decision!;
  const schoolId = data.school.id;
  const opts = {
    sessionIsToday:
      sessionDate(s.start, data.school.timeZone) === sessionDate(now.toISOString(), data.school.timeZone),
    time: clockOf(data.school.timeZone),
  };
  const rows: ChildRow[] = data.team.students
    .map((member) => ({ member, why: whyOut(member, data.absences.get(member.studentId) ?? [], s, opts) }))
    .sort(
      (a, b) =>
        a.member.lastName.localeCompare(b.member.lastName) ||
        fullName(a.member).localeCompare(fullName(b.member)),
    );
  const show = { fixture: d.fixture, sensitive };
  const out = rows.filter((r) => r.why);
  const expected = rows.filter((r) => !r.why);
  const list = (title: string, id: string, of: ChildRow[]) =>
    html`<section class="card" id="${id}"><h2>${title} (${of.length})</h2>${
      of.length > 0
        ? html`<ol class="roster">${of.map((r) => childItem(r, data, show))}</ol>`
        : html`<p class="muted">Nobody.</p>`
    }</section>`;
  const sheets = html`<a class="btn primary" href="${rosterHref(schoolId, data.team.id, 'attendance-sheet', s.id)}">Attendance sheet</a>${
    s.scored &&
    html`<a class="btn" href="${rosterHref(schoolId, data.team.id, 'match-day-sheet', s.id)}">Match-day sheet</a>`
  }${sensitive && html`<a class="btn" href="${rosterHref(schoolId, data.team.id, sensitiveTemplate, s.id)}">Medical &amp; contacts</a>`}`;
  const legend =
    sensitive &&
    html`<p class="muted">${MEDICAL_MARK} medical condition. Confidential: medical and contact details are shown to the roles the school allows, and every view is recorded.</p>`;
  return html`<h1${d.cancelled && html` class="cancelled"`}>${d.title}</h1><p class="muted">${data.team.name} · ${data.team.activity.name}</p>${
    d.cancelled &&
    html`<p class="card warn" role="alert">Cancelled.${d.cancellationReason && html` ${d.cancellationReason}`}</p>`
  }<section class="card">${sessionFacts(data)}</section>${list('Out', 'out', out)}${list('Expected', 'expected', expected)}${legend}<section class="card" id="sheets"><h2>Sheets</h2><div class="actions">${sheets}<a class="btn" href="/staff">Back to My teams</a></div></section>`;
}

/** Which school's session: `?school=`, or the only one. */
function schoolOf(opts: SessionPageOptions, req: Request) {
  const asked = typeof req.query.school === 'string' ? req.query.school : null;
  if (asked === null) return opts.schools.length === 1 ? opts.schools[0]! : null;
  return opts.schools.find((s) => s.id === asked) ?? null;
}

/** May the principal see this team's roster at all (the roster routes' rule)? */
function maySee(p: Principal, schoolId: string, teamId: Id): boolean {
  if (p.kind === 'admin-token') return true;
  const m = p.memberships.find((x) => x.school.id === schoolId);
  return m !== undefined && canSeeTeam(m.access, teamId);
}

function sessionPage(opts: SessionPageOptions) {
  const now = opts.now ?? (() => new Date());
  const sensitiveTemplate = opts.sensitiveTemplate ?? 'medical-and-guardian-contacts';
  return async (req: Request, res: Response, next: express.NextFunction) => {
    try {
      const p = principalOf(res) as Principal;
      const school = schoolOf(opts, req);
      const ids = [req.params.teamId, req.params.sessionId].map((v) =>
        typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : null,
      );
      const [teamId, sessionId] = ids as [number | null, number | null];
      const audit = { schoolId: school?.id ?? null, teamId, sessionId, template: 'session-page' };
      // Decided before anything is read: a refused request learns nothing of the team or the session.
      if (!school || teamId === null || sessionId === null || !maySee(p, school.id, teamId)) {
        await opts.auth.audit(req, res, {
          action: 'roster-refused',
          ...audit,
          detail: 'session page: not found or not theirs',
        });
        return notFound(res);
      }
      let data: RosterData;
      try {
        data = await loadRosterData(
          opts.store,
          { name: 'session-page', session: 'required' },
          {
            schoolId: school.id,
            teamId,
            sessionId,
            now: now(),
            templates: () => school.eventTemplates,
            pastDays: pastDaysOf(school),
          },
        );
      } catch (err) {
        if (!(err instanceof RosterError)) throw err;
        await opts.auth.audit(req, res, {
          action: 'roster-refused',
          ...audit,
          detail: `session page: ${err.code}`,
        });
        // Only of a team the person may see (decided above): saying that the session is too old tells nothing new.
        if (err.code === 'session-too-old') return tooOld(res, pastDaysOf(school));
        return notFound(res);
      }
      const sensitive = school.rosters.sensitive && seesSensitive(p, school.id, teamId, opts.sensitiveRoles);
      // Audited before a byte is sent, as a roster is: who saw this team's roster, and whether with medical data.
      await opts.auth.auditView(req, res, {
        action: sensitive ? 'session-medical-contacts' : 'session-roster',
        ...audit,
      });
      const label = p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email);
      sendPage(res, {
        title: data.decision!.title,
        body: sessionBody(data, now(), sensitive, sensitiveTemplate),
        who: { label, csrf: csrfOf(p) },
      });
    } catch (err) {
      next(err);
    }
  };
}

export function createSessionPageRouter(opts: SessionPageOptions): express.Router {
  const router = express.Router();
  router.get('/staff/teams/:teamId/sessions/:sessionId', opts.auth.requireStaff, sessionPage(opts));
  return router;
}
