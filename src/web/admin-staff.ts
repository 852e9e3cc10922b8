// The admins' pages about people: the audit log (GET /admin/audit, newest first, filter by person, action, team
// and template; times in the school's zone, teams by name), signed-in staff (GET /admin/sessions; POST
// /admin/sessions/end ends every session of a person on every replica) and a feed's new link (GET
// /admin/feeds/rotate asks, naming the calendar and what happens to families; POST rotates and sends to GET
// /admin/feeds/rotated, the new page to send them). Every form is CSRF-checked.
import express, { type Request, type Response } from 'express';
import type { PushTargetConfig } from '../config/push-targets.ts';
import { type FeedDef, getFeedDef } from '../feeds/feed-defs.ts';
import type { FeedTokens } from '../feeds/tokens.ts';
import {
  AlreadyRotatedError,
  FeedTrustError,
  isFeedScope,
  RotationFailedError,
  untilEveryServerKnows,
} from '../feeds/tokens.ts';
import {
  ACTION_LABELS,
  actionProblem,
  isAuditAction,
  personProblem,
  teamProblem,
  templateProblem,
} from '../identity/audit-filters.ts';
import { type Logger, scrubSecrets } from '../log.ts';
import { closeLiveGoogleCalendars, describeClosed, publicTargetsFor } from '../push/live-rotation.ts';
import { templateNames } from '../rosters/template.ts';
import type { AuditQuery, AuditRecord, FeedScope, SchoolId, Store } from '../store/types.ts';
import { html, join, type SafeHtml } from '../util/html.ts';
import { zoneAbbreviation } from '../util/time-zone.ts';
import { ASSETS } from './assets.ts';
import { sendAdminPage, sendJson, sendProblem } from './layouts.ts';
import { accessIn, csrfOf, type Principal, principalOf, type StaffAuth } from './staff-auth.ts';

/** A school as the admin pages see it; its push targets tell whether a feed has a live Google calendar. */
type AdminSchool = { id: SchoolId; name: string; timeZone: string; targets?: readonly PushTargetConfig[] };

export interface AdminStaffOptions {
  store: Pick<Store, 'records' | 'links' | 'push' | 'access'>;
  auth: StaffAuth;
  tokens: FeedTokens;
  schools: readonly AdminSchool[];
  /** Where families reach the service: the new link an admin sends them is absolute. */
  publicUrl: string;
  /** The school's own roster templates, beside the shipped ones: the audit's template filter offers both. */
  templatesDir?: string | null;
  now?: () => Date;
  /** Where a step after a rotation that failed without undoing it is told (closing a live calendar, say). */
  logger?: Pick<Logger, 'warn'>;
  /**
   * A rotation replaced these targets' live Google calendars (serve pushes them now: the old calendar is deleted
   * and the new one filled without waiting for the next pull or scheduled push). Called after the answer is sent.
   */
  onLiveRotated?: (schoolId: SchoolId, targetIds: string[]) => void;
}

/** `Fri 27 Nov 2026, 19:31 AEDT`: the school's wall clock, as `rostercal audit` prints it. */
function schoolTime(iso: string, timeZone: string): string {
  const ms = Date.parse(iso);
  const text = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).format(ms);
  return `${text} ${zoneAbbreviation(ms, timeZone)}`;
}

const SCOPE_WORDS: Record<FeedScope, string> = {
  team: 'team',
  student: 'student',
  staff: 'staff member',
  activity: 'activity',
};

/** Who subscribes to a calendar of this scope, for the confirmation page. */
function subscribers(def: FeedDef, students: number | null): string {
  switch (def.scope) {
    case 'team':
      return `the families of the ${students ?? 'team’s'} students of ${def.subject}, and anyone else they shared it with`;
    case 'activity':
      return `the families who follow ${def.subject}, and anyone else they shared it with`;
    case 'student':
      return `${def.subject}’s family, and anyone they shared it with`;
    case 'staff':
      return `${def.subject}, and anyone they shared it with`;
  }
}

function text(v: unknown, max = 200): string {
  return typeof v === 'string' ? v.trim().slice(0, max) : '';
}

const form = express.urlencoded({ extended: false, limit: '4kb' });

function clock(opts: AdminStaffOptions): Date {
  return opts.now?.() ?? new Date();
}

/** The signed-in line of every admin page. */
function who(p: Principal) {
  return { label: p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email), csrf: csrfOf(p) };
}

