// The staff dashboard at /admin: per school, the sync runs and scheduled jobs, the team, activity and staff feeds
// (each linking to its landing page with the subscribe buttons and QR code), and every team's rosters.
// Staff only (the shared AdminAuth); student feeds are many and personal, so the page counts them and points to
// `rostercal feeds list` instead of listing them.
import express, { type Request, type RequestHandler, type Response } from 'express';
import { absenceReporting } from '../families/absence-state.ts';
import { listFeedDefs } from '../feeds/feed-defs.ts';
import { type FeedTokens, FeedTrustError } from '../feeds/tokens.ts';
import type { JobStatus, SchoolId, Store, SyncRun } from '../store/types.ts';
import { describeJob } from '../sync/job-display.ts';
import { accessIn, csrfOf, type Principal, principalOf } from './staff-auth.ts';
import { ADMIN_NAV, escapeHtml, sendPage } from './staff-html.ts';

/** What the dashboard reads of a school's configuration. */
export interface AdminSchool {
  id: SchoolId;
  name: string;
  timeZone: string;
  /** Whether its families may report absences (absent: they may not). */
  families?: { reportAbsences: boolean };
}

export interface AdminRouterOptions {
  store: Store;
  config: {
    schools: readonly AdminSchool[];
    publicUrl: string;
    trustProxy?: number | string;
  };
  /** Admits administrators only (StaffAuth.requireAdmin). */
  auth: { requireAdmin: RequestHandler };
  tokens: FeedTokens;
  now?: () => Date;
}

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

interface Row {
  /** The row's class (a run's status colours it). */
  cls?: string;
  /** Already-escaped HTML per column. */
  cells: string[];
}

/** A table that reads as rows on a desktop and as one block per record on a phone (labels from the header). */
function stackTable(head: string[], rows: (Row | string[])[], empty: string): string {
  const body = rows.length
    ? rows
        .map((r) => {
          const row = Array.isArray(r) ? { cells: r } : r;
          const cells = row.cells
            .map((c, i) => `<td${head[i] ? ` data-label="${escapeHtml(head[i]!)}"` : ''}>${c}</td>`)
            .join('');
          return `<tr${row.cls ? ` class="${escapeHtml(row.cls)}"` : ''}>${cells}</tr>`;
        })
        .join('')
    : `<tr><td colspan="${head.length}" class="muted">${escapeHtml(empty)}</td></tr>`;
  return `<table class="stack"><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`;
}

function runCells(run: SyncRun, now: Date): Row {
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
  const cells = [
    `${escapeHtml(run.kind)}${run.target ? ` (${escapeHtml(run.target)})` : ''}`,
    escapeHtml(run.status),
    `<span title="${escapeHtml(run.startedAt)}">${age(run.startedAt, now)}</span>`,
    ms === null ? '…' : `${(ms / 1000).toFixed(1)} s`,
    String(counts.changed),
    String(counts.deleted),
    String(counts.skipped),
    String(run.upstreamRequests),
    escapeHtml(note.slice(0, 300)),
  ];
  return { cls: run.status, cells };
}

