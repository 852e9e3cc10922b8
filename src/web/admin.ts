// The staff dashboard at /admin: per school, the sync runs and scheduled jobs, the team, activity and staff feeds
// (each linking to its landing page with the subscribe buttons and QR code), and every team's rosters.
// Staff only (the shared AdminAuth); student feeds are many and personal, so the page counts them and points to
// `rostercal feeds list` instead of listing them.
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Config } from '../config.ts';
import { listFeedDefs } from '../feeds/catalog.ts';
import type { FeedTokens } from '../feeds/tokens.ts';
import type { JobStatus, Store, SyncRun } from '../store/types.ts';
import { describeJob } from '../sync/job-display.ts';
import { escapeHtml } from './landing.ts';
import { accessIn, csrfOf, type Principal, principalOf } from './staff-auth.ts';

export interface AdminRouterOptions {
  store: Store;
  config: Pick<Config, 'schools' | 'publicUrl' | 'trustProxy'>;
  /** Admits administrators only (StaffAuth.requireAdmin). */
  auth: { requireAdmin: RequestHandler };
  tokens: FeedTokens;
  now?: () => Date;
}

const ADMIN_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";
const DAY = 86_400_000;

function age(iso: string | null, now: Date): string {
  if (!iso) return '—';
  const s = Math.round((now.getTime() - Date.parse(iso)) / 1000);
  if (s < 0) return `in ${Math.round(-s / 60)} min`;
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 172_800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} days ago`;
}

function runRow(run: SyncRun, now: Date): string {
  const counts = Object.values(run.counts).reduce(
    (t, c) => ({
      changed: t.changed + c.added + c.changed + (c.created ?? 0) + (c.updated ?? 0),
      deleted: t.deleted + c.deleted,
      skipped: t.skipped + c.skipped + (c.failed ?? 0),
    }),
    { changed: 0, deleted: 0, skipped: 0 },
  );
  const ms = run.finishedAt ? Date.parse(run.finishedAt) - Date.parse(run.startedAt) : null;
  const note = run.warning ?? run.errors.at(-1) ?? '';
  return `<tr class="${escapeHtml(run.status)}"><td>${escapeHtml(run.kind)}${run.target ? ` (${escapeHtml(run.target)})` : ''}</td><td>${escapeHtml(run.status)}</td><td title="${escapeHtml(run.startedAt)}">${age(run.startedAt, now)}</td><td>${ms === null ? '…' : `${(ms / 1000).toFixed(1)} s`}</td><td>${counts.changed}</td><td>${counts.deleted}</td><td>${counts.skipped}</td><td>${run.upstreamRequests}</td><td>${escapeHtml(note.slice(0, 200))}</td></tr>`;
}

function jobRow(job: JobStatus, now: Date): string {
  const { result, note } = describeJob(job);
  return `<tr><td>${escapeHtml(job.job)}</td><td>${escapeHtml(result)}</td><td>${age(job.lastFinishedAt ?? job.lastStartedAt, now)}</td><td>${age(job.nextRunAt, now)}</td><td>${escapeHtml(note.slice(0, 200))}</td></tr>`;
}

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1b1b1f}
h1{font-size:1.5rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}table{border-collapse:collapse;width:100%;margin:.5rem 0}
td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #eee;vertical-align:top}tr.failed td{color:#a00}
tr.suspicious td{color:#a60}a{color:#0b57d0}.muted{color:#666}form{display:inline}`;

/**
 * The client address this service sees for the admin's own request, beside the connection's: behind a reverse
 * proxy they differ only when TRUST_PROXY is right, which is what an operator checks here.
 */
function clientAddressLine(req: Request, trustProxy: number | string | undefined): string {
  const seen = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const socket = req.socket.remoteAddress ?? 'unknown';
  const setting = trustProxy === undefined ? 'TRUST_PROXY unset' : `TRUST_PROXY=${trustProxy}`;
  return `<p id="client-address">Your address as this service sees it: <code>${escapeHtml(seen)}</code> <span class="muted">(connection from ${escapeHtml(socket)}; ${escapeHtml(setting)}). Behind a reverse proxy this must be your own address, not the proxy's: see TRUST_PROXY in the README.</span></p>`;
}