/** Schools the principal administers: audit and sessions are shown for these only. */
function adminSchools(opts: AdminStaffOptions, p: Principal): AdminSchool[] {
  return opts.schools.filter((s) => accessIn(p, s.id) === 'all');
}

/** A form is acted on only with the session's CSRF token; otherwise the admin is told why, 403. */
function confirmed(opts: AdminStaffOptions, req: Request, res: Response): boolean {
  if (opts.auth.checkCsrf(req, res)) return true;
  sendProblem(res, 403, 'Not confirmed', ['The form was out of date or came from another site.']);
  return false;
}

/** The team filter's choices, by name (an id typed from memory was the old way): every team of the schools. */
async function teamOptions(
  opts: AdminStaffOptions,
  schools: readonly { id: SchoolId; name: string }[],
  selected: string,
): Promise<SafeHtml[]> {
  const options = [html`<option value="">any team</option>`];
  for (const school of schools) {
    const teams = (await opts.store.records.list(school.id, 'teams')).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const t of teams) {
      const label = schools.length > 1 ? `${t.name} (${school.name})` : t.name;
      options.push(
        html`<option value="${t.id}"${String(t.id) === selected && html` selected`}>${label}</option>`,
      );
    }
  }
  return options;
}

/** The students a family's act was about (its detail begins `student <id>:` or `students <id>, <id>:`). */
function familyActChildren(r: AuditRecord): number[] {
  if (!r.action.startsWith('absence-') || r.schoolId === null) return [];
  const m = /^students? (\d+(?:, \d+)*):/.exec(r.detail ?? '');
  return m ? m[1]!.split(', ').map(Number) : [];
}

/**
 * The children family acts were about, by name as staff know them (first and last name, as the staff's roster
 * pages say it): the audit is staff-only, and "student 5197" tells an office nothing. Families never see this.
 */
async function childNames(opts: AdminStaffOptions, records: AuditRecord[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const r of records)
    for (const id of familyActChildren(r)) {
      const key = `${r.schoolId}|${id}`;
      if (names.has(key)) continue;
      const s = await opts.store.records.get(r.schoolId!, 'students', id);
      names.set(key, s ? `${s.firstName} ${s.lastName}`.trim() : 'no longer listed');
    }
  return names;
}

/** The audit records as table rows: times in their school's zone, schools and teams by name. */
async function auditRows(
  opts: AdminStaffOptions,
  records: AuditRecord[],
  schools: readonly { id: SchoolId; name: string; timeZone: string }[],
): Promise<SafeHtml[]> {
  const byId = new Map(schools.map((s) => [s.id, s]));
  const manySchools = opts.schools.length > 1;
  // A record of no school (a refused sign-in) reads in the only school's zone, else UTC, as the CLI does.
  const fallback = opts.schools.length === 1 ? opts.schools[0]!.timeZone : 'UTC';
  const teamNames = new Map<string, string>();
  for (const id of new Set(records.flatMap((r) => (r.schoolId && r.teamId !== null ? [r.schoolId] : []))))
    for (const t of await opts.store.records.list(id, 'teams')) teamNames.set(`${id}|${t.id}`, t.name);
  const children = await childNames(opts, records);
  return records.map((r) => {
    const school = r.schoolId ? byId.get(r.schoolId) : undefined;
    const team =
      r.teamId !== null &&
      html`${teamNames.get(`${r.schoolId}|${r.teamId}`) ?? 'a team no longer listed'} <span class="muted">(${r.teamId})</span>`;
    const kids = familyActChildren(r).map(
      (id) => html`child ${children.get(`${r.schoolId}|${id}`)} <span class="muted">(student ${id})</span>`,
    );
    const about = [
      ...kids,
      team,
      r.sessionId !== null && html`session ${r.sessionId}`,
      r.template && html`<span class="nowrap">${r.template}</span>`,
    ].filter((x) => x);
    return html`<tr><td data-label="when"><span class="nowrap">${schoolTime(r.at, school?.timeZone ?? fallback)}</span></td><td data-label="what"><span class="nowrap">${r.action}</span></td><td data-label="who">${r.actor}${r.clientAddress && html`<br><span class="muted">from ${r.clientAddress}</span>`}</td>${
      manySchools && html`<td data-label="school">${school?.name ?? r.schoolId ?? ''}</td>`
    }<td data-label="about">${join(about, ' · ')}</td><td data-label="detail" class="detail">${r.detail ?? ''}</td></tr>`;
  });
}