function jobCells(job: JobStatus, now: Date): string[] {
  const { result, note } = describeJob(job);
  return [
    escapeHtml(job.job),
    escapeHtml(result),
    age(job.lastFinishedAt ?? job.lastStartedAt, now),
    age(job.nextRunAt, now),
    escapeHtml(note.slice(0, 300)),
  ];
}

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
      // An administrator of one school sees that school only.
      for (const school of opts.config.schools.filter((s) => accessIn(p, s.id) === 'all')) {
        const [runs, jobs, defs, teams] = await Promise.all([
          opts.store.runs.listRuns(school.id, { limit: 10 }),
          opts.store.runs.listJobStatus(school.id),
          listFeedDefs(opts.store, school.id),
          opts.store.records.list(school.id, 'teams'),
        ]);
        const upcoming = await opts.store.records.listSessions(school.id, {
          from: at.toISOString(),
          to: new Date(at.getTime() + 30 * DAY).toISOString(),
        });
        // The session an attendance sheet is for: the next one that is not cancelled.
        const nextSession = new Map<number, { id: number; start: string }>();
        for (const s of upcoming)
          for (const t of s.teams)
            if (!s.cancelled && !nextSession.has(t.id)) nextSession.set(t.id, { id: s.id, start: s.start });
        const nextFixture = new Map<number, { id: number; start: string }>();
        for (const s of upcoming)
          if (s.scored && !s.cancelled)
            for (const t of s.teams)
              if (!nextFixture.has(t.id)) nextFixture.set(t.id, { id: s.id, start: s.start });
        // With the time: two sessions of one day are told apart.
        const day = (iso: string) =>
          new Intl.DateTimeFormat('en-GB', {
            timeZone: school.timeZone,
            weekday: 'short',
            day: 'numeric',
            month: 'short',
            hour: '2-digit',
            minute: '2-digit',
          }).format(new Date(iso));

        const listed = defs.filter((d) => d.scope !== 'student');
        // No URL is shown while no rotation record vouches for the feed secret (feeds/trust.ts): say why instead.
        let issuedAll: Awaited<ReturnType<FeedTokens['ensureAll']>> = [];
        let untrusted: string | null = null;
        try {
          issuedAll = await opts.tokens.ensureAll(school.id, listed);
        } catch (err) {
          if (!(err instanceof FeedTrustError)) throw err;
          untrusted = err.message;
        }
        const feedRows = (untrusted ? [] : listed).map((def, i) => {
          const issued = issuedAll[i]!;
          const page = issued.token
            ? `<a class="btn" href="${escapeHtml(`${base}/feeds/${issued.token}`)}">Subscribe page</a>`
            : '<span class="muted">issued with another secret: make a new link</span>';
          // A link to a page that says what rotating does and asks to confirm: never one tap.
          const rotate = `<a class="btn" href="/admin/feeds/rotate?${new URLSearchParams({
            school: school.id,
            scope: def.scope,
            id: String(def.scopeId),
          })
            .toString()
            .replace(/&/g, '&amp;')}">New link…</a>`;
          return [
            escapeHtml(def.subject),
            escapeHtml(def.scope),
            `<div class="actions">${page}${rotate}</div>`,
          ];
        });
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
            const sheets = [
              `<a class="btn" href="${q(t.id, 'team-roster')}">Roster</a>`,
              session
                ? `<a class="btn" href="${q(t.id, 'attendance-sheet', session.id)}">Attendance · ${escapeHtml(day(session.start))}</a>`
                : '',
              fixture
                ? `<a class="btn" href="${q(t.id, 'match-day-sheet', fixture.id)}">Match-day · ${escapeHtml(day(fixture.start))}</a>`
                : '',
            ].filter(Boolean);
            return [
              escapeHtml(t.name),
              escapeHtml(t.activity.name),
              String(t.students.length),
              `<div class="actions">${sheets.join('')}</div>${session ? '' : '<span class="muted">no session in 30 days</span>'}`,
            ];
          });
        const reporting = await absenceReporting(opts.store, school);
        const families = `<p id="absences-${escapeHtml(school.id)}"${reporting.on ? '' : ' class="muted"'}><strong>Families reporting absences:</strong> ${
          reporting.on
            ? 'on: child and family calendar pages offer “Can’t make it?” (a pre-explained absence written upstream; each act is in the audit log).'
            : escapeHtml(reporting.why)
        }</p>`;
        parts.push(`<section><h2 class="group">${escapeHtml(school.name)} <span class="muted">(${escapeHtml(school.id)}, times in ${escapeHtml(school.timeZone)})</span></h2>
<div class="card">${families}<h3>Scheduled jobs</h3>${stackTable(
          ['job', 'status', 'last run', 'next run', 'note'],
          jobs.map((j) => jobCells(j, at)),
          'no scheduled jobs have run yet',
        )}<h3>Recent runs</h3>${stackTable(
          [
            'run',
            'status',
            'started',
            'took',
            'added/changed',
            'deleted',
            'skipped',
            'upstream requests',
            'note',
          ],
          runs.map((r) => runCells(r, at)),
          'no runs yet',
        )}</div>
<details class="card" id="feeds-${escapeHtml(school.id)}"><summary>Feeds: ${listed.length} team, activity and staff calendars</summary><p class="muted">${students} student feeds exist as well; <code>rostercal feeds list</code> prints them. “New link…” is for a link that reached someone it should not: it asks before it acts.</p>${stackTable(['name', 'scope', 'links'], feedRows, untrusted ? `No feed is served: ${untrusted}` : 'no feeds yet')}</details>
<details class="card" id="rosters-${escapeHtml(school.id)}"><summary>Rosters: ${rosterRows.length} teams</summary>${stackTable(['team', 'activity', 'students', 'PDF'], rosterRows, 'no teams yet')}</details></section>`);
      }
      sendPage(res, {
        title: 'Admin',
        nav: ADMIN_NAV,
        who: {
          label: p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email),
          csrf: csrfOf(p),
        },
        wide: true,
        body: `<h1>Admin</h1><div class="card">${clientAddressLine(req, opts.config.trustProxy)}</div>${parts.join('')}`,
      });
    } catch (err) {
      next(err);
    }
  });
  return router;
}
