// The staff dashboard at /admin: a search box that finds any calendar (admin-search.ts), then per school the sync
// runs and scheduled jobs, how many calendars it has, and every team's rosters. Admins only.
import express, { type Request, type RequestHandler, type Response } from 'express';
import { clockLine } from '../config/sandbox-clock.ts';
import { absenceReporting } from '../families/absence-state.ts';
import { CalendarSearch } from '../feeds/calendar-search.ts';
import type { FeedTokens } from '../feeds/tokens.ts';
import type { JobStatus, SchoolId, Store, Stored, SyncRun } from '../store/types.ts';
import { describeJob, runTook } from '../sync/job-display.ts';
import { upstreamClockNote } from '../sync/upstream-clock.ts';
import { type HtmlValue, html, type SafeHtml } from '../util/html.ts';
import { adminSearchRoute, searchForm } from './admin-search.ts';
import { sendAdminPage } from './layouts.ts';
import { accessIn, csrfOf, type Principal, principalOf } from './staff-auth.ts';

/** What the dashboard reads of a school's configuration. */
export interface AdminSchool {
  id: SchoolId;
  name: string;
  timeZone: string;
  /** Whether its families may report absences (absent: they may not). */
  families?: { reportAbsences: boolean };
}

export interface AdminRouterOptions {
  store: Pick<Store, 'records' | 'runs' | 'links' | 'readOnly'>;
  config: {
    schools: readonly AdminSchool[];
    publicUrl: string;
    trustProxy?: number | string;
    /** SANDBOX_NOW: said on the page when it moves the clock. */
    sandboxNow?: string | null;
  };
  /** Admits administrators only (StaffAuth.requireAdmin). */
  auth: { requireAdmin: RequestHandler };
  tokens: FeedTokens;
  /** The admins' calendar search; serve's own, which it keeps ready after each pull (else made here). */
  search?: CalendarSearch;
  now?: () => Date;
}

const DAY = 86_400_000;

/** `20 s ago`, `in 20 s`, `3 days ago`, `in 3 days`: the same steps both ways (the future read "in 0 min"). */
function age(iso: string | null, now: Date): string {
  if (!iso) return '—';
  const s = Math.round((now.getTime() - Date.parse(iso)) / 1000);
  const a = Math.abs(s);
  const span =
    a < 90
      ? `${a} s`
      : a < 5400
        ? `${Math.round(a / 60)} min`
        : a < 172_800
          ? `${Math.round(a / 3600)} h`
          : `${Math.round(a / 86_400)} days`;
  return s < 0 ? `in ${span}` : `${span} ago`;
}

interface Row {
  /** The row's class (a run's status colours it). */
  cls?: string;
  cells: HtmlValue[];
}

/** Table rows, each cell labelled by its column (the label shows on a phone, where a row is a block). */
function bodyRows(head: string[], rows: (Row | HtmlValue[])[]): SafeHtml[] {
  return rows.map((r) => {
    const row: Row = Array.isArray(r) ? { cells: r } : (r as Row);
    const cells = row.cells.map(
      (c, i) => html`<td${head[i] !== undefined && html` data-label="${head[i]}"`}>${c}</td>`,
    );
    return html`<tr${row.cls && html` class="${row.cls}"`}>${cells}</tr>`;
  });
}

/**
 * A table that reads as rows on a desktop and as one block per record on a phone (labels from the header).
 * `earlier`: more rows in the same table (so their columns line up with the first ones: a second table sized its
 * columns by its own text), shown by the "Earlier …" row just above them (staff.css: a closed details.more in
 * the table hides its tbody.earlier).
 */
function stackTable(
  head: string[],
  rows: (Row | HtmlValue[])[],
  empty: string,
  compact = false,
  earlier?: { label: string; rows: Row[] },
): SafeHtml {
  const body = rows.length
    ? bodyRows(head, rows)
    : html`<tr><td colspan="${head.length}" class="muted">${empty}</td></tr>`;
  const more = earlier && earlier.rows.length > 0 && earlier;
  // The toggle is a row of the table, just above the rows it opens: below the table, they opened above the place
  // just tapped, out of sight on a phone (an outside tester).
  return html`<table class="${compact ? 'stack compact' : 'stack'}"><thead><tr>${head.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${body}</tbody>${
    more &&
    html`<tbody class="toggle"><tr><td colspan="${head.length}"><details class="more"><summary>${more.label} (${more.rows.length})</summary></details></td></tr></tbody><tbody class="earlier">${bodyRows(head, more.rows)}</tbody>`
  }</table>`;
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
  const took = runTook(run);
  const note = run.warning ?? run.errors.at(-1) ?? '';
  const cells = [
    html`${run.kind}${run.target && html` (${run.target})`}`,
    run.status,
    html`<span title="${run.startedAt}">${age(run.startedAt, now)}</span>`,
    took === 'running' ? '…' : took === 'unknown' ? 'unknown' : `${(took / 1000).toFixed(1)} s`,
    String(counts.changed),
    String(counts.deleted),
    String(counts.skipped),
    String(run.upstreamRequests),
    note.slice(0, 300),
  ];
  return { cls: run.status, cells };
}

