// The admins' pages about people: the audit log (GET /admin/audit, newest first, filter by person, team and
// template), signed-in staff (GET /admin/sessions; POST /admin/sessions/end ends every session of a person on
// every replica) and feed rotation (POST /admin/feeds/rotate). Every form is CSRF-checked.
import express, { type Request, type Response } from 'express';
import type { FeedTokens } from '../feeds/tokens.ts';
import { isFeedScope } from '../feeds/tokens.ts';
import type { AuditQuery, SchoolId, Store } from '../store/types.ts';
import { accessIn, csrfOf, type Principal, principalOf, type StaffAuth } from './staff-auth.ts';
import { escapeHtml, sendPage, sendProblem } from './staff-html.ts';

export interface AdminStaffOptions {
  store: Store;
  auth: StaffAuth;
  tokens: FeedTokens;
  schools: readonly { id: SchoolId; name: string }[];
  now?: () => Date;
}

const NAV = [
  { href: '/staff', label: 'My teams' },
  { href: '/admin', label: 'Admin' },
  { href: '/admin/audit', label: 'Audit' },
  { href: '/admin/sessions', label: 'Sessions' },
];

function text(v: unknown, max = 200): string {
  return typeof v === 'string' ? v.trim().slice(0, max) : '';
}

export function createAdminStaffRouter(opts: AdminStaffOptions): express.Router {
  const router = express.Router();
  const now = opts.now ?? (() => new Date());
  const form = express.urlencoded({ extended: false, limit: '4kb' });
  const who = (p: Principal) => ({
    label: p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email),
    csrf: csrfOf(p),
  });
  /** Schools the principal administers: audit and sessions are shown for these only. */
  const adminSchools = (p: Principal) => opts.schools.filter((s) => accessIn(p, s.id) === 'all');

  router.get('/admin/audit', opts.auth.requireAdmin, async (req: Request, res: Response, next) => {
    try {
      const p = principalOf(res) as Principal;
      const person = text(req.query.person);
      const teamText = text(req.query.team, 15);
      const template = text(req.query.template, 100);
      const query: AuditQuery = { limit: 500 };
      if (person) query.actor = person;
      if (teamText && !/^\d+$/.test(teamText))
        return sendProblem(
          res,
          400,
          'Team id must be a number',
          [
            `“${teamText}” is not a team id: the ids are on each team’s rows in the log and in rostercal feeds list.`,
          ],
          { href: '/admin/audit', label: 'Audit log' },
        );
      if (teamText) query.teamId = Number(teamText);
      if (template) query.template = template;
      const mine = new Set(adminSchools(p).map((s) => s.id));
      // Records without a school (refused sign-ins) are shown to every administrator.
      const records = (await opts.store.listAudit(query)).filter(
        (r) => r.schoolId === null || mine.has(r.schoolId),
      );
      if (req.query.format === 'json') {
        res.set('Cache-Control', 'no-store').json({ records });
        return;
      }
      const rows = records
        .map(
          (r) =>
            `<tr><td>${escapeHtml(r.at.replace('T', ' ').slice(0, 19))}</td><td>${escapeHtml(r.action)}</td><td>${escapeHtml(r.actor)}</td><td>${escapeHtml(r.schoolId ?? '')}</td><td>${r.teamId ?? ''}</td><td>${r.sessionId ?? ''}</td><td>${escapeHtml(r.template ?? '')}</td><td>${escapeHtml(r.clientAddress ?? '')}</td><td>${escapeHtml(r.detail ?? '')}</td></tr>`,
        )
        .join('');
      sendPage(res, {
        title: 'Audit log',
        nav: NAV,
        who: who(p),
        body: `<h1>Audit log</h1><form class="card" method="get" action="/admin/audit"><label for="person">Person (e-mail, or “admin token”)</label><input id="person" type="text" name="person" value="${escapeHtml(person)}"><label for="team">Team id</label><input id="team" type="text" inputmode="numeric" name="team" value="${escapeHtml(teamText)}"><label for="template">Template</label><input id="template" type="text" name="template" value="${escapeHtml(template)}"><div class="actions"><button class="primary" type="submit">Filter</button> <a class="btn" href="/admin/audit">Clear</a></div></form>
<div class="card scroll"><p class="muted">Newest first; ${records.length} shown (at most 500; <code>rostercal audit --since ISO</code> prints all).</p><table><tr><th>when (UTC)</th><th>what</th><th>who</th><th>school</th><th>team</th><th>session</th><th>template</th><th>client</th><th>detail</th></tr>${rows || '<tr><td colspan="9" class="muted">nothing recorded</td></tr>'}</table></div>`,
      });
    } catch (err) {
      next(err);
    }
  });

  router.get('/admin/sessions', opts.auth.requireAdmin, async (_req: Request, res: Response, next) => {
    try {
      const p = principalOf(res) as Principal;
      const csrf = escapeHtml(csrfOf(p) ?? '');
      const live = await opts.store.listStaffSessions(now().toISOString());
      const rows = live
        .map(
          (s) =>
            `<tr><td>${escapeHtml(s.displayName ?? '')}<br><span class="muted">${escapeHtml(s.email)}</span></td><td>${escapeHtml(s.createdAt.slice(0, 16).replace('T', ' '))}</td><td>${escapeHtml(s.lastSeenAt.slice(0, 16).replace('T', ' '))}</td><td>${escapeHtml(s.clientAddress ?? '')}</td><td><form method="post" action="/admin/sessions/end"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="email" value="${escapeHtml(s.email)}"><button type="submit">End all sessions of this person</button></form></td></tr>`,
        )
        .join('');
      sendPage(res, {
        title: 'Signed-in staff',
        nav: NAV,
        who: who(p),
        body: `<h1>Signed-in staff</h1><form class="card" method="post" action="/admin/sessions/end"><input type="hidden" name="csrf" value="${csrf}"><label for="email">End every session of (e-mail)</label><input id="email" type="text" name="email" required><div class="actions"><button class="primary" type="submit">End sessions</button></div></form><div class="card scroll"><table><tr><th>who</th><th>signed in (UTC)</th><th>last seen</th><th>client</th><th></th></tr>${rows || '<tr><td colspan="5" class="muted">nobody is signed in</td></tr>'}</table></div>`,
      });
    } catch (err) {
      next(err);
    }
  });

  /** A form is acted on only with the session's CSRF token; otherwise the admin is told why, 403. */
  const confirmed = (req: Request, res: Response): boolean => {
    if (opts.auth.checkCsrf(req, res)) return true;
    sendProblem(res, 403, 'Not confirmed', ['The form was out of date or came from another site.']);
    return false;
  };

  router.post('/admin/sessions/end', form, opts.auth.requireAdmin, async (req, res, next) => {
    try {
      if (!confirmed(req, res)) return;
      const email = text((req.body as Record<string, unknown>)?.email).toLowerCase();
      if (!email) return sendProblem(res, 400, 'No address', ['Give the e-mail address of the person.']);
      const ended = await opts.store.revokeStaffSessionsOf(email, now().toISOString());
      await opts.auth.audit(req, res, { action: 'sessions-ended', detail: `${email}: ${ended}` });
      sendPage(res, {
        title: 'Sessions ended',
        nav: NAV,
        who: who(principalOf(res) as Principal),
        body: `<div class="card"><h1>Sessions ended</h1><p>${ended} session${ended === 1 ? '' : 's'} of ${escapeHtml(email)} ended on every server. They must sign in again.</p><p><a class="btn" href="/admin/sessions">Back</a></p></div>`,
      });
    } catch (err) {
      next(err);
    }
  });

  router.post('/admin/feeds/rotate', form, opts.auth.requireAdmin, async (req, res, next) => {
    try {
      if (!confirmed(req, res)) return;
      const body = (req.body ?? {}) as Record<string, unknown>;
      const schoolId = text(body.school, 63);
      const scope = text(body.scope, 20);
      const idText = text(body.id, 15);
      const p = principalOf(res) as Principal;
      if (!isFeedScope(scope) || !/^\d+$/.test(idText) || accessIn(p, schoolId) !== 'all')
        return sendProblem(res, 400, 'Cannot rotate', ['Unknown school, scope or id.']);
      const issued = await opts.tokens.rotate(schoolId, scope, Number(idText));
      await opts.auth.audit(req, res, {
        action: 'feed-rotate',
        schoolId,
        teamId: scope === 'team' ? Number(idText) : null,
        detail: `${scope} ${idText} → version ${issued.record.version}`,
      });
      sendPage(res, {
        title: 'Feed rotated',
        nav: NAV,
        who: who(p),
        body: `<div class="card"><h1>New feed address</h1><p>The old address of ${escapeHtml(scope)} ${escapeHtml(idText)} has stopped working. Send the new one to the people who subscribe:</p><p><a href="/feeds/${escapeHtml(issued.token ?? '')}">subscribe page</a></p><p><a class="btn" href="/admin">Back</a></p></div>`,
      });
    } catch (err) {
      next(err);
    }
  });

  return router;
}