function actionOptions(selected: string): SafeHtml[] {
  return [
    html`<option value="">anything</option>`,
    ...Object.entries(ACTION_LABELS).map(
      ([action, label]) =>
        html`<option value="${action}"${action === selected && html` selected`}>${label} (${action})</option>`,
    ),
  ];
}

interface AuditFilters {
  person: string;
  teamText: string;
  template: string;
  actionText: string;
}

/**
 * What is wrong with the filters, for the page to say above the form (identity/audit-filters.ts): a value that
 * can match nothing would show "nothing recorded", read as "nobody did anything".
 */
async function filterProblems(
  opts: AdminStaffOptions,
  schools: readonly SchoolId[],
  f: AuditFilters,
  templates: readonly string[],
): Promise<Partial<Record<keyof AuditFilters, string>>> {
  const mine = new Set(schools);
  const visible = (r: AuditRecord) => r.schoolId === null || mine.has(r.schoolId);
  const found: Partial<Record<keyof AuditFilters, string | null>> = {};
  if (f.actionText && actionProblem(f.actionText))
    found.actionText = `“${f.actionText}” is not an action the audit log records: choose one under What happened.`;
  if (f.person) found.person = await personProblem(opts.store, schools, f.person, visible);
  if (f.teamText && !/^\d+$/.test(f.teamText))
    found.teamText = `“${f.teamText}” is not a team id: choose the team by name under Team.`;
  else if (f.teamText) found.teamText = await teamProblem(opts.store, schools, Number(f.teamText), visible);
  if (f.template) found.template = await templateProblem(opts.store, templates, f.template, visible);
  return Object.fromEntries(Object.entries(found).filter(([, v]) => v)) as Partial<
    Record<keyof AuditFilters, string>
  >;
}

/** The template filter's choices: every template rostercal has, and the one asked for if the log names it. */
function templateOptions(names: readonly string[], selected: string, known: boolean): SafeHtml[] {
  const all = known && selected && !names.includes(selected) ? [...names, selected] : names;
  return [
    html`<option value="">any template</option>`,
    ...all.map((n) => html`<option value="${n}"${n === selected && html` selected`}>${n}</option>`),
  ];
}

/** GET /admin/audit: the log, newest first, filtered by person, action, team and template. */
function auditLogRouter(opts: AdminStaffOptions): express.Router {
  const router = express.Router();
  router.get('/admin/audit', opts.auth.requireAdmin, async (req: Request, res: Response, next) => {
    try {
      const p = principalOf(res) as Principal;
      const f: AuditFilters = {
        person: text(req.query.person),
        teamText: text(req.query.team, 15),
        template: text(req.query.template, 100),
        actionText: text(req.query.action, 40),
      };
      const schools = adminSchools(opts, p);
      const templates = templateNames({ dir: opts.templatesDir ?? null });
      const wrong = await filterProblems(
        opts,
        schools.map((s) => s.id),
        f,
        templates,
      );
      const problems = Object.values(wrong);
      const query: AuditQuery = {
        limit: 500,
        ...(isAuditAction(f.actionText) ? { action: f.actionText } : {}),
        ...(f.person ? { actor: f.person } : {}),
        ...(f.teamText ? { teamId: Number(f.teamText) } : {}),
        ...(f.template ? { template: f.template } : {}),
      };
      const mine = new Set(schools.map((s) => s.id));
      // Records without a school (refused sign-ins) are shown to every administrator.
      const records = problems.length
        ? []
        : (await opts.store.access.listAudit(query)).filter(
            (r) => r.schoolId === null || mine.has(r.schoolId),
          );
      if (req.query.format === 'json') {
        res.set('Cache-Control', 'no-store');
        if (problems.length) res.status(400);
        sendJson(res, JSON.stringify(problems.length ? { problems } : { records }));
        return;
      }
      const rows = await auditRows(opts, records, schools);
      // A filter that can match nothing: 400, said above the form, which keeps what was typed.
      // A sentence begins with a capital: the words are the CLI's too, after its "--person: ".
      const said = problems.map((x) => html`<p>${x.charAt(0).toUpperCase()}${x.slice(1)}</p>`);
      const problem =
        problems.length > 0 &&
        html`<div class="card problem" role="alert"><h2>Nothing can match this filter</h2>${said}</div>`;
      const result = problems.length
        ? html``
        : html`<div class="card"><p class="muted">Newest first, in each school’s time; ${records.length} shown (at most 500; <code>rostercal audit --since ISO</code> prints all).</p><table class="stack audit"><thead><tr><th>when</th><th>what</th><th>who</th>${opts.schools.length > 1 && html`<th>school</th>`}<th>about</th><th>detail</th></tr></thead><tbody>${rows.length ? rows : html`<tr><td colspan="6" class="muted">nothing recorded</td></tr>`}</tbody></table></div>`;
      sendAdminPage(res, {
        title: problems.length ? 'Audit log: filter not known' : 'Audit log',
        status: problems.length ? 400 : 200,
        who: who(p),
        body: html`<h1>Audit log</h1>${problem}<form class="card" method="get" action="/admin/audit"><label for="person">Person (e-mail, or “admin token”)</label><input id="person" type="text" name="person" value="${f.person}" autocomplete="off"><label for="team">Team</label><select id="team" name="team">${await teamOptions(opts, schools, f.teamText)}</select><label for="action">What happened</label><select id="action" name="action">${actionOptions(f.actionText)}</select><label for="template">Template</label><select id="template" name="template">${templateOptions(templates, f.template, !wrong.template)}</select><div class="actions"><button class="primary" type="submit">Filter</button> <a class="btn" href="/admin/audit">Clear</a></div></form>
  ${result}`,
        wide: true,
      });
    } catch (err) {
      next(err);
    }
  });
  return router;
}