function jobCells(job: JobStatus, now: Date): HtmlValue[] {
  const { result, note, lastRunAt } = describeJob(job);
  return [
    job.job,
    result,
    age(result === 'skipped' ? lastRunAt : (job.lastFinishedAt ?? job.lastStartedAt), now),
    age(job.nextRunAt, now),
    note.slice(0, 300),
  ];
}

/**
 * The client address this service sees for the admin's own request, beside the connection's: behind a reverse
 * proxy they differ only when TRUST_PROXY is right, which is what an operator checks here.
 */
function clientAddressLine(req: Request, trustProxy: number | string | undefined): SafeHtml {
  const seen = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const socket = req.socket.remoteAddress ?? 'unknown';
  const setting = trustProxy === undefined ? 'TRUST_PROXY unset' : `TRUST_PROXY=${trustProxy}`;
  return html`<p id="client-address">Your address as this service sees it: <code>${seen}</code> <span class="muted">(connection from ${socket}; ${setting}). Behind a reverse proxy this must be your own address, not the proxy's: see TRUST_PROXY in the README.</span></p>`;
}

type NextSessions = Map<number, { id: number; start: string }>;

/** Per team, the next session that is not cancelled (an attendance sheet's) and the next fixture (a match-day sheet's). */
function nextSessions(upcoming: Stored<'sessions'>[]): { session: NextSessions; fixture: NextSessions } {
  const session: NextSessions = new Map();
  const fixture: NextSessions = new Map();
  for (const s of upcoming)
    for (const t of s.teams) {
      if (s.cancelled) continue;
      if (!session.has(t.id)) session.set(t.id, { id: s.id, start: s.start });
      if (s.scored && !fixture.has(t.id)) fixture.set(t.id, { id: s.id, start: s.start });
    }
  return { session, fixture };
}

/** What the dashboard's parts read: the store, the feed tokens and the public URL without its trailing slash. */
interface DashboardDeps {
  store: AdminRouterOptions['store'];
  tokens: FeedTokens;
  base: string;
  search: CalendarSearch;
}

/** 1,139: a count as a person reads it. */
const count = (n: number) => n.toLocaleString('en-GB');

/**
 * How many calendars the school has, and the one search box that finds any of them (admin-search.ts): a school's
 * 262 team, activity and staff calendars as cards made this page 60,000 px tall at 390 px, and its 1,139
 * children's calendars could not be reached at all.
 */
async function feedsPart(deps: DashboardDeps, school: AdminSchool): Promise<SafeHtml> {
  const counts = await deps.search.counts(school.id);
  const untrusted = deps.tokens.untrustedBecause(school.id);
  return html`<div class="card" id="feeds-${school.id}"><h3>Calendars</h3><p>${count(counts.student)} children, ${count(counts.team)} teams, ${count(counts.activity)} activities and ${count(counts.staff)} members of staff have a calendar each. Find any of them with the search above: by name, id or a pasted link; each answer has its subscribe page and “New link…” (for a link that reached someone it should not: it asks before it acts). <code>rostercal feeds list</code> prints them all.</p>${
    untrusted && html`<p class="warn">No feed is served: ${untrusted}</p>`
  }</div>`;
}

