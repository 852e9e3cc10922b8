// One search box for every calendar (issue 44): GET /admin/search?q=… answers with the few calendars a name, an id
// or a pasted feed or family URL names (feeds/calendar-search.ts), each with its subscribe page and "New link…"
// (the same confirmation page for a child's calendar as for a team's). Admins only, their own schools only.
import type { Request, RequestHandler, Response } from 'express';
import type { CalendarSearch } from '../feeds/calendar-search.ts';
import type { FeedDef } from '../feeds/feed-defs.ts';
import type { FeedTokens } from '../feeds/tokens.ts';
import type { SchoolId, Store } from '../store/types.ts';
import { html, type SafeHtml } from '../util/html.ts';
import { sendAdminPage } from './layouts.ts';
import { accessIn, csrfOf, type Principal, principalOf } from './staff-auth.ts';

const SCOPE_LABEL = {
  team: 'team',
  student: 'student',
  staff: 'staff member',
  activity: 'activity',
} as const;

/**
 * A calendar's two actions. Each link's accessible name says which calendar (a list of them must not read as
 * "New link…" over and over); "New link…" opens a page that says what rotating does and asks: never one tap.
 */
export function feedActions(def: FeedDef, page: string | null): SafeHtml {
  const rotate = `/admin/feeds/rotate?${new URLSearchParams({ school: def.schoolId, scope: def.scope, id: String(def.scopeId) })}`;
  const which = html`<span class="vh"> for ${def.calendarName}</span>`;
  const subscribe = page
    ? html`<a class="btn" href="${page}">Subscribe page${which}</a>`
    : html`<span class="muted">issued with another secret: make a new link</span>`;
  return html`<div class="actions">${subscribe}<a class="btn" href="${rotate}">New link…${which}</a></div>`;
}

/** The search form, as /admin and the results page show it. */
export function searchForm(query: string): SafeHtml {
  return html`<form class="card search" method="get" action="/admin/search" role="search"><label for="q">Find a calendar: a child’s, team’s, activity’s or staff member’s name, an id, or a pasted calendar or family link</label><div class="row"><input id="q" type="search" name="q" value="${query}" autocomplete="off" spellcheck="false"><button class="primary" type="submit">Search</button></div></form>`;
}

/** Subscribe pages of the hits; null where no URL can be given (no rotation record vouches for the secret). */
async function pagesOf(tokens: FeedTokens, base: string, defs: FeedDef[]): Promise<(string | null)[]> {
  const pages: (string | null)[] = [];
  // One by one: a few hits, where the school's every token (13,700 in a district) would be read to list them all.
  for (const d of defs) {
    const issued = await tokens.ensureIfVouched(d.schoolId, d.scope, d.scopeId);
    pages.push(issued?.token ? `${base}/feeds/${issued.token}` : null);
  }
  return pages;
}

/**
 * What tells children of one name apart, per student hit ("hill:5197" → "Year 9 · U14 Netball A, Chess"): their year
 * and their teams. Admins only reach this page, and an admin sees every team of the school.
 */
async function studentDetails(store: Pick<Store, 'records'>, defs: FeedDef[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const bySchool = new Map<SchoolId, FeedDef[]>();
  for (const d of defs)
    if (d.scope === 'student') bySchool.set(d.schoolId, [...(bySchool.get(d.schoolId) ?? []), d]);
  for (const [schoolId, students] of bySchool) {
    const [teams, years] = await Promise.all([
      store.records.list(schoolId, 'teams'),
      store.records.list(schoolId, 'yearGroups'),
    ]);
    const yearName = new Map(years.map((y) => [y.id, y.name]));
    for (const d of students) {
      const student = await store.records.get(schoolId, 'students', d.scopeId);
      const year = student?.yearGroupId == null ? null : (yearName.get(student.yearGroupId) ?? null);
      const own = teams.filter((t) => t.students.some((m) => m.studentId === d.scopeId)).map((t) => t.name);
      out.set(
        `${schoolId}:${d.scopeId}`,
        [year, own.length ? own.join(', ') : 'no team'].filter(Boolean).join(' · '),
      );
    }
  }
  return out;
}

export function adminSearchRoute(opts: {
  store: Pick<Store, 'records'>;
  search: CalendarSearch;
  schools: readonly { id: SchoolId; name: string }[];
  tokens: FeedTokens;
  base: string;
}): RequestHandler {
  return async (req: Request, res: Response, next) => {
    try {
      const p = principalOf(res) as Principal;
      const query = typeof req.query.q === 'string' ? req.query.q.slice(0, 500) : '';
      const schools = opts.schools.filter((s) => accessIn(p, s.id) === 'all');
      const started = performance.now();
      const answer = await opts.search.search(schools, query);
      const ms = performance.now() - started;
      const pages = await pagesOf(
        opts.tokens,
        opts.base,
        answer.hits.map((h) => h.def),
      );
      const details = await studentDetails(
        opts.store,
        answer.hits.map((h) => h.def),
      );
      const many = schools.length > 1;
      const items = answer.hits.map((h, i) => {
        const school = many
          ? ` · ${schools.find((s) => s.id === h.def.schoolId)?.name ?? h.def.schoolId}`
          : '';
        const detail = details.get(`${h.def.schoolId}:${h.def.scopeId}`);
        return html`<li><strong>${h.def.subject}</strong> <span class="tag">${SCOPE_LABEL[h.def.scope]}</span><span class="muted">${school}</span>${detail && html`<br><span class="muted">${detail}</span>`}${h.why && html`<br><span class="muted">${h.why}</span>`}${feedActions(h.def, pages[i] ?? null)}</li>`;
      });
      const summary = !query
        ? ''
        : answer.hits.length
          ? `${answer.hits.length}${answer.more ? ` of ${answer.hits.length + answer.more}` : ''} calendar${answer.hits.length === 1 ? '' : 's'}${answer.more ? ': say more to narrow it' : ''}`
          : 'No calendar matches.';
      res.setHeader('Server-Timing', `search;dur=${ms.toFixed(1)}`);
      sendAdminPage(res, {
        title: query ? `“${query.slice(0, 60)}” · Find a calendar` : 'Find a calendar',
        who: {
          label: p.kind === 'admin-token' ? 'Admin token' : (p.displayName ?? p.email),
          csrf: csrfOf(p),
        },
        body: html`<h1>Find a calendar</h1>${searchForm(query)}${
          query &&
          html`<div class="card" id="results"><p role="status">${summary}</p>${answer.notes.map((n) => html`<p class="warn">${n}</p>`)}${
            items.length > 0 && html`<ul class="hits">${items}</ul>`
          }</div>`
        }`,
      });
    } catch (err) {
      next(err);
    }
  };
}