/** GET /admin/sessions lists who is signed in; POST /admin/sessions/end ends a person's sessions everywhere. */
function staffSessionsRouter(opts: AdminStaffOptions): express.Router {
  const router = express.Router();
  router.get('/admin/sessions', opts.auth.requireAdmin, async (_req: Request, res: Response, next) => {
    try {
      const p = principalOf(res) as Principal;
      const csrf = csrfOf(p) ?? '';
      const live = await opts.store.access.listStaffSessions(clock(opts).toISOString());
      // Sessions span schools: the only school's zone, else UTC (each time says which).
      const zone = opts.schools.length === 1 ? opts.schools[0]!.timeZone : 'UTC';
      const rows = live.map(
        (s) =>
          html`<tr><td data-label="who">${s.displayName ?? ''}<br><span class="muted">${s.email}</span></td><td data-label="signed in">${schoolTime(s.createdAt, zone)}</td><td data-label="last seen">${schoolTime(s.lastSeenAt, zone)}</td><td data-label="client">${s.clientAddress ?? ''}</td><td><form method="post" action="/admin/sessions/end"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="email" value="${s.email}"><button type="submit">End all sessions of this person</button></form></td></tr>`,
      );
      sendAdminPage(res, {
        title: 'Signed-in staff',
        who: who(p),
        body: html`<h1>Signed-in staff</h1><form class="card" method="post" action="/admin/sessions/end"><input type="hidden" name="csrf" value="${csrf}"><label for="email">End every session of (e-mail)</label><input id="email" type="text" name="email" required><div class="actions"><button class="primary" type="submit">End sessions</button></div></form><div class="card"><table class="stack"><thead><tr><th>who</th><th>signed in</th><th>last seen</th><th>client</th><th></th></tr></thead><tbody>${rows.length ? rows : html`<tr><td colspan="5" class="muted">nobody is signed in</td></tr>`}</tbody></table></div>`,
        wide: true,
      });
    } catch (err) {
      next(err);
    }
  });

  router.post('/admin/sessions/end', form, opts.auth.requireAdmin, async (req, res, next) => {
    try {
      if (!confirmed(opts, req, res)) return;
      const email = text((req.body as Record<string, unknown>)?.email).toLowerCase();
      if (!email) return sendProblem(res, 400, 'No address', ['Give the e-mail address of the person.']);
      const ended = await opts.store.access.revokeStaffSessionsOf(email, clock(opts).toISOString());
      await opts.auth.audit(req, res, { action: 'sessions-ended', detail: `${email}: ${ended}` });
      sendAdminPage(res, {
        title: 'Sessions ended',
        who: who(principalOf(res) as Principal),
        body: html`<div class="card"><h1>Sessions ended</h1><p>${ended} session${ended !== 1 && 's'} of ${email} ended on every server. They must sign in again.</p><p><a class="btn" href="/admin/sessions">Back</a></p></div>`,
      });
    } catch (err) {
      next(err);
    }
  });
  return router;
}