/** Every listed team's roster, and the sheets of its next session and next fixture. */
async function rostersPart(deps: DashboardDeps, school: AdminSchool, at: Date): Promise<SafeHtml> {
  const [teams, upcoming] = await Promise.all([
    deps.store.records.list(school.id, 'teams'),
    deps.store.records.listSessions(school.id, {
      from: at.toISOString(),
      to: new Date(at.getTime() + 30 * DAY).toISOString(),
    }),
  ]);
  const next = nextSessions(upcoming);
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
  const q = (teamId: number, template: string, session?: number) =>
    `${deps.base}/rosters/teams/${teamId}.pdf?template=${template}&school=${encodeURIComponent(school.id)}${session ? `&session=${session}` : ''}`;
  const rows = teams
    .filter((t) => !t.hidden)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((t) => {
      const session = next.session.get(t.id);
      const fixture = next.fixture.get(t.id);
      const sheets = html`<a class="btn" href="${q(t.id, 'team-roster')}">Roster</a>${
        session &&
        html`<a class="btn" href="${q(t.id, 'attendance-sheet', session.id)}">Attendance · ${day(session.start)}</a>`
      }${fixture && html`<a class="btn" href="${q(t.id, 'match-day-sheet', fixture.id)}">Match-day · ${day(fixture.start)}</a>`}`;
      return [
        t.name,
        t.activity.name,
        String(t.students.length),
        html`<div class="actions">${sheets}</div>${!session && html`<span class="muted">no session in 30 days</span>`}`,
      ];
    });
  return html`<details class="card" id="rosters-${school.id}"><summary>Rosters: ${rows.length} teams</summary>${stackTable(['team', 'activity', 'students', 'PDF'], rows, 'no teams yet')}</details>`;
}

/** Runs listed open; the rest of the ten read are folded. */
const RUNS_SHOWN = 3;

async function schoolSection(deps: DashboardDeps, school: AdminSchool, at: Date): Promise<SafeHtml> {
  const [runs, jobs, reporting, clock] = await Promise.all([
    deps.store.runs.listRuns(school.id, { limit: 10 }),
    deps.store.runs.listJobStatus(school.id),
    absenceReporting(deps.store, school),
    upstreamClockNote(deps.store, school.id),
  ]);
  const families = html`<p id="absences-${school.id}"${!reporting.on && html` class="muted"`}><strong>Families reporting absences:</strong> ${
    reporting.on
      ? 'on: child and family calendar pages offer “Can’t make it?” (a pre-explained absence written upstream; each act is in the audit log).'
      : reporting.why
  }</p>`;
  const jobTable = stackTable(
    ['job', 'status', 'last run', 'next run', 'note'],
    jobs.map((j) => jobCells(j, at)),
    'no scheduled jobs have run yet',
    true,
  );
  // The newest runs say how the school stands; the older ones are a tap away (on a phone, ten runs were 2,000 px).
  const runHead = [
    'run',
    'status',
    'started',
    'took',
    'added/changed',
    'deleted',
    'skipped',
    'upstream requests',
    'note',
  ];
  const cells = runs.map((r) => runCells(r, at));
  const runTable = stackTable(runHead, cells.slice(0, RUNS_SHOWN), 'no runs yet', true, {
    label: 'Earlier runs',
    rows: cells.slice(RUNS_SHOWN),
  });
  return html`<section><h2 class="group">${school.name} <span class="muted">(${school.id}, times in ${school.timeZone})</span></h2>
<div class="card">${families}${clock && html`<p id="upstream-clock-${school.id}"><strong>Upstream clock:</strong> ${clock.line}.</p>`}<h3>Scheduled jobs</h3>${jobTable}<h3>Recent runs</h3>${runTable}</div>
${await feedsPart(deps, school)}
${await rostersPart(deps, school, at)}</section>`;
}

export function createAdminRouter(opts: AdminRouterOptions): express.Router {
  const router = express.Router();
  const now = opts.now ?? (() => new Date());
  const deps: DashboardDeps = {
    store: opts.store,
    tokens: opts.tokens,
    base: opts.config.publicUrl.replace(/\/+$/, ''),
    search: opts.search ?? new CalendarSearch(opts.store),
  };

  router.get(
    '/admin/search',
    opts.auth.requireAdmin,
    adminSearchRoute({
      store: opts.store,
      search: deps.search,
      schools: opts.config.schools,
      tokens: opts.tokens,
      base: deps.base,
    }),
  );
  router.get('/admin', opts.auth.requireAdmin, async (req: Request, res: Response, next) => {
    try {
      const at = now();
      const clock = clockLine(opts.config.sandboxNow);
      const p = principalOf(res) as Principal;
      const sections: SafeHtml[] = [];
      // An administrator of one school sees that school only.
      for (const school of opts.config.schools.filter((s) => accessIn(p, s.id) === 'all'))
        sections.push(await schoolSection(deps, school, at));
      sendAdminPage(res, {
        title: 'Admin',
        who: {
          label: p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email),
          csrf: csrfOf(p),
        },
        wide: true,
        body: html`<h1>Admin</h1>${searchForm('')}<div class="card">${clientAddressLine(req, opts.config.trustProxy)}${clock && html`<p id="service-clock"><strong>${clock}</strong></p>`}</div>${sections}`,
      });
    } catch (err) {
      next(err);
    }
  });
  return router;
}