export function createAdminRouter(opts: AdminRouterOptions): express.Router {
  const router = express.Router();
  const now = opts.now ?? (() => new Date());
  const base = opts.config.publicUrl.replace(/\/+$/, '');

  router.get('/admin', opts.auth.requireAdmin, async (req: Request, res: Response, next) => {
    try {
      const at = now();
      const parts: string[] = [];
      const p = principalOf(res) as Principal;
      const csrf = escapeHtml(csrfOf(p) ?? '');
      // An administrator of one school sees that school only.
      for (const school of opts.config.schools.filter((s) => accessIn(p, s.id) === 'all')) {
        const [runs, jobs, defs, teams] = await Promise.all([
          opts.store.listRuns(school.id, { limit: 10 }),
          opts.store.listJobStatus(school.id),
          listFeedDefs(opts.store, school.id),
          opts.store.list(school.id, 'teams'),
        ]);
        const upcoming = await opts.store.listSessions(school.id, {
          from: at.toISOString(),
          to: new Date(at.getTime() + 30 * DAY).toISOString(),
        });
        // The session an attendance sheet is for: the next one that is not cancelled.
        const nextSession = new Map<number, { id: number; fixture: boolean }>();
        for (const s of upcoming)
          for (const t of s.teams)
            if (!s.cancelled && !nextSession.has(t.id))
              nextSession.set(t.id, { id: s.id, fixture: s.scored });
        const nextFixture = new Map<number, number>();
        for (const s of upcoming)
          if (s.scored && !s.cancelled)
            for (const t of s.teams) if (!nextFixture.has(t.id)) nextFixture.set(t.id, s.id);

        const feedRows: string[] = [];
        const listed = defs.filter((d) => d.scope !== 'student');
        const issuedAll = await opts.tokens.ensureAll(school.id, listed);
        for (const [i, def] of listed.entries()) {
          const issued = issuedAll[i]!;
          const link = issued.token
            ? `<a href="${escapeHtml(`${base}/feeds/${issued.token}`)}">subscribe page</a>`
            : '<span class="muted">issued with another secret: rotate it</span>';
          const rotate = `<form method="post" action="/admin/feeds/rotate"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="school" value="${escapeHtml(school.id)}"><input type="hidden" name="scope" value="${escapeHtml(def.scope)}"><input type="hidden" name="id" value="${def.scopeId}"><button type="submit">rotate</button></form>`;
          feedRows.push(
            `<tr><td>${escapeHtml(def.scope)}</td><td>${escapeHtml(def.subject)}</td><td>${link}</td><td>${rotate}</td></tr>`,
          );
        }
        const students = defs.filter((d) => d.scope === 'student').length;
        const q = (teamId: number, template: string, session?: number) =>
          escapeHtml(
            `${base}/rosters/teams/${teamId}.pdf?template=${template}&school=${encodeURIComponent(school.id)}${session ? `&session=${session}` : ''}`,
          );
        const rosterRows = teams
          .filter((t) => !t.hidden)
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((t) => {
            const session = nextSession.get(t.id);
            const fixture = nextFixture.get(t.id);
            return `<tr><td>${escapeHtml(t.name)}</td><td>${escapeHtml(t.activity.name)}</td><td>${t.students.length}</td><td><a href="${q(t.id, 'team-roster')}">roster</a></td><td>${session ? `<a href="${q(t.id, 'attendance-sheet', session.id)}">attendance (next session)</a>` : '<span class="muted">no session in 30 days</span>'}</td><td>${fixture ? `<a href="${q(t.id, 'match-day-sheet', fixture)}">match-day sheet</a>` : '<span class="muted">no fixture in 30 days</span>'}</td></tr>`;
          });
        parts.push(`<section><h2>${escapeHtml(school.name)} <span class="muted">(${escapeHtml(school.id)}, ${escapeHtml(school.timeZone)})</span></h2>
<h3>Sync</h3><table><tr><th>job</th><th>status</th><th>last run</th><th>next run</th><th>note</th></tr>${jobs.map((j) => jobRow(j, at)).join('') || '<tr><td colspan="5" class="muted">no scheduled jobs have run yet</td></tr>'}</table>
<table><tr><th>run</th><th>status</th><th>started</th><th>took</th><th>added/changed</th><th>deleted</th><th>skipped</th><th>upstream requests</th><th>note</th></tr>${runs.map((r) => runRow(r, at)).join('') || '<tr><td colspan="9" class="muted">no runs yet</td></tr>'}</table>
<h3>Feeds</h3><p class="muted">${students} student feeds exist as well; <code>rostercal feeds list</code> prints them. A leaked URL: <code>rostercal feeds rotate SCOPE ID</code>.</p>
<table><tr><th>scope</th><th>name</th><th></th><th>new URL (the old one stops at once)</th></tr>${feedRows.join('')}</table>
<h3>Rosters</h3><table><tr><th>team</th><th>activity</th><th>students</th><th colspan="3">PDF</th></tr>${rosterRows.join('')}</table></section>`);
      }
      res.set('Cache-Control', 'no-store');
      res.set('Content-Security-Policy', ADMIN_CSP);
      res
        .type('html')
        .send(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>rostercal admin</title><style>${STYLE}</style></head><body><h1>rostercal</h1><p><a href="/staff">My teams</a> · <a href="/admin/audit">Audit log</a> · <a href="/admin/sessions">Signed-in staff</a></p>${clientAddressLine(req, opts.config.trustProxy)}<form method="post" action="/auth/logout"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out</button></form>${parts.join('')}</body></html>`,
        );
    } catch (err) {
      next(err);
    }
  });
  return router;
}