/** A feed named by a form or link, with its school. */
interface NamedFeed {
  def: FeedDef;
  school: AdminSchool;
}

/** The feed a rotation form or link names, if the principal administers its school; else null. */
async function feedOf(
  opts: AdminStaffOptions,
  p: Principal,
  input: Record<string, unknown>,
): Promise<NamedFeed | null> {
  const schoolId = text(input.school, 63);
  const scope = text(input.scope, 20);
  const idText = text(input.id, 15);
  const school = opts.schools.find((s) => s.id === schoolId);
  if (!school || !isFeedScope(scope) || !/^\d+$/.test(idText) || accessIn(p, schoolId) !== 'all') return null;
  const def = await getFeedDef(opts.store, schoolId, scope, Number(idText));
  return def ? { def, school } : null;
}

function unknownFeed(res: Response) {
  return sendProblem(
    res,
    404,
    'No such calendar',
    [
      'This school has no such calendar, or it is not one you administer. Its team or person may have been removed upstream.',
    ],
    { href: '/admin', label: 'Admin' },
  );
}

function feedFields(def: FeedDef): SafeHtml {
  return html`<input type="hidden" name="school" value="${def.schoolId}"><input type="hidden" name="scope" value="${def.scope}"><input type="hidden" name="id" value="${def.scopeId}">`;
}

/** A page about one feed named by the query (school, scope, id), for its school's administrators. */
function feedPage(
  opts: AdminStaffOptions,
  render: (res: Response, p: Principal, found: NamedFeed) => Promise<void>,
): express.RequestHandler[] {
  return [
    opts.auth.requireAdmin,
    async (req, res, next) => {
      try {
        const p = principalOf(res) as Principal;
        const found = await feedOf(opts, p, req.query as Record<string, unknown>);
        if (!found) return unknownFeed(res);
        await render(res, p, found);
      } catch (err) {
        next(err);
      }
    },
  ];
}

/** Asks first: a new link stops the old one for every family at once. */
function askToRotate(opts: AdminStaffOptions) {
  return async (res: Response, p: Principal, { def, school }: NamedFeed): Promise<void> => {
    const team =
      def.scope === 'team' ? await opts.store.records.get(def.schoolId, 'teams', def.scopeId) : null;
    const csrf = csrfOf(p) ?? '';
    // The link this form stops: sent again later (the browser's Back), it does not stop the one made since.
    const version = await opts.tokens.currentVersion(def.schoolId, def.scope, def.scopeId);
    sendAdminPage(res, {
      title: `New link for ${def.calendarName}?`,
      who: who(p),
      body: html`<div class="card"><h1>Make a new link for “${def.calendarName}”?</h1>
<p>The ${SCOPE_WORDS[def.scope]} calendar of <strong>${def.subject}</strong> (${school.name}).</p>
<h2>What happens to families</h2>
<ul>
<li><strong>The current link stops working at once</strong> for everyone subscribed: ${subscribers(def, team?.students.length ?? null)}.</li>
<li>Their calendar apps keep the events they already have, but those stop changing: <strong>cancellations, new sessions and changed times no longer reach them</strong>. Nothing tells them; their calendar just goes quiet.</li>
<li>Family links (one link for several children) that include this calendar stop showing it.</li>
<li>You get a new page to send them: they open it, subscribe again, and can remove the old calendar.</li>${
        publicTargetsFor(school.targets ?? [], def.scope, def.scopeId).length > 0 &&
        html`
<li><strong>Families using the live Google calendar must add it again</strong> from the new page: the old one stops being public at once and is deleted after the next push.</li>`
      }
</ul>
<p>Do this when the link has reached someone who should not have it. Recorded in the audit log.</p>
<form method="post" action="/admin/feeds/rotate"><input type="hidden" name="csrf" value="${csrf}">${feedFields(def)}<input type="hidden" name="version" value="${version}"><div class="actions"><button class="primary" type="submit">Stop the old link and make a new one</button><a class="btn" href="/admin">Cancel</a></div></form></div>`,
    });
  };
}

/** POST /admin/feeds/rotate: the new link, the live Google calendars closed, the audit record; then the new page. */
function rotateFeed(opts: AdminStaffOptions): express.RequestHandler {
  return async (req, res, next) => {
    try {
      if (!confirmed(opts, req, res)) return;
      const p = principalOf(res) as Principal;
      const body = (req.body ?? {}) as Record<string, unknown>;
      const found = await feedOf(opts, p, body);
      if (!found) return unknownFeed(res);
      const { def } = found;
      const from = versionAsked(body.version);
      if (from === null)
        return sendProblem(res, 400, 'This cannot be made', ['The form named no valid link version.']);
      const teamId = def.scope === 'team' ? def.scopeId : null;
      // All or nothing: the audit record commits with the rotation (a call inside the transaction joins it).
      await opts.tokens.rotate(def.schoolId, def.scope, def.scopeId, {
        ...(from !== undefined ? { from } : {}),
        alsoInTransaction: (_tx, version) =>
          opts.auth.audit(req, res, {
            action: 'feed-rotate',
            schoolId: def.schoolId,
            teamId,
            detail: `${def.scope} ${def.scopeId} (${def.subject}) → version ${version}`,
          }),
      });
      // It has taken effect: what follows may fail without undoing it, so it cannot turn the answer into a failure.
      const closed = await afterRotation(opts, () =>
        closeLiveGoogleCalendars(
          opts.store,
          { id: def.schoolId, targets: opts.schools.find((s) => s.id === def.schoolId)?.targets ?? [] },
          def.scope,
          def.scopeId,
        ),
      );
      const live = describeClosed(closed ?? []);
      // This server forgot the old token at once; the others within the bound: wait for them before saying so.
      await untilEveryServerKnows();
      if (live)
        await afterRotation(opts, () =>
          opts.auth.audit(req, res, {
            action: 'feed-rotate',
            schoolId: def.schoolId,
            teamId,
            detail: `${def.scope} ${def.scopeId} (${def.subject}): ${live}`,
          }),
        );
      // Post/redirect/get: reloading the result must not rotate the link just sent to families.
      const q = new URLSearchParams({ school: def.schoolId, scope: def.scope, id: String(def.scopeId) });
      res.redirect(303, `/admin/feeds/rotated?${q}`);
      if (closed?.length) opts.onLiveRotated?.(def.schoolId, [...new Set(closed.map((c) => c.target))]);
    } catch (err) {
      if (err instanceof FeedTrustError) return sendProblem(res, 503, 'Cannot rotate now', [err.message]);
      if (err instanceof AlreadyRotatedError) return alreadyRotated(req, res, err);
      if (err instanceof RotationFailedError) return rotationFailed(res, err);
      next(err);
    }
  };
}

/** The version a rotation form stops: undefined when none was sent (a script), null when it is not a version. */
function versionAsked(v: unknown): number | undefined | null {
  if (v === undefined) return undefined;
  return typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : null;
}

/** The form stopped a link replaced since: nothing was changed; the current link is one click away. */
function alreadyRotated(req: Request, res: Response, err: AlreadyRotatedError): void {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const q = new URLSearchParams({
    school: String(body.school),
    scope: String(body.scope),
    id: String(body.id),
  });
  sendAdminPage(res, {
    title: 'Already replaced',
    status: 409,
    body: html`<div class="card" role="alert"><h1>This link was already replaced</h1>
<p>It is at version ${err.current} now. Nothing was changed: the newest link, which you may already have sent to families, still works.</p>
<div class="actions"><a class="btn primary" href="${`/admin/feeds/rotated?${q}`}">Show the current link</a><a class="btn" href="/admin">Back to admin</a></div></div>`,
  });
}

/** A step after a rotation took effect: its failure is logged (the rotation stands), and its result null. */
async function afterRotation<T>(opts: AdminStaffOptions, step: () => Promise<T>): Promise<T | null> {
  try {
    return await step();
  } catch (err) {
    opts.logger?.warn({ err: scrubSecrets((err as Error).message) }, 'a step after a feed rotation failed');
    return null;
  }
}

/** The rotation did not take effect (tokens.ts): the old link works on, and the page says so. */
function rotationFailed(res: Response, err: RotationFailedError) {
  return sendProblem(
    res,
    503,
    err.unconfirmed ? 'The link may not have changed' : 'The link was not changed',
    [
      err.unconfirmed
        ? 'The database failed while the new link was being made, and could not be asked afterwards whether it was. Open this calendar on the admin page again in a minute to see which link is current.'
        : 'The database could not record the new link, so nothing changed: the link families have still works. Try again once the database can be written to.',
      `The database said: ${scrubSecrets((err.cause as Error | undefined)?.message ?? err.message)}`,
    ],
  );
}

/** A Copy button for a field, shown by the page's script (copy.js), with where it says "Copied". */
function copyButton(field: string, what: string): SafeHtml {
  return html`<button type="button" data-copy="${field}" hidden>Copy<span class="vh"> ${what}</span></button><span id="${`${field}-copied`}" class="muted" role="status"></span>`;
}

/** The link to send, and words to send it with. */
function rotatedPage(opts: AdminStaffOptions) {
  const base = opts.publicUrl.replace(/\/+$/, '');
  return async (res: Response, p: Principal, { def, school }: NamedFeed): Promise<void> => {
    const issued = await opts.tokens.ensureIfVouched(def.schoolId, def.scope, def.scopeId);
    if (!issued?.token) return unknownFeed(res);
    // Without a rotation on record the old link still works: telling families to subscribe again would be wrong.
    if (!(await opts.tokens.lastRotation(def.schoolId, def.scope, def.scopeId))) return notRotated(res, def);
    const page = `${base}/feeds/${issued.token}`;
    const message = `The calendar link for ${def.calendarName} has changed. The old one no longer updates, so cancellations and new sessions will not reach you through it.\n\nPlease open ${page} and subscribe again (there is a button for your phone or computer), then remove the old calendar from your calendar app.\n\n${school.name}`;
    const audit = def.scope === 'team' ? `/admin/audit?team=${def.scopeId}` : '/admin/audit';
    sendAdminPage(res, {
      title: `New link for ${def.calendarName}`,
      scripts: [ASSETS.copyScript],
      who: who(p),
      body: html`<div class="card"><h1>New link for “${def.calendarName}”</h1>
<p>The old link has stopped working (version ${issued.record.version} now). Send this page to everyone who subscribed; it has the subscribe buttons and a QR code.</p>
<label for="page">Page to send</label><input id="page" type="text" readonly value="${page}">
<div class="actions">${copyButton('page', 'the page to send')}<a class="btn primary" href="${page}">Open the page</a></div>
<label for="message">A message you can send with it</label><textarea id="message" readonly rows="8">${message}</textarea>
<div class="actions">${copyButton('message', 'the message')}</div>
<p class="muted">The calendar itself, for apps that ask for an address: <code>${`${page}.ics`}</code></p>${
        publicTargetsFor(school.targets ?? [], def.scope, def.scopeId).length > 0 &&
        html`
<p><strong>Families who added the live Google calendar must add it again</strong> from this page: the old one is no longer public and is deleted once the next push${opts.onLiveRotated && ' (started now)'} has filled the new one.</p>`
      }
<p>The new link is recorded in the audit log.</p>
<div class="actions"><a class="btn" href="${audit}">Audit log</a><a class="btn" href="/admin">Back to admin</a></div></div>`,
    });
  };
}

function notRotated(res: Response, def: FeedDef) {
  const q = new URLSearchParams({ school: def.schoolId, scope: def.scope, id: String(def.scopeId) });
  return sendProblem(
    res,
    404,
    'This link was never changed',
    [
      `The link for “${def.calendarName}” has never been replaced: the one families have still works, and they need do nothing.`,
    ],
    { href: `/admin/feeds/rotate?${q}`, label: 'Make a new link' },
  );
}

/** A feed's new link: asked for on its own page, made by the form, then the page to send families. */
function feedRotationRouter(opts: AdminStaffOptions): express.Router {
  const router = express.Router();
  router.get('/admin/feeds/rotate', feedPage(opts, askToRotate(opts)));
  router.post('/admin/feeds/rotate', form, opts.auth.requireAdmin, rotateFeed(opts));
  router.get('/admin/feeds/rotated', feedPage(opts, rotatedPage(opts)));
  return router;
}

export function createAdminStaffRouter(opts: AdminStaffOptions): express.Router {
  const router = express.Router();
  router.use(auditLogRouter(opts), staffSessionsRouter(opts), feedRotationRouter(opts));
  return router;
}
